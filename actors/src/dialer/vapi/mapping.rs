//! From an ended Vapi call to Switchboard's [`CallReport`]: pure, so every rule is unit-tested.
//!
//! The ended reason decides first. The line never answered (busy, no answer, voicemail): a voicemail
//! disposition, which the step redials. The call ran out of time (maximum duration, or silence while
//! holding) without answers: a hold timeout, also redialed. The number could not be dialed: the generic
//! wrong-number code, which the step attributes by the number's source. The platform failed to start or
//! carry the call: `SYSTEM_ERROR`/`OTHER`. Otherwise a conversation took place and the structured data
//! decides: its control fields (`callOutcome`, `failureCode`, `referralPhoneNumber`, `followUpNeeded`)
//! give the disposition, its schema fields the captured values.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use switchboard_storage::{Disposition, FailureRecord, SchemaDefinition};

use super::extraction::{CALL_OUTCOME, FAILURE_CODE, FOLLOW_UP_NEEDED, REFERRAL_PHONE_NUMBER};
use super::types::Call;
use crate::dialer::sandbox::failure_for_code;
use crate::dialer::CallReport;

/// How a call ended, by Vapi's `endedReason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Nobody picked up: busy, no answer, voicemail.
    Unanswered,
    /// Time ran out: maximum duration, or silence (a hold that never ended).
    OutOfTime,
    /// The number itself was bad.
    Misdialed,
    /// Vapi or its telephony provider could not place or carry the call.
    PlatformError,
    /// A conversation ended normally (either side hung up, or the assistant ended it).
    Conversation,
}

/// The [`Ending`] of a `CallEndedReason`.
pub fn ending_for(reason: &str) -> Ending {
    match reason {
        "customer-busy" | "customer-did-not-answer" | "voicemail" | "vonage-rejected" => {
            Ending::Unanswered
        }
        "exceeded-max-duration" | "silence-timed-out" => Ending::OutOfTime,
        "twilio-reported-customer-misdialed" => Ending::Misdialed,
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
        | "vonage-completed" => Ending::Conversation,
        _ => Ending::PlatformError,
    }
}

/// The report of an ended call; `schema` names the fields whose values are kept.
pub fn report_from_call(call: &Call, schema: &SchemaDefinition) -> CallReport {
    let reason = call.ended_reason.as_deref().unwrap_or_default();
    let empty = Map::new();
    let data = call
        .analysis
        .as_ref()
        .and_then(|a| a.structured_data.as_ref())
        .unwrap_or(&empty);
    let captured = captured_values(data, schema);
    let outcome = text(data.get(CALL_OUTCOME)).unwrap_or_default();
    let answered = outcome == "answered" || (outcome.is_empty() && !captured.is_empty());
    let artifact = call.artifact.as_ref();
    let mut report = CallReport {
        disposition: Disposition::Completed,
        duration_seconds: duration_seconds(call),
        captured: BTreeMap::new(),
        transcript: artifact.and_then(|a| a.transcript.clone()),
        transcript_post_call: None,
        summary: call.analysis.as_ref().and_then(|a| a.summary.clone()),
        audit_summary: None,
        recording: artifact.and_then(|a| a.recording_location()).is_some(),
        from_number: call.phone_number.as_ref().and_then(|p| p.number.clone()),
        failure: None,
        referral_number: None,
        follow_up_requested: false,
    };
    match ending_for(reason) {
        Ending::Unanswered => report.disposition = Disposition::Voicemail,
        Ending::OutOfTime if !answered => report.disposition = Disposition::HoldTimeout,
        Ending::Misdialed => fail(&mut report, failure_for_code("PHONE_NUMBER_INCORRECT")),
        Ending::PlatformError => fail(
            &mut report,
            FailureRecord {
                message: format!(
                    "The voice platform could not place or carry the call ({reason})."
                ),
                ..failure_for_code("OTHER")
            },
        ),
        Ending::OutOfTime | Ending::Conversation => {
            let code = text(data.get(FAILURE_CODE));
            match outcome.as_str() {
                _ if answered => {
                    report.captured = captured;
                    report.follow_up_requested = flag(data.get(FOLLOW_UP_NEEDED));
                }
                "referred" => match text(data.get(REFERRAL_PHONE_NUMBER))
                    .as_deref()
                    .and_then(ten_digits)
                {
                    Some(number) => {
                        report.disposition = Disposition::Referred;
                        report.referral_number = Some(number);
                    }
                    None => fail(&mut report, failure_for_code("OTHER")),
                },
                other => fail(&mut report, failure_for_outcome(other, code.as_deref())),
            }
        }
    }
    report
}

/// The failure of an unsuccessful conversation: the reported code where it is a 7.3 code that fits the
/// outcome, else the outcome's own code.
pub fn failure_for_outcome(outcome: &str, code: Option<&str>) -> FailureRecord {
    // `failure_for_code` turns codes it does not know into OTHER: a known code keeps its name.
    let known = code
        .map(|c| c.trim().to_ascii_uppercase())
        .map(|c| failure_for_code(&c))
        .filter(|f| f.code != "OTHER");
    let fits = |f: &FailureRecord| match outcome {
        "not_found" => f.category == "NOT_FOUND" && !f.code.ends_with("_MISSING"),
        "missing_input" => f.code.ends_with("_MISSING"),
        "refused" | "ivr_failure" => false,
        _ => true,
    };
    if let Some(failure) = known.filter(fits) {
        return failure;
    }
    failure_for_code(match outcome {
        "refused" => "PAYER_REFUSAL",
        "ivr_failure" => "IVR_FAILURE",
        "not_found" => "MEMBER_NOT_FOUND",
        _ => "OTHER",
    })
}

/// The structured data's values under the schema's field names, as text; empty values and names the
/// schema does not have are dropped.
pub fn captured_values(
    data: &Map<String, Value>,
    schema: &SchemaDefinition,
) -> BTreeMap<String, String> {
    schema
        .fields
        .iter()
        .filter_map(|field| {
            let value = text(data.get(&field.name))?;
            Some((field.name.clone(), value))
        })
        .collect()
}

/// A JSON scalar as text: strings trimmed, booleans `true`/`false`, numbers as written; null, empty
/// strings, arrays and objects give nothing.
fn text(value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(s) => s.trim().to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

fn flag(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.trim().eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// A US number as ten digits (`+1 (800) 555-0188`, `18005550188` and `8005550188` alike).
pub fn ten_digits(number: &str) -> Option<String> {
    let digits: String = number.chars().filter(char::is_ascii_digit).collect();
    let digits = match digits.len() {
        11 if digits.starts_with('1') => digits[1..].to_string(),
        _ => digits,
    };
    (digits.len() == 10).then_some(digits)
}

/// Whole seconds from `startedAt` to `endedAt`; 0 when either is missing (the call never connected).
fn duration_seconds(call: &Call) -> u32 {
    let parse = |s: &Option<String>| {
        s.as_deref()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    match (parse(&call.started_at), parse(&call.ended_at)) {
        (Some(start), Some(end)) if end > start => {
            u32::try_from((end - start).num_seconds()).unwrap_or(u32::MAX)
        }
        _ => 0,
    }
}

fn fail(report: &mut CallReport, failure: FailureRecord) {
    report.disposition = Disposition::Failed;
    report.failure = Some(failure);
}
