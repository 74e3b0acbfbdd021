//! `GET /console/api/requests/{requestId}/voice`: how a request's calls stand with the voice platform,
//! for the detail view: each call's platform and platform call id (the handle to look the call up in the
//! platform's own dashboard), the events applied, whether its recording is kept, and, while the request
//! waits, why (calling hours or a free call slot) with the server's slot usage. Platform URLs are never
//! included.

use actix_web::{web, HttpResponse};
use switchboard_storage::RequestId;

use super::out::{PlatformCallOut, SlotsOut, VoiceOut, WaitingOut};
use super::ConsoleScope;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::format_timestamp;

/// The voice view of one request (404 `REQUEST_NOT_FOUND` outside the scope).
pub async fn get_voice(
    state: web::Data<AppState>,
    scope: ConsoleScope,
    request_id: web::Path<RequestId>,
) -> Result<HttpResponse, ApiError> {
    let record = scope.request(&state.store, &request_id).await?;
    let calls = record
        .run
        .iter()
        .flat_map(|run| run.calls.iter())
        .filter_map(|call| {
            let platform = call.platform.as_ref()?;
            Some(PlatformCallOut {
                call: call.seq,
                platform: &platform.platform,
                platform_call_id: platform.platform_call_id.as_deref(),
                requested_at: format_timestamp(platform.requested_at),
                events: &platform.events,
                recording_kept: platform.recording_file.is_some(),
            })
        })
        .collect();
    let limits = state.voice.limits.as_ref();
    let calls_of_record = record
        .run
        .as_ref()
        .map(|run| &run.calls[..])
        .unwrap_or_default();
    let waiting = limits
        .map(|l| l.waiting())
        .unwrap_or_default()
        .into_iter()
        .filter(|w| w.request_id == record.id)
        .map(|w| WaitingOut {
            reason: w.reason.as_str(),
            since: format_timestamp(w.since),
            call: calls_of_record
                .iter()
                .find(|c| c.id == w.call_id)
                .map(|c| c.seq),
        })
        .collect();
    Ok(HttpResponse::Ok().json(VoiceOut {
        platform: state.voice.platform.as_ref().map(|p| p.platform()),
        calls,
        waiting,
        slots: limits.map(|l| SlotsOut {
            limit: l.max(),
            in_use: l.in_use(),
        }),
    }))
}
