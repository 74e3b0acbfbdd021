use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use crate::auth::Admin;
use crate::errors::ApiError;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveriesQuery {
    request_id: Option<String>,
}

/// `GET /admin/v1/webhook-deliveries?requestId=ID`: every delivery attempt for a request. Webhook delivery
/// does not exist yet in this release, so no request has attempts and the list is empty.
pub async fn list_deliveries(
    _: Admin,
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
    Ok(HttpResponse::Ok().json(json!({ "requestId": request_id, "deliveries": [] })))
}
