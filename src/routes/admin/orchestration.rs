//! `GET /admin/v1/orchestration`.

use actix_web::{web, HttpResponse};
use switchboard_actors::orchestration::GetStats;

use crate::auth::Reader;
use crate::errors::ApiError;
use crate::state::AppState;

/// Orchestration counters
///
/// Running request actors and the counters of calls, panics and restarts since start-up.
#[utoipa::path(get, path = "/admin/v1/orchestration", operation_id = "getOrchestrationStats",
    responses((status = 200, description = "The counters.", body = crate::wire::OrchestrationStatsOut)))]
pub async fn get_stats(_: Reader, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let stats = state
        .orchestrator
        .send(GetStats)
        .await
        .map_err(ApiError::internal)?;
    Ok(HttpResponse::Ok().json(stats))
}
