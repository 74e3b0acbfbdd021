use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use crate::auth::Admin;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::format_timestamp;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveriesQuery {
    request_id: Option<String>,
}

/// `GET /admin/v1/webhook-deliveries?requestId=ID`: the delivery's state and every attempt (url, time,
/// round, attempt, status code or error, latency).
pub async fn list_deliveries(
    _: Admin,
    state: web::Data<AppState>,
    query: web::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let Some(request_id) = query
        .request_id
        .as_deref()
        .filter(|id| !id.trim().is_empty())
    else {
        return Err(ApiError::invalid_request(
            "requestId query parameter is required",
        ));
    };
    let delivery = state.store.delivery(request_id)?;
    let attempts: Vec<_> = state
        .store
        .attempts(request_id)?
        .into_iter()
        .map(|a| {
            json!({
                "url": a.url,
                "at": format_timestamp(a.at),
                "round": a.round,
                "attempt": a.attempt,
                "statusCode": a.status_code,
                "error": a.error,
                "latencyMs": a.latency_ms,
            })
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({
        "requestId": request_id,
        "status": delivery.as_ref().map(|d| d.status.as_str()),
        "url": delivery.as_ref().map(|d| d.url.clone()),
        "nextRound": delivery.as_ref().filter(|d| d.status == switchboard_storage::DeliveryStatus::Pending).map(|d| d.next_round),
        "nextAttemptAt": delivery.as_ref().filter(|d| d.status == switchboard_storage::DeliveryStatus::Pending).map(|d| format_timestamp(d.next_at)),
        "deliveries": attempts,
    })))
}
