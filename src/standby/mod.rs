//! A node standing by on a shared PostgreSQL database serves its clients too: it answers reads itself from
//! the database ([`reads`]: a request, lists, schemas, recordings, the console's reads and the token
//! exchange), and forwards every other call and platform event to the node that holds the orchestrator
//! lease, answering 503 `NOT_READY` while no node can be reached (a takeover under way). Once it takes
//! the lease itself it stops serving, closes its store, and the full server takes the same listening
//! socket over: connections made meanwhile wait in its backlog rather than being refused.

mod forward;
mod reads;
mod route;
mod stop;

use std::net::TcpListener;
use std::path::Path;

use actix_web::{web, App, HttpServer};
use anyhow::Context;
use switchboard_storage::seal::KeySource;
use switchboard_storage::NodeLease;

use crate::configuration::Settings;
use crate::errors::{json_config, path_config, query_config, MAX_BODY_BYTES};
use crate::middleware;

pub use route::Route;
pub use stop::{Draining, StopAsked};

/// How long the full server waits, at the handover, for forwards in flight to finish.
const HANDOVER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The node was stopped (SIGTERM, SIGINT) before it took the lease: it opened nothing, so there is nothing
/// to close.
#[derive(Debug, thiserror::Error)]
#[error("stopped while standing by")]
pub struct StoppedStandingBy;

/// What a node that took over from standing by holds: the lease under which it runs requests, the stop
/// signals it listens to from its first moment (which the full server goes on listening to: a stop asked
/// for while it starts must not be lost), and the forwards still under way at the handover, which the
/// node lets finish before it exits.
pub struct Holding {
    pub lease: NodeLease,
    pub stop: StopAsked,
    pub forwards: Draining,
}

/// Serves on `listener`, reads from the database and the rest by forwarding, until this node holds the
/// orchestrator lease of the database at `(url, ca_file)`; `listening` is told the port as soon as the node
/// serves. A database without a keyring yet (`sealed` false) has nothing to read: the node forwards every
/// call until it takes over. Answers the lease and `listener` back, for the full server to take over.
pub async fn serve_until_leased(
    settings: &Settings,
    listener: TcpListener,
    (url, ca_file): (&str, Option<&Path>),
    (key, sealed): (&KeySource, bool),
    listening: impl FnOnce(u16),
) -> anyhow::Result<(Holding, TcpListener)> {
    let stop = StopAsked::listen()?;
    // Proves the addresses of the clients it forwards.
    let forwarding = crate::encryption::forwarding_key(key, settings);
    let route = Route::default();
    let hop = web::Data::new(forward::Hop::new(settings, route.clone(), forwarding)?);
    let reads = match sealed {
        true => match reads::Reads::open(&std::sync::Arc::new(settings.clone()), key).await {
            Ok(Some(reads)) => Some(reads),
            Ok(None) => {
                tracing::info!(
                    "no token secret in the database yet: standing by forwards reads too"
                );
                None
            }
            Err(e) => {
                tracing::warn!(error = format!("{e:#}"), "standing by forwards reads too");
                None
            }
        },
        false => None,
    };
    let read_state = reads.as_ref().map(|reads| reads.state.clone());
    let tls = settings.server.tls.is_some();
    let server = HttpServer::new(move || {
        let read_state = read_state.clone();
        App::new()
            .wrap(actix_web::middleware::from_fn(
                crate::auth::identity_first_on_reads,
            ))
            .wrap_fn(middleware::guard)
            .wrap(middleware::strict_transport_security(tls))
            .app_data(hop.clone())
            // The node that runs requests holds the exact limits; this one only keeps a runaway body out.
            .app_data(web::PayloadConfig::new(4 * MAX_BODY_BYTES))
            .route("/healthz", web::get().to(crate::routes::healthz))
            .route("/readyz", web::get().to(forward::readyz))
            .route("/metrics", web::get().to(forward::metrics))
            .configure(move |cfg| {
                if let Some(state) = read_state {
                    cfg.app_data(state)
                        .app_data(json_config())
                        .app_data(path_config())
                        .app_data(query_config());
                    crate::routes::configure_reads(cfg, forwarding_route);
                }
            })
            .default_service(web::to(forward::forward))
    });
    let port = listener.local_addr()?.port();
    // The forwarding server's copy of the socket closes when it stops accepting; `listener` stays open for
    // the full server at a handover, and is dropped at once on a stop.
    let shared = listener
        .try_clone()
        .context("cannot share the listening socket")?;
    // Signals are `stop`'s. On a stop, forwards still in flight get as long as the full server gives its
    // requests (operator contract section 1).
    let server = match &settings.server.tls {
        Some(tls) => server.listen_rustls_0_23(shared, (*tls.server_config).clone())?,
        None => server.listen(shared)?,
    }
    .disable_signals()
    .shutdown_timeout(crate::startup::SHUTDOWN_GRACE_SECS)
    .run();
    let handle = server.handle();
    let mut served = actix_web::rt::spawn(server);
    listening(port);
    let leased = crate::lease::take(url, ca_file, settings.server.node_url.as_ref(), route);
    let ended = tokio::select! {
        refused = key_refused(settings, key, sealed) => {
            drop(listener);
            handle.stop(true).await;
            let _ = served.await;
            Err(refused)
        }
        lease = leased => {
            // New connections wait in the backlog for the full server. Forwards under way finish against
            // the node that held the lease before, which may be gone: the full server does not wait them
            // out past a short grace, and they drain beside it, the node's exit waiting for them.
            let drained = async {
                handle.stop(true).await;
                (&mut served).await
            };
            let forwards = match tokio::time::timeout(HANDOVER_GRACE, drained).await {
                Ok(_) => Draining::done(),
                Err(_) => {
                    tracing::warn!("forwards still in flight at the handover; the full server starts beside them");
                    Draining::under_way(served)
                }
            };
            Ok((Holding { lease: lease?, stop, forwards }, listener))
        }
        () = stop.wait() => {
            // Refused from now on: a connection the kernel took into the backlog of a socket nobody accepts
            // on any more would only be reset when the process exits, its request perhaps sent.
            drop(listener);
            handle.stop(true).await;
            let _ = served.await;
            Err(StoppedStandingBy.into())
        }
        ended = &mut served => Err(match ended {
            Ok(Ok(())) => anyhow::anyhow!("the forwarding server stopped"),
            Ok(Err(e)) => anyhow::Error::new(e).context("the forwarding server failed"),
            Err(e) => anyhow::anyhow!("the forwarding server's task failed: {e}"),
        }),
    };
    // Its read events written, before the full server opens the store (or the process ends).
    if let Some(reads) = reads {
        reads.close().await;
    }
    ended
}

/// The route that forwards a call to the node that runs requests: what answers the writes of a path whose
/// reads a standby serves.
fn forwarding_route() -> actix_web::Route {
    web::to(forward::forward)
}

/// How often a node standing by on a database that has no keyring yet looks again for the one its first
/// holder makes.
const KEYRING_RECHECK: std::time::Duration = std::time::Duration::from_secs(2);

/// Resolves only when this node's key is found not to open the store: never when it was checked before the
/// node served (`sealed`), else once the database's first holder has made its keyring and it is another
/// key's. Such a node stops rather than take the lease it could never use.
async fn key_refused(settings: &Settings, key: &KeySource, sealed: bool) -> anyhow::Error {
    if !sealed {
        loop {
            tokio::time::sleep(KEYRING_RECHECK).await;
            match crate::startup::check_key(settings, key).await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) if refuses_key(&e) => return e,
                Err(e) => tracing::warn!(
                    error = format!("{e:#}"),
                    "cannot check the master key against the database yet; trying again"
                ),
            }
        }
    }
    std::future::pending().await
}

/// Whether `e` is the store refusing this node's master key (another key's, or none), not the database
/// being out of reach for a moment.
fn refuses_key(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<switchboard_storage::StorageError>(),
        Some(
            switchboard_storage::StorageError::KeyRefused
                | switchboard_storage::StorageError::KeyMissing(_)
        )
    )
}
