//! `GET /v1/requests/{requestId}`.

use std::sync::Arc;

use actix_web::http::header::{HeaderValue, CONTENT_TYPE};
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use switchboard_storage::{RequestId, RequestRecord};

use crate::auth::Caller;
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{ErrorOut, ReadKind, RequestOut};

/// Read one request
///
/// One request of the caller's account and environment, with its call trace once finished and what it has
/// cost (`cost`, final once terminal); any other id is 404 `REQUEST_NOT_FOUND`.
#[utoipa::path(get, path = "/v1/requests/{requestId}", operation_id = "getRequest",
    params(("requestId" = String, Path, description = "The request ID.")),
    responses(
        (status = 200, description = "The request.", body = RequestOut),
        (status = 404, description = "`REQUEST_NOT_FOUND` (absent for this account and environment) or `ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "get_request", skip_all, fields(request_id = tracing::field::Empty))]
pub async fn get_request(
    state: web::Data<AppState>,
    caller: Caller,
    request_id: web::Path<RequestId>,
) -> Result<HttpResponse, ApiError> {
    let record = visible_request(&state, &caller, &request_id).await?;
    // Only now: the path's text is the client's, and a log line must not carry it before it names one of
    // the caller's requests.
    tracing::Span::current().record("request_id", record.id.as_str());
    state.store.audit_read(read_event(&caller, &record.id));
    let body = state.request_bodies.body(&record, &caller.account, || {
        let read = state.read_context(&caller.account, ReadKind::Single);
        // Serializing plain wire structs to JSON cannot fail.
        Bytes::from(serde_json::to_vec(&RequestOut::new(&record, &read)).expect("wire JSON"))
    });
    // A static header value: `content_type` would copy the MIME text into a new buffer on every read.
    Ok(HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .body(body))
}

/// The `request.read` event of `caller` reading `id`, at the instant its token was checked.
pub(crate) fn read_event(caller: &Caller, id: &RequestId) -> switchboard_storage::audit::NewEvent {
    crate::audit::event_at(
        caller.at,
        caller.actor(),
        "request.read",
        Some(switchboard_storage::audit::Target::new(
            "request",
            id.as_str(),
        )),
        "ok",
        caller.ip,
    )
}

/// The request if it belongs to the caller's scope. Another account's or environment's request is
/// indistinguishable from a missing one.
pub(crate) async fn visible_request(
    state: &AppState,
    caller: &Caller,
    request_id: &RequestId,
) -> Result<Arc<RequestRecord>, ApiError> {
    match state.store.fetch_request(request_id).await? {
        Some(record)
            if record.account_id == caller.account.id
                && record.environment == caller.environment =>
        {
            Ok(record)
        }
        _ => Err(ApiError::new(
            Code::RequestNotFound,
            format!("Request '{request_id}' was not found"),
        )),
    }
}
