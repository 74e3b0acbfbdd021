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
    let body = state.metrics.render().map_err(ApiError::internal)?;
    Ok(HttpResponse::Ok().content_type(CONTENT_TYPE).body(body))
}
