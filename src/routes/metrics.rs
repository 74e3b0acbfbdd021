//! `GET /metrics`: Prometheus text exposition (format 0.0.4). Unauthenticated, as scrapers expect; it shows
//! counts and timings, never ids, inputs or secrets.

use actix_web::{web, HttpResponse};
use switchboard_actors::metrics::CONTENT_TYPE;
use switchboard_actors::orchestration::GetStats;

use crate::errors::ApiError;
use crate::state::AppState;

/// Renders every metric; the running-request gauge is read from the orchestrator at scrape time.
pub async fn metrics(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    // A busy or stopped orchestrator must not fail the scrape: the gauge keeps its last value.
    if let Ok(stats) = state.orchestrator.send(GetStats).await {
        state.metrics.set_requests_running(stats.running);
    }
    if let Err(e) = task_gauges(&state).await {
        tracing::warn!(error.message = %e, "tasks could not be counted for the metrics");
    }
    let body = state.metrics.render().map_err(ApiError::internal)?;
    Ok(HttpResponse::Ok().content_type(CONTENT_TYPE).body(body))
}

/// Tasks by state and the age of the oldest open one, counted from the store at scrape time.
async fn task_gauges(state: &AppState) -> Result<(), switchboard_storage::StorageError> {
    use switchboard_actors::metrics::TASK_STATES;
    let now = state.clock.now();
    let mut counts = TASK_STATES.map(|s| (s, 0usize));
    let mut oldest = None;
    let mut after: Option<String> = None;
    loop {
        let entries = state.store.task_entries(after.as_deref(), 256).await?;
        let exhausted = entries.len() < 256;
        for (task_id, request_id) in entries {
            after = Some(task_id.clone());
            let Some(record) = state.store.fetch_request(&request_id).await? else {
                continue;
            };
            let Some(task) = switchboard_storage::task_of(&record).filter(|t| t.id == task_id)
            else {
                continue;
            };
            let task_state = task.state_at(now);
            if let Some(count) = counts.iter_mut().find(|(s, _)| *s == task_state) {
                count.1 += 1;
            }
            if !task_state.is_closed() {
                oldest = Some(
                    oldest.map_or(task.opened_at, |o: chrono::DateTime<chrono::Utc>| {
                        o.min(task.opened_at)
                    }),
                );
            }
        }
        if exhausted {
            break;
        }
    }
    let age = oldest.map_or(0, |o| (now - o).num_seconds());
    state.metrics.set_tasks(&counts, age);
    Ok(())
}
