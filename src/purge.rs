//! Purging requests: by an operator (`DELETE /admin/v1/requests/{requestId}`) or by retention (the server
//! itself, once a request has been terminal for its account's `retention_days`).

use std::net::IpAddr;
use std::time::Duration;

use chrono::Days;
use switchboard_actors::orchestration::Halt;
use switchboard_storage::audit::{Actor, NewEvent, Target};
use switchboard_storage::{Environment, Purged, RequestId, Scope, StorageError};

use crate::state::AppState;

/// Purges `id` as `actor`: the request goes in one transaction, its actor is stopped, then the keys that
/// sealed it are replaced. `None` when there is no such request.
pub async fn purge(
    state: &AppState,
    id: &RequestId,
    actor: Actor,
    ip: Option<IpAddr>,
) -> Result<Option<Purged>, StorageError> {
    let event = NewEvent {
        at: state.clock.now(),
        actor,
        action: "request.purge".into(),
        target: Some(Target::new("request", id.as_str())),
        outcome: "ok".into(),
        ip,
        count: None,
    };
    let Some(purged) = state.store.purge_request(id, event).await? else {
        return Ok(None);
    };
    if purged.was_running {
        // Its work stops before the keys go: nothing of it is written under a key about to change.
        let _ = state.orchestrator.send(Halt(id.clone())).await;
    }
    state.store.finish_purges().await?;
    tracing::info!(request_id = %id, recordings = purged.recordings.len(), "request purged");
    Ok(Some(purged))
}

/// How often retention looks for requests to purge, at least.
pub const RETENTION_EVERY: Duration = Duration::from_secs(60);

/// Applies retention every [`RETENTION_EVERY`] and whenever the clock is moved (a manual clock jumps days
/// at a time), for as long as the server runs.
pub async fn retention_loop(state: actix_web::web::Data<AppState>) {
    let mut ticks = state.clock.ticks();
    loop {
        match apply_retention(&state).await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(purged, "retention purged requests"),
            Err(e) => tracing::error!(error = %e, "retention failed; retrying at the next round"),
        }
        tokio::select! {
            _ = actix_web::rt::time::sleep(RETENTION_EVERY) => {}
            changed = ticks.changed() => {
                if changed.is_err() {
                    actix_web::rt::time::sleep(RETENTION_EVERY).await;
                }
            }
        }
    }
}

/// Purges, as the system, every terminal request of an account with `retention_days` that has been
/// terminal that long. Answers how many went.
pub async fn apply_retention(state: &AppState) -> Result<usize, StorageError> {
    let now = state.clock.now();
    // What was learned of payers' lines is kept 90 days, whatever the accounts keep.
    let learned_since =
        now.date_naive() - Days::new(u64::from(switchboard_storage::PAYER_STATS_KEPT_DAYS));
    state.store.forget_payer_days_before(learned_since).await?;
    let mut purged = 0;
    for account in state.store.accounts().await? {
        let Some(days) = account.retention_days else {
            continue;
        };
        let Some(cutoff) = now.checked_sub_days(Days::new(u64::from(days))) else {
            continue;
        };
        for environment in [Environment::Production, Environment::Sandbox] {
            let scope = Scope::new(account.id.clone(), environment);
            // A request ends after it is created, so only those created before the cutoff can qualify.
            for id in state
                .store
                .expired_requests(&scope, cutoff, cutoff, 1000)
                .await?
            {
                if purge(state, &id, Actor::system(), None).await?.is_some() {
                    purged += 1;
                }
            }
        }
    }
    Ok(purged)
}
