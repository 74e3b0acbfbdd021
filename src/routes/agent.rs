//! `POST /agent/v1/calls/{callId}/outcome`: a voice agent reports how a call went.

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;
use switchboard_actors::dialer::http::{outcome_event, OutcomeRefusal};
use switchboard_actors::dialer::platform::Delivery;
use switchboard_actors::Clock;
use switchboard_storage::CallId;

use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Accepts a signed outcome for a call the agent was given. The signature (`X-Switchboard-Signature`,
/// hex HMAC-SHA256 of the body under `[dialer] secret`) is the only credential; the body it covers names
/// the call and the time of signing, so it cannot be replayed onto another call or long after (judged
/// against the machine's wall clock, never the manual test clock). The outcome is on disk before the 200,
/// so an agent that saw the 200 never needs to report again, even across a restart.
pub async fn report_outcome(
    req: HttpRequest,
    state: web::Data<AppState>,
    call_id: web::Path<CallId>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    let (Some(agent), Some(platform)) = (&state.voice.agent, state.voice.platforms.get("http"))
    else {
        return Err(ApiError::new(
            Code::NotFound,
            "No voice agent is configured (no dialer is \"http\")",
        ));
    };
    let signature = req
        .headers()
        .get("X-Switchboard-Signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let outcome = agent
        .accept_outcome(&call_id, &body, signature, Clock::system().now())
        .map_err(|refusal| match refusal {
            OutcomeRefusal::Malformed(_) => ApiError::invalid_request(refusal.to_string()),
            OutcomeRefusal::BadSignature | OutcomeRefusal::OtherCall | OutcomeRefusal::Stale => {
                tracing::warn!(reason = %refusal, "voice agent outcome refused");
                ApiError::new(Code::Unauthorized, refusal.to_string())
            }
        })?;
    let delivery = platform
        .deliver(outcome_event(&call_id, outcome))
        .await
        .map_err(ApiError::internal)?;
    if delivery != Delivery::Applied {
        return Err(ApiError::new(
            Code::NotFound,
            format!("Call '{call_id}' is not waiting for an outcome"),
        ));
    }
    tracing::info!(call_id = %call_id, "voice agent reported a call outcome");
    Ok(HttpResponse::Ok().json(json!({ "accepted": true })))
}
