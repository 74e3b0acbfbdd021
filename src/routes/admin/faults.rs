//! Deliberate failures, registered only with `server.fault_injection = true`, so tests and operators can
//! check that one failing piece never takes the server down.

use actix_web::{web, HttpResponse};
use switchboard_actors::supervision::InjectPanic;

use crate::auth::Admin;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// `POST /admin/v1/faults/handler-panic`: panics inside a handler. The answer must be a 500 envelope and
/// the server must keep serving.
pub async fn handler_panic(_: Admin) -> HttpResponse {
    panic!("fault injection: handler panic requested through the admin API");
}

/// `POST /admin/v1/faults/actor-panic/{actor}`: panics inside one of the supervised singleton actors
/// (`capacity-scheduler`, `webhook-dispatcher`, `orchestrator`). Answers 204 once the actor has panicked
/// and been restarted; the service must keep creating requests, running them and delivering webhooks.
pub async fn actor_panic(
    _: Admin,
    state: web::Data<AppState>,
    actor: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let sent = match actor.as_str() {
        "capacity-scheduler" => state.scheduler.actor().send(InjectPanic).await,
        "webhook-dispatcher" => state.dispatcher.send(InjectPanic).await,
        "orchestrator" => state.orchestrator.send(InjectPanic).await,
        other => {
            return Err(ApiError::new(
                Code::NotFound,
                format!("No supervised actor is named '{other}'"),
            ))
        }
    };
    sent.map_err(ApiError::internal)?;
    Ok(HttpResponse::NoContent().finish())
}
