//! Error handlers for actix's own extractors, so malformed JSON, paths and queries get the envelope.

use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
use actix_web::{web, HttpRequest};

use super::{ApiError, Code};

/// Largest accepted request body: room for a batch of 1,000 entries (the most a batch may hold) with
/// generous inputs.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// The most bytes a request's header fields may hold, names and values together (nginx's default for a
/// whole head). actix-http's own limit is a read buffer of 128 KiB checked only while a head is still
/// incomplete, so a head between the two was answered or refused depending on how the socket delivered
/// it; refusing everything over this limit (in `middleware.rs`) makes the answer the same every time.
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// `JsonConfig` with the envelope for every failure. A Content-Type is required here, so a non-JSON one is
/// refused with 415; a missing one is filled in as JSON by `middleware::guard`.
/// Every body is read as JSON whatever its declared Content-Type (clients such as `curl -d` send form
/// types by default); a body that is not JSON gets 400 `INVALID_REQUEST`, a code of the client contract,
/// rather than a 415 the contract does not know.
pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(MAX_BODY_BYTES)
        .content_type_required(false)
        .content_type(|_| true)
        .error_handler(json_error)
}

/// `PathConfig` with the envelope. The log gets the route only: the path's segments are the client's.
pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|e: PathError, req| {
        tracing::debug!(
            route = &*crate::http::route_label(req),
            "path parameter rejected"
        );
        ApiError::invalid_request(format!("Invalid path parameter: {e}")).into()
    })
}

/// `QueryConfig` with the envelope. The deserializer's text ("number too large to fit in target type")
/// names Rust types, not parameters, so the client gets a plain message; handlers that take numbers read
/// them as text and parse them with their own messages. The log gets the route and the query's length
/// only: the deserializer's text can quote a value, and everything in a query string is client data.
pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|_: QueryPayloadError, req| {
        tracing::debug!(
            route = &*crate::http::route_label(req),
            query_bytes = req.query_string().len(),
            "query string rejected"
        );
        ApiError::invalid_request("The query string has a parameter with an invalid value").into()
    })
}

/// The log gets the route and the kind of failure only: the body and the path are the client's.
fn json_error(error: JsonPayloadError, req: &HttpRequest) -> actix_web::Error {
    tracing::debug!(
        route = &*crate::http::route_label(req),
        failure = json_failure(&error),
        "request body rejected"
    );
    let api_error = match &error {
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            ApiError::new(
                Code::PayloadTooLarge,
                format!("Request body exceeds the {MAX_BODY_BYTES}-byte limit"),
            )
        }
        JsonPayloadError::ContentType => ApiError::new(
            Code::UnsupportedMediaType,
            "Content-Type must be application/json",
        ),
        JsonPayloadError::Deserialize(e) if e.is_data() => {
            ApiError::invalid_request(format!("Request body has the wrong shape: {e}"))
        }
        JsonPayloadError::Deserialize(e) => {
            ApiError::invalid_request(format!("Request body is not valid JSON: {e}"))
        }
        other => ApiError::invalid_request(format!("Request body could not be read: {other}")),
    };
    api_error.into()
}

/// The kind of a body failure, in words that quote nothing of the body.
fn json_failure(error: &JsonPayloadError) -> &'static str {
    match error {
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            "too large"
        }
        JsonPayloadError::ContentType => "content type",
        JsonPayloadError::Deserialize(e) if e.is_data() => "wrong shape",
        JsonPayloadError::Deserialize(_) => "not JSON",
        _ => "unreadable",
    }
}
