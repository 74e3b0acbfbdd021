//! `POST /dialers/retell/events`: Retell's webhooks, authenticated by `x-retell-signature` under the
//! Retell API key and judged stale against the machine's wall clock (never the manual test clock).

use actix_web::{web, HttpRequest, HttpResponse};
use switchboard_actors::dialer::retell::events::{verify, RetellEvent, SIGNATURE_HEADER};
use switchboard_actors::dialer::retell::platform_event;
use switchboard_actors::Clock;

use super::{deliver, not_configured};
use crate::configuration::{DialerKind, DialerSettings};
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Verifies, parses and delivers one Retell event.
pub async fn events(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let Some(DialerSettings::Retell(retell)) = state.settings.dialer_of(DialerKind::Retell) else {
        return Err(not_configured());
    };
    let signature = req
        .headers()
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !verify(
        &body,
        retell.api_key.expose(),
        signature,
        Clock::system().now(),
    ) {
        tracing::warn!("Retell event refused: bad or stale signature");
        return Err(ApiError::new(
            Code::Unauthorized,
            "The event is not signed with the Retell API key, or its signature is stale",
        ));
    }
    let event: RetellEvent = serde_json::from_slice(&body)
        .map_err(|e| ApiError::invalid_request(format!("The event body is not valid: {e}")))?;
    deliver(
        &state,
        DialerKind::Retell,
        platform_event(event, Clock::system().now()),
    )
    .await
}
