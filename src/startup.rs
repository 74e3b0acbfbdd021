//! Building and running the server: open the store, provision the configuration, start listening, recover,
//! declare ready. [`Application`] is what both the binary and the black-box tests start.

use std::net::TcpListener;
use std::sync::Arc;

use actix::{Arbiter, Supervisor};
use actix_web::dev::ServerHandle;
use actix_web::rt::task::JoinHandle;
use actix_web::{web, App, HttpServer};
use anyhow::Context;
use rand::RngCore;
use switchboard_actors::dialer::sandbox::SandboxDialer;
use switchboard_actors::electronic::sandbox::SandboxElectronic;
use switchboard_actors::orchestration::{Orchestration, Orchestrator, ResumeActive};
use switchboard_actors::scheduler::Scheduler;
use switchboard_actors::webhooks::{WebhookConfig, WebhookDispatcher};
use switchboard_actors::{Clock, Metrics};
use switchboard_storage::seal::KeySource;
use switchboard_storage::{EngineChoice, NodeLease, StorageConfig, Store};

use crate::actor_threads::ActorThreads;
use crate::configuration::{ClockSettings, Settings};
use crate::errors::{json_config, path_config, query_config};
use crate::http_metrics;
use crate::middleware;
use crate::openapi;
use crate::provisioning;
use crate::routes;
use crate::standby::StopAsked;
pub use crate::standby::StoppedStandingBy;
use crate::state::AppState;

/// Seconds a graceful stop lets HTTP requests in flight finish, a standby's forwards included.
pub(crate) const SHUTDOWN_GRACE_SECS: u64 = 10;

/// A running server.
pub struct Application {
    port: u16,
    handle: ServerHandle,
    /// The HTTP server, served from before recovery on.
    served: JoinHandle<std::io::Result<()>>,
    state: web::Data<AppState>,
    /// The threads of the capacity scheduler and the webhook dispatcher, stopped and joined before the
    /// store closes.
    actor_threads: ActorThreads,
    /// On PostgreSQL: the lease under which this node runs requests, released when it stops.
    lease: Option<NodeLease>,
    /// On a node that took over from standing by: the forwards still in flight since the handover.
    forwards: Option<crate::standby::Draining>,
}

impl Application {
    /// Opens the store, provisions the configuration and starts listening. The listener is up (and
    /// `/healthz` answers) before recovery finishes; `/readyz` and the API open once it has.
    pub async fn build(settings: Settings) -> anyhow::Result<Application> {
        Application::build_with(settings, || {}, |_| {}).await
    }

    /// [`Application::build`], running `before_ready` once recovery is done and before `/readyz` opens
    /// (the binary hands back to the system what recovery allocated and freed), and telling `listening`
    /// the port once it serves: a standby node serves (forwarding) long before it is built.
    ///
    /// A node stopped while it stood by ends with [`crate::standby::StoppedStandingBy`].
    pub async fn build_with(
        settings: Settings,
        before_ready: impl FnOnce(),
        listening: impl FnOnce(u16),
    ) -> anyhow::Result<Application> {
        let mut settings = settings;
        let key = crate::encryption::key_source(&settings)?;
        // On PostgreSQL the key is checked first: a node that cannot open the store leaves nothing behind.
        let sealed = match &settings.storage_engine {
            EngineChoice::Postgres { .. } => Some(check_key(&settings, &key).await?),
            EngineChoice::Sled => None,
        };
        if let Some(tls) = &settings.server.tls {
            if let Some(mode) = crate::tls::key_file_readable_by_others(&tls.key_file) {
                tracing::warn!(
                    key_file = %tls.key_file.display(),
                    mode = %format_args!("{mode:o}"),
                    "the TLS private key file can be read by its group or by others: make it readable by \
                     the service's user alone (chmod 600)"
                );
            }
        }
        let data_dir = &settings.server.data_dir;
        switchboard_storage::private_files::create_dir_all(data_dir)
            .with_context(|| format!("cannot create data_dir {}", data_dir.display()))?;
        let mut listening = Some(listening);
        let (store, listener, holding) = match settings.storage_engine.clone() {
            // One node runs requests at a time: the others forward their clients to it, and wait here
            // before they open anything.
            EngineChoice::Postgres { url, ca_file } => {
                // The key was checked before it serves anything, standing by included, as on sled where
                // the store opens before the port is bound: the database was reached and its schema and the
                // key checked, so a node that could never open the store neither forwards, nor waits for
                // the lease, nor takes it.
                let sealed = sealed.expect("checked above");
                let listener = bind(&mut settings)?;
                let told = listening.take().expect("told once");
                let (holding, listener) = crate::standby::serve_until_leased(
                    &settings,
                    listener,
                    (&url, ca_file.as_deref()),
                    (&key, sealed),
                    told,
                )
                .await?;
                // A failed opening drops the lease, which gives it up for a standby to take.
                let store = open_store(&settings, &key, Some(holding.lease.holder()))?;
                (store, listener, Some(holding))
            }
            // An existing store is opened before the port is bound, so that a second server started with
            // the same command is told the data directory is held rather than that the port is taken.
            // A store not made yet is made only once the port is known to be free, so a start that fails
            // on the port leaves no empty keyring and store behind.
            EngineChoice::Sled => {
                if check_key(&settings, &key).await? {
                    let store = open_store(&settings, &key, None)?;
                    (store, bind(&mut settings)?, None)
                } else {
                    let listener = bind(&mut settings)?;
                    (open_store(&settings, &key, None)?, listener, None)
                }
            }
        };
        let settings = Arc::new(settings);
        crate::encryption::log_key_source(&key, &settings);
        for (key, host) in settings.plain_http_links() {
            tracing::warn!(
                key,
                host = %host,
                "patient data would travel over plain http to another machine: use an https URL"
            );
        }
        let clock = match settings.clock {
            ClockSettings::System => Clock::system(),
            // A restart resumes the calendar where it was moved to: it moves only through the admin API,
            // and never back behind what stored requests already record.
            ClockSettings::Manual { start } => {
                let moved = store
                    .manual_clock()
                    .await
                    .context("cannot read the manual clock")?;
                Clock::manual(moved.map_or(start, |moved| moved.max(start)))
            }
        };
        let token_secret = match &settings.server.token_secret {
            Some(secret) => secret.expose().as_bytes().to_vec(),
            None => store
                .token_secret_or_init(|| {
                    let mut bytes = vec![0u8; 32];
                    rand::thread_rng().fill_bytes(&mut bytes);
                    bytes
                })
                .await
                .context("cannot initialise the token secret")?,
        };
        let metrics = Arc::new(Metrics::new(&store));
        let scheduler_thread = Arbiter::new();
        let scheduler = Scheduler::start(
            &scheduler_thread.handle(),
            store.clone(),
            clock.clone(),
            Arc::clone(&metrics),
        );
        // Production calls go to the payer simulator, or to the platform driver whose events reach the
        // same instance through the HTTP layer.
        let (production, voice) = crate::voice::production_dialers(&settings, &store, &metrics)?;
        let webhooks = &settings.webhooks;
        let dispatcher = WebhookDispatcher::new(
            store.clone(),
            clock.clone(),
            WebhookConfig {
                allow_private_targets: webhooks.allow_private_targets,
                attempt_timeout: webhooks.attempt_timeout,
                inline_backoff: webhooks.inline_backoff.clone(),
                round_delays: webhooks.round_delays.clone(),
                per_destination_concurrency: webhooks.per_destination_concurrency,
            },
            Arc::clone(&metrics),
        )
        .context("cannot build the webhook HTTP client")?;
        // Its own thread: the rounds' HTTP work then gets a fair share of the CPU by the OS scheduler while
        // thousands of request actors keep the actor thread's queue long, instead of waiting in that queue
        // behind them (webhooks fell seconds behind completions in a 10,000-request burst).
        let webhook_thread = Arbiter::new();
        let dispatcher =
            Supervisor::start_in_arbiter(&webhook_thread.handle(), move |_| dispatcher);
        let orchestration = Arc::new(Orchestration {
            store: store.clone(),
            clock: clock.clone(),
            sandbox: Arc::new(SandboxDialer::new()),
            production,
            sandbox_electronic: Arc::new(SandboxElectronic),
            production_electronic: crate::electronic::channel(&settings)?,
            seed: settings.simulation.seed,
            time_scale: settings.simulation.time_scale,
            dispatch_paused: settings.dispatch_paused,
            metrics: Arc::clone(&metrics),
            limits: voice.limits.clone(),
            prices: settings.prices,
            learned: Default::default(),
        });
        let (orchestrator, due_work) = Orchestrator::start(orchestration);
        let mut state = AppState::new(
            store,
            clock,
            Arc::clone(&settings),
            token_secret,
            scheduler,
            orchestrator,
            due_work,
            voice,
            dispatcher,
            metrics,
        );
        // The holder checks the addresses standbys prove; a key kept beside the data exists by now.
        if holding.is_some() {
            state.forwarding = crate::encryption::forwarding_key(&key, &settings);
        }
        let state = web::Data::new(state);

        let port = listener.local_addr()?.port();
        let admin_enabled = settings.server.admin_token.is_some();
        let fault_injection = settings.server.fault_injection;
        let app_state = state.clone();
        let document = openapi::render(&openapi::Words::of(&settings.server));
        let document = web::Data::new(routes::ApiDocument(document.into()));
        let tls = settings.server.tls.is_some();
        let server = HttpServer::new(move || {
            App::new()
                .wrap(actix_web::middleware::from_fn(crate::auth::identity_first))
                .wrap_fn(middleware::guard)
                .wrap_fn(http_metrics::record)
                .wrap(middleware::strict_transport_security(tls))
                .app_data(app_state.clone())
                .app_data(document.clone())
                .app_data(json_config())
                .app_data(path_config())
                .app_data(query_config())
                .configure(|cfg| routes::configure(cfg, admin_enabled, fault_injection))
                .default_service(web::to(routes::not_found))
        });
        // Signals are `stop`'s, caught from the node's first moment standing by where it stood by (a stop
        // asked for while it took over is not lost), and both graceful: actix's own handling stops on
        // SIGINT without letting requests finish, and then stops every actix thread of the process, the
        // forwarding server still finishing a handover's forwards included.
        let stop = match &holding {
            Some(holding) => holding.stop.clone(),
            None => StopAsked::listen()?,
        };
        let server = match &settings.server.tls {
            Some(tls) => server.listen_rustls_0_23(listener, (*tls.server_config).clone())?,
            None => server.listen(listener)?,
        }
        .disable_signals()
        .shutdown_timeout(SHUTDOWN_GRACE_SECS)
        .run();
        let handle = server.handle();
        {
            let handle = handle.clone();
            actix_web::rt::spawn(async move {
                stop.wait().await;
                handle.stop(true).await;
            });
        }
        // Served from here on: `/healthz` answers and `/readyz` says 503 while the stored work is recovered;
        // the middleware keeps the API closed until then.
        let served = actix_web::rt::spawn(server);
        if let Err(e) = recover(&state, &settings, before_ready).await {
            handle.stop(false).await;
            let _ = served.await;
            return Err(e);
        }
        tracing::info!(port, "switchboard ready");
        let (lease, forwards) = match holding {
            Some(holding) => (Some(holding.lease), Some(holding.forwards)),
            None => (None, None),
        };
        if let Some(listening) = listening {
            listening(port);
        }
        actix_web::rt::spawn(crate::purge::retention_loop(state.clone()));
        actix_web::rt::spawn(crate::throttle::audit_loop(state.clone()));
        Ok(Application {
            port,
            handle,
            served,
            state,
            actor_threads: ActorThreads::new(vec![
                ("capacity scheduler", scheduler_thread),
                ("webhook", webhook_thread),
            ]),
            lease,
            forwards,
        })
    }

    /// The bound port (useful with `bind = "127.0.0.1:0"`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A handle that stops the server gracefully.
    pub fn handle(&self) -> ServerHandle {
        self.handle.clone()
    }

    /// Shared state, for tests that need to reach below the API.
    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    /// Serves until stopped (SIGINT/SIGTERM or [`ServerHandle::stop`]): in-flight requests finish, the
    /// webhook thread ends (a round cut short is run again at the next start), then the store is flushed
    /// and closed, and the lease given up. A node that took over from standing by then waits for the
    /// forwards it still had in flight from before: they went to the previous holder and need neither the
    /// store nor the lease, which a standby can take meanwhile.
    pub async fn run_until_stopped(mut self) -> anyhow::Result<()> {
        let forwards = self.forwards.take();
        let stopped = self.stop_and_close().await;
        if let Some(forwards) = forwards {
            forwards.finish().await;
        }
        stopped
    }

    async fn stop_and_close(self) -> anyhow::Result<()> {
        self.served
            .await
            .context("the HTTP server's task failed")?
            .context("HTTP server failed")?;
        // Joined, not only stopped: a thread still running would keep its handle on the store, and the
        // store could not be opened again for its recovery snapshot.
        self.actor_threads.stop_and_join();
        // Windows still refusing calls are audited now, with what they counted so far.
        crate::throttle::audit(&self.state, self.state.throttle.take_all());
        self.state
            .store
            .close()
            .context("final flush of the store failed")?;
        if let Some(lease) = self.lease {
            lease.release();
        }
        tracing::info!("switchboard stopped");
        Ok(())
    }
}

/// Binds the listener, before anything hands out links: they are based on the address bound when no
/// `public_url` is declared, as the address other nodes forward to is when no `node_url` is.
fn bind(settings: &mut Settings) -> anyhow::Result<TcpListener> {
    let listener = TcpListener::bind(settings.server.bind)
        .with_context(|| format!("cannot bind {}", settings.server.bind))?;
    let bound = listener.local_addr()?;
    settings.server.settle_public_url(bound);
    if matches!(settings.storage_engine, EngineChoice::Postgres { .. }) {
        settings.server.settle_node_url(bound);
    }
    Ok(listener)
}

/// Whether the master key opens the store the settings name, checked without writing anything:
/// `Ok(false)` while the store has no keyring yet. On PostgreSQL it is the first contact with the database,
/// so an unreachable one, or one of another schema, fails here too.
pub(crate) async fn check_key(settings: &Settings, key: &KeySource) -> anyhow::Result<bool> {
    let (data_dir, engine, key) = (
        settings.server.data_dir.clone(),
        settings.storage_engine.clone(),
        key.clone(),
    );
    let checked = web::block(move || Store::check_key(&data_dir, &key, &engine))
        .await
        .context("the key check's thread failed")?;
    checked.with_context(|| store_place(settings))
}

/// The store the settings name, for errors: the data directory on sled, the database on PostgreSQL.
fn store_place(settings: &Settings) -> String {
    match &settings.storage_engine {
        EngineChoice::Sled => format!(
            "cannot open the store in {}",
            settings.server.data_dir.display()
        ),
        engine => format!("cannot open the store on {engine:?}"),
    }
}

/// Opens the sealed store in `data_dir`. A directory another Switchboard holds gets a message of its own:
/// sled's lock error names a lock file and an OS error, not what the operator should do about it.
/// The store, fenced by the orchestrator lease `leased` names when this node holds one.
fn open_store(settings: &Settings, key: &KeySource, leased: Option<&str>) -> anyhow::Result<Store> {
    let data_dir = &settings.server.data_dir;
    let mut config = StorageConfig::embedded(data_dir)
        .on(settings.storage_engine.clone())
        .key(key.clone())
        .cache_bytes(settings.storage_cache_bytes);
    if let Some(holder) = leased {
        config = config.leased(holder);
    }
    match Store::open(&config) {
        Ok(store) => Ok(store),
        Err(e) if e.is_held_elsewhere() => Err(anyhow::anyhow!(
            "another Switchboard holds the data directory {}: stop it first, or give this server \
             another data_dir",
            data_dir.display()
        )),
        Err(e) => Err(e).with_context(|| store_place(settings)),
    }
}

/// Start-up recovery: provisions the configuration, loads the payer directory, resumes every stored request
/// still running, then opens the API.
async fn recover(
    state: &web::Data<AppState>,
    settings: &Settings,
    before_ready: impl FnOnce(),
) -> anyhow::Result<()> {
    provisioning::provision(&state.store, settings, state.clock.now())
        .await
        .context("cannot provision the configured accounts, schemas and payers")?;
    state
        .reload_directory()
        .await
        .context("cannot load the payer directory")?;
    crate::domain::UsPhone::warm_up();
    let resumed = state
        .orchestrator
        .send(ResumeActive)
        .await
        .context("the orchestrator did not start")?
        .map_err(|e| anyhow::anyhow!("cannot resume stored requests: {e}"))?;
    tracing::info!(resumed, "stored requests resumed");
    before_ready();
    state.mark_ready();
    Ok(())
}
