use actix_web::{web, HttpResponse};
use serde_json::json;

use crate::state::AppState;

/// `GET /healthz`: the listener is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// `GET /readyz`: stored work has been recovered and the actors are running.
pub async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.is_ready() {
        HttpResponse::Ok().json(json!({ "status": "ready" }))
    } else {
        HttpResponse::ServiceUnavailable()
            .insert_header(("Retry-After", "1"))
            .json(
                json!({ "error": "NOT_READY", "message": "Stored work is still being recovered" }),
            )
    }
}
