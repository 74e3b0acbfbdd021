//! `GET /v1/recordings/{callId}`: the audio behind a signed `recordingDownloadUrl`.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::errors::{ApiError, Code};
use crate::recordings::synthesize;
use crate::state::AppState;
use crate::wire::ErrorOut;

/// The signature parameters of a link.
#[derive(Deserialize)]
pub struct LinkQuery {
    expires: Option<i64>,
    signature: Option<String>,
}

/// Download a call recording
///
/// The audio behind a signed `recordingDownloadUrl`. The link itself is the credential: no bearer token.
#[utoipa::path(get, path = "/v1/recordings/{callId}", operation_id = "downloadRecording",
    params(
        ("callId" = String, Path, description = "The call's opaque id."),
        ("expires" = i64, Query, description = "Expiry of the link (Unix seconds), as signed."),
        ("signature" = String, Query, description = "The link's signature."),
    ),
    responses(
        (status = 200, description = "The recording (WAV).", content_type = "audio/wav", body = Vec<u8>,
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"{callId}.wav\"`"))),
        (status = 400, description = "`INVALID_REQUEST`: `expires` or `signature` missing or malformed.", body = ErrorOut),
        (status = 404, description = "`NOT_FOUND`: the link is invalid or expired; read the request again for a fresh one.", body = ErrorOut),
    ))]
pub async fn download(
    state: web::Data<AppState>,
    call_id: web::Path<String>,
    query: web::Query<LinkQuery>,
) -> Result<HttpResponse, ApiError> {
    let (Some(expires), Some(signature)) = (query.expires, query.signature.as_deref()) else {
        return Err(ApiError::invalid_request(
            "A recording link needs its expires and signature parameters",
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
