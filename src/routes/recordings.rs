//! `GET /v1/recordings/{callId}`: the audio behind a signed `recordingDownloadUrl`.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::errors::{ApiError, Code};
use crate::recordings::synthesize;
use crate::state::AppState;

/// The signature parameters of a link. `expires` is read as text and parsed here, so a value out of the
/// integer range gets this API's own message rather than the query deserializer's.
#[derive(Deserialize)]
pub struct LinkQuery {
    expires: Option<String>,
    signature: Option<String>,
}

/// Serves the recording when the link is authentic and unexpired; the link itself is the credential.
pub async fn download(
    state: web::Data<AppState>,
    call_id: web::Path<String>,
    query: web::Query<LinkQuery>,
) -> Result<HttpResponse, ApiError> {
    let (Some(expires), Some(signature)) = (query.expires.as_deref(), query.signature.as_deref())
    else {
        return Err(ApiError::invalid_request(
            "A recording link needs its expires and signature parameters",
        ));
    };
    let Ok(expires) = expires.trim().parse::<i64>() else {
        return Err(ApiError::invalid_request(
            "expires must be a whole number of seconds since 1970-01-01 (as in the link)",
        ));
    };
    if !state
        .links
        .verify(&call_id, expires, signature, state.clock.now())
    {
        return Err(ApiError::new(
            Code::NotFound,
            "The recording link is invalid or has expired; read the request again for a fresh one",
        ));
    }
    Ok(HttpResponse::Ok()
        .content_type("audio/wav")
        .insert_header((
            "Content-Disposition",
            format!("attachment; filename=\"{call_id}.wav\""),
        ))
        .body(synthesize(&call_id, 4)))
}
