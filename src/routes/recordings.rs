//! `GET /v1/recordings/{callId}`: the audio behind a signed `recordingDownloadUrl`.

use actix_web::{web, HttpResponse};
use serde::Deserialize;

use crate::errors::{ApiError, Code};
use crate::recordings::synthesize;
use crate::state::AppState;

/// The signature parameters of a link.
#[derive(Deserialize)]
pub struct LinkQuery {
    expires: Option<i64>,
    signature: Option<String>,
}

/// Serves the recording when the link is authentic and unexpired; the link itself is the credential.
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
    // A real call's recording was downloaded from its platform at the end of the call; a simulated call
    // has generated audio.
    let (name, content_type, audio) = match stored_recording(&state, &call_id) {
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

/// The downloaded recording of `call_id` under `{data_dir}/recordings`, with its content type.
fn stored_recording(state: &AppState, call_id: &str) -> Option<(String, &'static str, Vec<u8>)> {
    // Call ids are ours (UUIDs); anything else never names a file.
    if call_id.is_empty()
        || !call_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return None;
    }
    let dir = crate::voice::recordings_dir(&state.settings);
    [
        ("wav", "audio/wav"),
        ("mp3", "audio/mpeg"),
        ("ogg", "audio/ogg"),
        ("m4a", "audio/mp4"),
    ]
    .into_iter()
    .find_map(|(ext, content_type)| {
        let name = format!("{call_id}.{ext}");
        std::fs::read(dir.join(&name))
            .ok()
            .map(|bytes| (name, content_type, bytes))
    })
}
