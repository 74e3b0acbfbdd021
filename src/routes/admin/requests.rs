//! `DELETE /admin/v1/requests/{requestId}`: purge one request.

use actix_web::{web, HttpResponse};
use switchboard_storage::RequestId;

use crate::auth::Admin;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Purge a request
///
/// 204 once the request is gone and its keys replaced; 404 `REQUEST_NOT_FOUND` for an unknown (or
/// already purged) id.
#[utoipa::path(delete, path = "/admin/v1/requests/{requestId}", operation_id = "purgeRequest",
    params(("requestId" = String, Path, description = "The request.")),
    responses(
        (status = 204, description = "Purged."),
        (status = 404, description = "`REQUEST_NOT_FOUND`.", body = crate::wire::ErrorOut),
    ))]
#[tracing::instrument(name = "admin_purge_request", skip_all)]
pub async fn purge_request(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    request_id: web::Path<RequestId>,
) -> Result<HttpResponse, ApiError> {
    match crate::purge::purge(&state, &request_id, operator.actor(), operator.ip).await? {
        Some(_) => Ok(HttpResponse::NoContent().finish()),
        None => Err(ApiError::new(
            Code::RequestNotFound,
            format!("Request '{request_id}' was not found"),
        )),
    }
}
