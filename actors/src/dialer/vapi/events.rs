//! Vapi's server messages as they arrive at `POST /dialers/vapi/events`: the `{"message": {...}}`
//! envelope, the `status-update` and `end-of-call-report` messages, and the `x-vapi-secret` check. Only
//! the end-of-call report (sent once the call ended and its analysis is done) becomes a platform event;
//! status updates and other types (transcripts, speech updates, tool calls, ...) are acknowledged without
//! effect: they say nothing the driver could finish a call with.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use switchboard_storage::{CallId, RequestId};

use super::mapping::call_state;
use super::types::{Analysis, Artifact, Call, PhoneNumber, CALL_ID_KEY, REQUEST_ID_KEY};
use crate::dialer::platform::PlatformEvent;

/// The body Vapi posts: one message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerMessageEnvelope {
    /// The message.
    pub message: ServerMessage,
}

/// One server message, by its `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ServerMessage {
    /// `status-update`: sent whenever `call.status` changes.
    #[serde(rename = "status-update")]
    StatusUpdate(Box<StatusUpdate>),
    /// `end-of-call-report`: sent when the call ended and post-processing (analysis) is complete.
    #[serde(rename = "end-of-call-report")]
    EndOfCallReport(Box<EndOfCallReport>),
    /// Any other type.
    #[serde(other)]
    Other,
}

/// `ServerMessageStatusUpdate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusUpdate {
    /// The new `call.status`.
    pub status: String,
    /// Only when the status is `ended`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_reason: Option<String>,
    /// The call the message is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Call>,
    /// Milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<f64>,
}

/// `ServerMessageEndOfCallReport`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndOfCallReport {
    /// Why the call ended.
    pub ended_reason: String,
    /// Transcript, recording, messages.
    #[serde(default)]
    pub artifact: Artifact,
    /// Summary and structured data.
    #[serde(default)]
    pub analysis: Analysis,
    /// The call the message is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<Call>,
    /// Cost in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// ISO 8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// ISO 8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Milliseconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<f64>,
    /// The number that placed the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<PhoneNumber>,
}

impl ServerMessage {
    /// The `type` as Vapi names it; with the platform call id, the key that makes events idempotent.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerMessage::StatusUpdate(_) => "status-update",
            ServerMessage::EndOfCallReport(_) => "end-of-call-report",
            ServerMessage::Other => "other",
        }
    }

    /// The call the message is about.
    pub fn call(&self) -> Option<&Call> {
        match self {
            ServerMessage::StatusUpdate(update) => update.call.as_ref(),
            ServerMessage::EndOfCallReport(report) => report.call.as_ref(),
            ServerMessage::Other => None,
        }
    }

    /// The ended call as a read of `GET /call/{id}` would give it: the embedded call with the report's
    /// ended reason, analysis, artifact, times and cost. `None` unless this is an end-of-call report
    /// naming its call.
    pub fn ended_call(&self) -> Option<Call> {
        let ServerMessage::EndOfCallReport(report) = self else {
            return None;
        };
        let mut call = report.call.clone()?;
        call.status = Some("ended".to_string());
        call.ended_reason = Some(report.ended_reason.clone());
        call.analysis = Some(report.analysis.clone());
        call.artifact = Some(report.artifact.clone());
        call.started_at = report.started_at.clone().or(call.started_at);
        call.ended_at = report.ended_at.clone().or(call.ended_at);
        call.cost = report.cost.or(call.cost);
        call.phone_number = report.phone_number.clone().or(call.phone_number);
        Some(call)
    }
}

/// The platform event of an end-of-call report about a call Switchboard placed (its metadata names the
/// call); `None` for every other message. `now` is the machine's wall clock (see [`call_state`]).
pub fn platform_event(message: &ServerMessage, now: DateTime<Utc>) -> Option<PlatformEvent> {
    let call = message.ended_call()?;
    Some(PlatformEvent {
        call_id: CallId::from(call.metadata_str(CALL_ID_KEY)?),
        request_id: call.metadata_str(REQUEST_ID_KEY).map(RequestId::from),
        platform_call_id: call.id.clone(),
        event_type: message.kind().to_owned(),
        state: call_state(&call, now),
    })
}

/// Parses a server message body.
pub fn parse(body: &[u8]) -> Result<ServerMessageEnvelope, serde_json::Error> {
    serde_json::from_slice(body)
}

/// Whether the presented `x-vapi-secret` is the configured one. Both sides are hashed first, so the
/// comparison takes the same time whatever the presented value's length, and runs in constant time.
pub fn secret_matches(expected: &str, presented: Option<&str>) -> bool {
    let Some(presented) = presented else {
        return false;
    };
    if expected.is_empty() {
        // An empty configured secret would accept anyone sending an empty header.
        return false;
    }
    let expected = Sha256::digest(expected.as_bytes());
    let presented = Sha256::digest(presented.as_bytes());
    expected.ct_eq(&presented).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialer::platform::PlatformCallState;

    #[test]
    fn an_end_of_call_report_parses_with_its_call_and_analysis() {
        let body = br#"{"message":{"type":"end-of-call-report","endedReason":"assistant-ended-call",
            "artifact":{"transcript":"AI: hello","recordingUrl":"https://r/x.wav","messages":[]},
            "analysis":{"summary":"ok","structuredData":{"callOutcome":"answered"}},
            "call":{"id":"c1","orgId":"o","createdAt":"2026-01-01T00:00:00.000Z","status":"in-progress",
              "assistantOverrides":{"metadata":{"switchboard_call_id":"sb-1","switchboard_request_id":"r-1"}}},
            "timestamp":1767225600000}}"#;
        let message = parse(body).unwrap().message;
        assert_eq!(message.kind(), "end-of-call-report");
        let call = message.ended_call().unwrap();
        assert_eq!(call.id, "c1");
        assert_eq!(call.metadata_str(CALL_ID_KEY), Some("sb-1"));
        assert!(call.has_ended());
        assert_eq!(
            call.artifact.unwrap().recording_location(),
            Some("https://r/x.wav")
        );
        let event = platform_event(&message, Utc::now()).unwrap();
        assert_eq!(event.call_id, "sb-1");
        assert_eq!(event.request_id, Some("r-1".into()));
        assert_eq!(event.platform_call_id, "c1");
        assert_eq!(event.event_type, "end-of-call-report");
        assert!(matches!(event.state, PlatformCallState::Ended(_)));
    }

    #[test]
    fn a_status_update_and_unknown_types_parse() {
        let update = parse(
            br#"{"message":{"type":"status-update","status":"in-progress","call":{"id":"c"}}}"#,
        )
        .unwrap()
        .message;
        assert_eq!(update.kind(), "status-update");
        assert_eq!(update.call().unwrap().id, "c");
        assert!(update.ended_call().is_none());
        assert!(platform_event(&update, Utc::now()).is_none());
        let other =
            parse(br#"{"message":{"type":"speech-update","status":"started","role":"user"}}"#)
                .unwrap()
                .message;
        assert_eq!(other, ServerMessage::Other);
        assert!(parse(br#"{"type":"status-update"}"#).is_err());
    }

    #[test]
    fn the_secret_must_match_exactly() {
        assert!(secret_matches("s3cret", Some("s3cret")));
        assert!(!secret_matches("s3cret", Some("s3cret ")));
        assert!(!secret_matches("s3cret", Some("S3CRET")));
        assert!(!secret_matches("s3cret", Some("")));
        assert!(!secret_matches("s3cret", None));
        assert!(!secret_matches("", Some("")));
    }
}
