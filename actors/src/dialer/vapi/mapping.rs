//! A Vapi call in the platform driver's terms: its `endedReason` as a [`CallEnd`], and the call (read
//! from `GET /call/{id}` or carried by an end-of-call report) as a [`PlatformCallState`]. Dispositions,
//! failure codes, referrals and follow-ups are decided from these by the shared platform mapping.

use chrono::{DateTime, Utc};

use super::types::Call;
use crate::dialer::platform::{
    analysis_given_up, CallEnd, CallResult, PlatformCallState, PlatformResult,
};

/// Vapi's `endedReason` (a `CallEndedReason`) in the driver's terms. Reasons of a conversation that ended
/// normally leave the verdict to the structured data; every other reason not listed is a failure of
/// Vapi, its model and voice providers, or the telephony (`call.start.error-*`, `pipeline-error-*`, ...).
pub fn end_of(reason: &str) -> CallEnd {
    match reason {
        "customer-busy" => CallEnd::Busy,
        "customer-did-not-answer" | "vonage-rejected" => CallEnd::NoAnswer,
        "voicemail" => CallEnd::Voicemail,
        "exceeded-max-duration" => CallEnd::MaxDuration,
        // Silence long enough to end the call: the assistant sat on hold with nobody coming.
        "silence-timed-out" => CallEnd::HoldTooLong,
        "twilio-reported-customer-misdialed" => CallEnd::InvalidNumber,
        "assistant-ended-call"
        | "assistant-said-end-call-phrase"
        | "assistant-ended-call-with-hangup-task"
        | "assistant-ended-call-after-message-spoken"
        | "assistant-forwarded-call"
        | "customer-ended-call"
        | "customer-ended-call-before-warm-transfer"
        | "customer-ended-call-after-warm-transfer-attempt"
        | "customer-ended-call-during-transfer"
        | "call.in-progress.twilio-completed-call"
        | "call.in-progress.sip-completed-call"
        | "vonage-completed" => CallEnd::Conversation,
        _ => CallEnd::PlatformError,
    }
}

/// The driver's view of `call` as read at `now` (the machine's wall clock: Vapi stamps its own times):
/// live until it has ended with its analysis (a conversation's verdict is in the structured data, which
/// Vapi adds after the end), or ended in a way that needs none, or ended so long ago that no analysis will
/// come.
pub fn call_state(call: &Call, now: DateTime<Utc>) -> PlatformCallState {
    if !call.has_ended() {
        return PlatformCallState::Live;
    }
    let reason = call.ended_reason.as_deref().unwrap_or_default();
    let end = end_of(reason);
    let analysis = call.analysis.clone().unwrap_or_default();
    let given_up = analysis_given_up(parse_time(&call.ended_at), now);
    if end == CallEnd::Conversation && call.analysis.is_none() && !given_up {
        return PlatformCallState::Live;
    }
    let artifact = call.artifact.clone().unwrap_or_default();
    PlatformCallState::Ended(Box::new(CallResult::Platform(PlatformResult {
        end,
        end_detail: (!reason.is_empty()).then(|| reason.to_owned()),
        duration_seconds: duration_seconds(call),
        analysis: analysis
            .structured_data
            .unwrap_or_default()
            .into_iter()
            .collect(),
        transcript: artifact.transcript.clone().filter(|t| !t.trim().is_empty()),
        summary: analysis.summary.filter(|s| !s.trim().is_empty()),
        from_number: call.phone_number.as_ref().and_then(|p| p.number.clone()),
        recording_url: artifact.recording_location().map(str::to_owned),
        // `cost` is in dollars ("the cost of the call in USD").
        cost_cents: call
            .cost
            .and_then(crate::cost::usd_micros)
            .map(crate::cost::cents_of_micros),
    })))
}

fn parse_time(text: &Option<String>) -> Option<DateTime<Utc>> {
    text.as_deref()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// Whole seconds from `startedAt` to `endedAt`, rounded; 0 when the call never connected.
fn duration_seconds(call: &Call) -> u32 {
    match (parse_time(&call.started_at), parse_time(&call.ended_at)) {
        (Some(start), Some(end)) if end > start => {
            let ms = (end - start).num_milliseconds();
            u32::try_from((ms + 500) / 1000).unwrap_or(u32::MAX)
        }
        _ => 0,
    }
}
