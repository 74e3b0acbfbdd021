//! `POST /admin/v1/webhook-deliveries/{requestId}/redeliver`: send a terminal request's webhook again now.

use actix_web::{web, HttpResponse};
use switchboard_actors::webhooks::{Redeliver, Redelivery};
use switchboard_storage::{RequestId, RequestState};

use crate::auth::Admin;
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{ErrorOut, RedeliveryOut};

/// Send a webhook again
///
/// 202 once the redelivery is durable (the send follows at once, outside the scheduled rounds, and shows
/// in the delivery log; a round of the same delivery that is running ends first); 409 `CONFLICT` while
/// the request is `PROCESSING`, when it has no webhook, or when a running round has not ended within a
/// minute; 404 `REQUEST_NOT_FOUND` for an unknown or purged id.
#[utoipa::path(post, path = "/admin/v1/webhook-deliveries/{requestId}/redeliver", operation_id = "redeliverWebhook",
    params(("requestId" = String, Path, description = "The request.")),
    responses(
        (status = 202, description = "Accepted: the send follows at once.", body = RedeliveryOut),
        (status = 404, description = "`REQUEST_NOT_FOUND`.", body = ErrorOut),
        (status = 409, description = "`CONFLICT`: still `PROCESSING`, no webhook, or a round running for over a minute.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_redeliver_webhook", skip_all, fields(request_id = tracing::field::Empty))]
pub async fn redeliver(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    request_id: web::Path<RequestId>,
) -> Result<HttpResponse, ApiError> {
    let request_id = request_id.into_inner();
    let not_found = || {
        ApiError::new(
            Code::RequestNotFound,
            format!("Request '{request_id}' was not found"),
        )
    };
    let request = state
        .store
        .fetch_request(&request_id)
        .await?
        .ok_or_else(not_found)?;
    // Recorded once the path names a request: until then it is the caller's text.
    tracing::Span::current().record("request_id", request.id.as_str());
    if request.state == RequestState::Processing {
        return Err(ApiError::new(
            Code::Conflict,
            "The request is still PROCESSING: its webhook is sent when it becomes terminal",
        ));
    }
    let event = crate::audit::change(
        &state,
        &operator,
        "webhook.redeliver",
        "request",
        request_id.as_str(),
    );
    let outcome = state
        .dispatcher
        .send(Redeliver {
            request_id: request_id.clone(),
            event,
        })
        .await
        .map_err(ApiError::internal)??;
    match outcome {
        Redelivery::Accepted => Ok(HttpResponse::Accepted().json(RedeliveryOut {
            request_id: &request_id,
            status: "accepted",
        })),
        Redelivery::NoDelivery => match state.store.fetch_request(&request_id).await? {
            None => Err(not_found()),
            Some(_) => Err(ApiError::new(
                Code::Conflict,
                "The request has no webhook: neither it nor its account names a webhook URL",
            )),
        },
        Redelivery::RoundRunning => Err(ApiError::new(
            Code::Conflict,
            "A delivery round of this webhook has been running for over a minute; ask again once it has ended",
        )),
    }
}
