//! The probes: liveness and readiness.

use actix_web::{web, HttpResponse};

use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{ErrorOut, HealthOut, ReadyOut};

/// Liveness probe
///
/// 200 as soon as the HTTP listener is up. No authentication.
#[utoipa::path(get, path = "/healthz", operation_id = "healthz",
    responses((status = 200, description = "The listener is up.", body = HealthOut)))]
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(HealthOut { status: "ok" })
}

/// Readiness probe
///
/// 200 once stored work has been recovered and the actors are running, or, on a node standing by on a
/// shared PostgreSQL database, while it can forward to the node that runs requests. No authentication.
#[utoipa::path(get, path = "/readyz", operation_id = "readyz",
    responses(
        (status = 200, description = "Stored work is recovered and the actors are running.", body = ReadyOut),
        (status = 503, description = "`NOT_READY`: still recovering stored work after start-up.", body = ErrorOut,
            headers(("Retry-After" = u32, description = "Seconds to wait before retrying."))),
    ))]
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.is_ready() {
        HttpResponse::Ok().json(ReadyOut { status: "ready" })
    } else {
        ApiError::not_ready("Stored work is still being recovered")
    }
}
