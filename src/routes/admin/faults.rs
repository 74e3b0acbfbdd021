//! Deliberate failures, registered only with `server.fault_injection = true`, so tests and operators can
//! check that one failing piece never takes the server down.

use actix_web::{web, HttpResponse};
use switchboard_actors::supervision::InjectPanic;

use crate::auth::Admin;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Panic in a handler
///
/// Panics inside a handler. The answer must be a 500 envelope and the server must keep serving.
#[utoipa::path(post, path = "/admin/v1/faults/handler-panic", operation_id = "injectHandlerPanic",
    responses((status = 500, description = "`INTERNAL_ERROR`, always.", body = crate::wire::ErrorOut)))]
pub async fn handler_panic(_: Admin) -> HttpResponse {
    panic!("fault injection: handler panic requested through the admin API");
}

/// Panic in an actor
///
/// Panics inside one of the supervised singleton actors
/// (`capacity-scheduler`, `webhook-dispatcher`, `orchestrator`). Answers 204 once the actor has panicked
/// and been restarted; the service must keep creating requests, running them and delivering webhooks.
#[utoipa::path(post, path = "/admin/v1/faults/actor-panic/{actor}", operation_id = "injectActorPanic",
    params(("actor" = String, Path, description = "`capacity-scheduler`, `webhook-dispatcher` or `orchestrator`.")),
    responses(
        (status = 204, description = "The actor panicked and was restarted."),
        (status = 404, description = "`NOT_FOUND`: no supervised actor has that name.", body = crate::wire::ErrorOut),
    ))]
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
