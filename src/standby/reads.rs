//! What a standby answers itself: reads, from the shared database, through the full server's own handlers
//! ([`crate::routes::configure_reads`]), on a store opened standing by
//! ([`switchboard_storage::StorageConfig::standby`]): it writes nothing but the audit events of its reads,
//! keeps no account, schema or payer in memory between reads, and runs no work.

use std::sync::Arc;
use std::time::Duration;

use actix_web::rt::task::JoinHandle;
use actix_web::web;
use anyhow::Context;
use switchboard_actors::{Clock, Metrics};
use switchboard_storage::seal::KeySource;
use switchboard_storage::{StorageConfig, Store};

use crate::configuration::{ClockSettings, Settings};
use crate::state::AppState;

/// How often a standby on a manual clock reads where the holder moved it: the bound on how long its
/// clock trails the holder's.
const CLOCK_FOLLOW: Duration = Duration::from_millis(200);

/// The state the read routes are served with, and the loops that run beside them.
pub struct Reads {
    pub state: web::Data<AppState>,
    loops: Vec<JoinHandle<()>>,
}

impl Reads {
    /// Opens the store standing by, once the database has a keyring and a token secret (its first holder
    /// makes both): `None` before, and the standby then forwards every call, reads included.
    pub async fn open(settings: &Arc<Settings>, key: &KeySource) -> anyhow::Result<Option<Reads>> {
        let config = StorageConfig::embedded(&settings.server.data_dir)
            .on(settings.storage_engine.clone())
            .key(key.clone())
            .cache_bytes(settings.storage_cache_bytes)
            .standby();
        let store = web::block(move || Store::open(&config))
            .await
            .context("the standby store's thread failed")?
            .context("cannot open the store to serve reads while standing by")?;
        let read = async {
            Ok::<_, switchboard_storage::StorageError>((
                store.token_secret().await?,
                store.manual_clock().await?,
            ))
        };
        let (secret, moved) = read.await?;
        let secret = match &settings.server.token_secret {
            Some(secret) => Some(secret.expose().as_bytes().to_vec()),
            None => secret,
        };
        let Some(secret) = secret else {
            close(store).await;
            return Ok(None);
        };
        let clock = match settings.clock {
            ClockSettings::System => Clock::system(),
            ClockSettings::Manual { start } => {
                Clock::manual(moved.map_or(start, |moved| moved.max(start)))
            }
        };
        let metrics = Arc::new(Metrics::new(&store));
        let mut state = AppState::standby(store, clock, Arc::clone(settings), secret, metrics);
        // A read another standby forwarded (its view of the lease was stale) proves its client's address.
        state.forwarding = crate::encryption::forwarding_key(key, settings);
        let state = web::Data::new(state);
        let mut loops = vec![actix_web::rt::spawn(crate::throttle::audit_loop(
            state.clone(),
        ))];
        if state.clock.is_manual() {
            loops.push(actix_web::rt::spawn(follow_clock(state.clone())));
        }
        Ok(Some(Reads { state, loops }))
    }

    /// Stops the loops, audits the throttle's windows still open, and closes the store once its read
    /// events are written: before the full server opens its own, at the handover, or at a stop.
    pub async fn close(self) {
        for running in &self.loops {
            running.abort();
        }
        crate::throttle::audit(&self.state, self.state.throttle.take_all());
        close(self.state.store.clone()).await;
    }
}

async fn close(store: Store) {
    match web::block(move || store.close()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!(
            error = %e,
            "the standby store could not write its last audit events"
        ),
        Err(e) => tracing::error!(error = %e, "the standby store's thread failed"),
    }
}

/// Moves this node's manual clock to where the holder moved it (the admin API's clock is the holder's):
/// tokens and due dates read alike on every node.
async fn follow_clock(state: web::Data<AppState>) {
    loop {
        actix_web::rt::time::sleep(CLOCK_FOLLOW).await;
        match state.store.manual_clock().await {
            Ok(Some(moved)) if moved > state.clock.now() => {
                let _ = state.clock.set(moved);
            }
            Err(e) => tracing::warn!(error = %e, "cannot read the manual clock"),
            _ => {}
        }
    }
}
