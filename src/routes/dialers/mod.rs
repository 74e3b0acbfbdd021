//! Voice platforms' event endpoints (`POST /dialers/{platform}/events`, fixed paths): each verifies its
//! platform's signature, parses the body with the platform's adapter and hands the event to the platform
//! driver, which persists it before the answer. An event that fails authentication is refused with 401
//! and changes nothing.

pub(crate) mod retell;
pub(crate) mod vapi;

use actix_web::HttpResponse;
use serde_json::json;
use switchboard_actors::dialer::platform::{Delivery, PlatformEvent};

use crate::configuration::DialerKind;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Delivers a verified, parsed event (or acknowledges one that concerns no call of ours) and answers 200
/// once it is on disk; the platform retries anything else.
pub(crate) async fn deliver(
    state: &AppState,
    kind: DialerKind,
    event: Option<PlatformEvent>,
) -> Result<HttpResponse, ApiError> {
    let Some(event) = event else {
        return Ok(HttpResponse::Ok().json(json!({ "applied": false })));
    };
    let platform = state
        .voice
        .platforms
        .get(kind.as_str())
        .ok_or_else(not_configured)?;
    let (call_id, event_type) = (event.call_id.clone(), event.event_type.clone());
    let delivery = platform.deliver(event).await.map_err(ApiError::internal)?;
    tracing::info!(call_id = %call_id, event = %event_type, ?delivery, platform = platform.platform(), "platform event");
    Ok(HttpResponse::Ok().json(json!({ "applied": delivery == Delivery::Applied })))
}

/// The 404 of an event route whose platform has no settings (`[dialer] kind` or a `[dialer.*]` table).
pub(crate) fn not_configured() -> ApiError {
    ApiError::new(
        Code::NotFound,
        "This voice platform is not configured ([dialer] kind or its [dialer.*] table)",
    )
}
