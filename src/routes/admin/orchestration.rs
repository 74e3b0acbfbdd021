use actix_web::{web, HttpResponse};
use switchboard_actors::orchestration::GetStats;

use crate::auth::Reader;
use crate::errors::ApiError;
use crate::state::AppState;

/// `GET /admin/v1/orchestration`: running request actors and the counters of calls, panics and restarts.
pub async fn get_stats(_: Reader, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let stats = state
        .orchestrator
        .send(GetStats)
        .await
        .map_err(ApiError::internal)?;
    Ok(HttpResponse::Ok().json(stats))
}
