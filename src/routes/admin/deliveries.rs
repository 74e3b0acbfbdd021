//! `GET /admin/v1/webhook-deliveries?requestId=ID`.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use switchboard_storage::RequestId;

use crate::auth::Reader;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{DeliveriesOut, ErrorOut, WebhookAttemptOut, WebhookDeliveryOut};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveriesQuery {
    request_id: Option<RequestId>,
}

/// A request's webhook deliveries
///
/// The delivery's state and every attempt (url, time, round, attempt, status code or error, latency).
/// Reading it is audited as a read of the request.
#[utoipa::path(get, path = "/admin/v1/webhook-deliveries", operation_id = "listWebhookDeliveries",
    params(("requestId" = String, Query, description = "The request; required.")),
    responses(
        (status = 200, description = "The delivery and its attempts.", body = DeliveriesOut),
        (status = 400, description = "`INVALID_REQUEST`: `requestId` missing or blank.", body = ErrorOut),
    ))]
pub async fn list_deliveries(
    Reader(operator): Reader,
    state: web::Data<AppState>,
    query: web::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let Some(request_id) = query
        .request_id
        .as_ref()
        .filter(|id| !id.as_str().trim().is_empty())
    else {
        return Err(ApiError::invalid_request(
            "requestId query parameter is required",
        ));
    };
    // The delivery first: a round logs each attempt before it saves the delivery, so attempts read after
    // it include every attempt the delivery counts. Read the other way round, a round ending in between
    // showed its new status without its last attempt.
    let delivery = state.store.delivery(request_id).await?;
    let attempts: Vec<WebhookAttemptOut> = state
        .store
        .attempts(request_id)
        .await?
        .iter()
        .map(WebhookAttemptOut::from)
        .collect();
    // The webhook's URL is the request's data: an answer that shows it (the delivery's, or an attempt's
    // logged by a release that kept URLs in the attempt log) is a read of the request, as the console's.
    if delivery.is_some() || attempts.iter().any(|attempt| !attempt.url.is_empty()) {
        let read = crate::audit::change(
            &state,
            &operator,
            "request.read",
            "request",
            request_id.as_str(),
        );
        state.store.audit_read(read);
    }
    let body = match delivery {
        Some(delivery) => {
            let delivery = WebhookDeliveryOut::new(&delivery, attempts);
            DeliveriesOut {
                request_id: request_id.clone(),
                status: Some(delivery.status),
                url: Some(delivery.url),
                next_round: delivery.next_round,
                next_attempt_at: delivery.next_attempt_at,
                deliveries: delivery.attempts,
            }
        }
        None => DeliveriesOut {
            request_id: request_id.clone(),
            status: None,
            url: None,
            next_round: None,
            next_attempt_at: None,
            deliveries: attempts,
        },
    };
    Ok(HttpResponse::Ok().json(body))
}
