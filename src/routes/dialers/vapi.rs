//! `POST /dialers/vapi/events`: Vapi's server messages, authenticated by the `x-vapi-secret` header each
//! call asked Vapi to send (`[dialer.vapi] server_secret`), compared in constant time before anything is
//! parsed.

use actix_web::{web, HttpRequest, HttpResponse};
use switchboard_actors::dialer::vapi::events::{parse, platform_event, secret_matches};
use switchboard_actors::dialer::vapi::types::SECRET_HEADER;
use switchboard_actors::Clock;

use super::{deliver, not_configured};
use crate::configuration::{DialerKind, DialerSettings};
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Authenticates, parses and delivers one server message.
pub async fn events(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let Some(DialerSettings::Vapi(vapi)) = state.settings.dialer_of(DialerKind::Vapi) else {
        return Err(not_configured());
    };
    let presented = req
        .headers()
        .get(SECRET_HEADER)
        .and_then(|v| v.to_str().ok());
    if !secret_matches(vapi.server_secret.expose(), presented) {
        tracing::warn!("Vapi server message refused: missing or wrong x-vapi-secret");
        return Err(ApiError::new(
            Code::Unauthorized,
            "The server message does not carry the configured x-vapi-secret",
        ));
    }
    let envelope = parse(&body)
        .map_err(|e| ApiError::invalid_request(format!("The server message is not valid: {e}")))?;
    // The report's times are Vapi's: judged by the machine's wall clock, never the manual test clock.
    deliver(
        &state,
        DialerKind::Vapi,
        platform_event(&envelope.message, Clock::system().now()),
    )
    .await
}
