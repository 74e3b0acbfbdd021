//! `GET /v1/recordings/{callId}`: the audio behind a signed `recordingDownloadUrl`.

use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use switchboard_storage::audit::{Actor, Target};
use switchboard_storage::CallId;

use crate::errors::{ApiError, Code};
use crate::recordings::synthesize;
use crate::state::AppState;
use crate::wire::ErrorOut;

/// The signature parameters of a link. `expires` is read as text and parsed here, so a value out of the
/// integer range gets this API's own message rather than the query deserializer's.
#[derive(Deserialize)]
pub struct LinkQuery {
    expires: Option<String>,
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
        (status = 200, description = "The recording: the audio kept from the voice platform at the end of a real call (WAV, MP3, Ogg or M4A, as the platform recorded it), or generated WAV audio for a simulated call.",
            content((Vec<u8> = "audio/wav"), (Vec<u8> = "audio/mpeg"), (Vec<u8> = "audio/ogg"), (Vec<u8> = "audio/mp4")),
            headers(("Content-Disposition" = String, description = "`attachment; filename=\"{callId}.{extension}\"` (`wav`, `mp3`, `ogg` or `m4a`)"))),
        (status = 400, description = "`INVALID_REQUEST`: `expires` or `signature` missing or malformed.", body = ErrorOut),
        (status = 404, description = "`NOT_FOUND`: the link is invalid or expired; read the request again for a fresh one.", body = ErrorOut),
    ))]
pub async fn download(
    req: HttpRequest,
    state: web::Data<AppState>,
    call_id: web::Path<CallId>,
    query: web::Query<LinkQuery>,
) -> Result<HttpResponse, ApiError> {
    // The link is the credential: the event names the call it opens, whoever holds it.
    let downloaded = |outcome: &'static str| {
        let event = crate::audit::event(
            &state,
            Actor {
                id: call_id.as_str().to_owned(),
                kind: "link".into(),
            },
            "recording.download",
            Some(Target::new("recording", call_id.as_str())),
            outcome,
            crate::audit::peer(&req),
        );
        state.store.audit_read(event);
    };
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
        downloaded("denied");
        return Err(ApiError::new(
            Code::NotFound,
            "The recording link is invalid or has expired; read the request again for a fresh one",
        ));
    }
    // A real call's recording was downloaded from its platform at the end of the call; a simulated call
    // has generated audio.
    if state.store.call_purged(&call_id).await? {
        downloaded("denied");
        return Err(ApiError::new(
            Code::NotFound,
            "The recording link is invalid or has expired; read the request again for a fresh one",
        ));
    }
    downloaded("ok");
    let (name, content_type, audio) = match stored_recording(&state, &call_id).await? {
        Some((name, content_type, bytes)) => (name, content_type, bytes),
        None => (
            format!("{call_id}.wav"),
            "audio/wav",
            synthesize(&call_id, 4),
        ),
    };
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((
            "Content-Disposition",
            format!("attachment; filename=\"{name}\""),
        ))
        .body(audio))
}

/// A recording to serve: its file name, content type and audio.
type Recording = (String, &'static str, Vec<u8>);

/// The downloaded recording of `call_id`, with its content type. A file that
/// does not open with its key is an error, never taken for a simulated call's missing one.
async fn stored_recording(
    state: &AppState,
    call_id: &CallId,
) -> Result<Option<Recording>, ApiError> {
    // Call ids are ours (UUIDs); anything else never names a file.
    let call_id = call_id.as_str();
    if call_id.is_empty()
        || !call_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Ok(None);
    }
    for (ext, content_type) in [
        ("wav", "audio/wav"),
        ("mp3", "audio/mpeg"),
        ("ogg", "audio/ogg"),
        ("m4a", "audio/mp4"),
    ] {
        let name = format!("{call_id}.{ext}");
        // Opened only now, to be served.
        let audio = state.store.recording(&name).await;
        if let Some(audio) = audio.map_err(ApiError::internal)? {
            return Ok(Some((name, content_type, audio)));
        }
    }
    Ok(None)
}
