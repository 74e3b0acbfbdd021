//! Between Retell's shapes and the platform driver's: the create-phone-call body (with the extraction
//! rendered as `post_call_analysis_data`), and a Retell call record read as a finished or live call.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::client::{RetellCall, CALL_ID_KEY, REQUEST_ID_KEY};
use crate::dialer::platform::extraction::{CALL_OUTCOME, CALL_OUTCOMES, CANNOT_ANSWER_EXAMPLE};
use crate::dialer::platform::{
    analysis_given_up, CallEnd, CallResult, ExtractionField, ExtractionType, PlatformCallRequest,
    PlatformCallState, PlatformResult,
};

/// What every Retell call of this server shares.
#[derive(Clone, Debug)]
pub struct RetellCallSettings {
    /// `override_agent_id`.
    pub agent_id: String,
    /// The E.164 number calls are placed from.
    pub from_number: String,
    /// `{server.public_url}/dialers/retell/events`.
    pub webhook_url: String,
}

/// The `POST /v2/create-phone-call` body of one call.
pub fn create_body(settings: &RetellCallSettings, request: &PlatformCallRequest) -> Value {
    let job = &request.job;
    json!({
        "from_number": settings.from_number,
        "to_number": format!("+1{}", job.number),
        "override_agent_id": settings.agent_id,
        "metadata": {
            CALL_ID_KEY: job.call_id,
            REQUEST_ID_KEY: job.request_id,
            "switchboard_attempt": job.attempt,
            "switchboard_step": job.step_key,
        },
        "retell_llm_dynamic_variables": request.variables,
        "agent_override": {
            "agent": {
                "webhook_url": settings.webhook_url,
                "post_call_analysis_data": analysis_data(&request.extraction),
            },
        },
    })
}

/// The extraction as Retell's `post_call_analysis_data` items.
///
/// Retell types each item as one of `string`, `enum` (with `choices`), `boolean` or `number`, with no
/// union, and a schema field may hold `CANNOT ANSWER - <reason>` whatever its type. Of the four, only a
/// `string` item can carry both a typed answer and that value, so every schema field is a `string` item:
/// its description names the typed answers (`true`/`false`, the allowed values, an amount) and the
/// convention, and `examples` (the member Retell offers to teach "the style and syntax" of string items)
/// show both. The answer stays usable as its type because it is read back in the field's type. A
/// companion "why not" item per field was the alternative; it splits one answer over two items that can
/// disagree and breaks "one item per schema field". Control fields never hold a non-answer and keep
/// their native types.
pub fn analysis_data(fields: &[ExtractionField]) -> Vec<Value> {
    fields
        .iter()
        .map(|field| {
            let mut item = json!({ "name": field.name, "description": field.description });
            if field.admits_cannot_answer() {
                let mut examples: Vec<String> = match &field.kind {
                    ExtractionType::Text => vec![],
                    ExtractionType::Boolean => vec!["true".into(), "false".into()],
                    ExtractionType::Number => vec!["1250.00".into()],
                    ExtractionType::Choice(values) => values.clone(),
                };
                examples.push(CANNOT_ANSWER_EXAMPLE.to_owned());
                item["type"] = json!("string");
                item["examples"] = json!(examples);
                return item;
            }
            match &field.kind {
                ExtractionType::Text => item["type"] = json!("string"),
                ExtractionType::Boolean => item["type"] = json!("boolean"),
                ExtractionType::Number => item["type"] = json!("number"),
                ExtractionType::Choice(values) => {
                    item["type"] = json!("enum");
                    item["choices"] = json!(values);
                }
            }
            if field.name == CALL_OUTCOME {
                item["required"] = json!(true);
            }
            item
        })
        .collect()
}

/// A Retell call record as the driver sees it at `now` (the machine's wall clock: Retell stamps its own
/// times): live until it is over with whatever Switchboard needs (the analysis, or an end that has none,
/// such as a busy line), or ended so long ago that no analysis will come.
pub fn call_state(call: &RetellCall, now: DateTime<Utc>) -> PlatformCallState {
    let reason = call.disconnection_reason.as_deref().unwrap_or_default();
    let end = end_of(reason, call);
    let status = call.call_status.as_deref().unwrap_or("registered");
    let over = matches!(status, "ended" | "not_connected" | "error");
    let needs_analysis = end == CallEnd::Conversation && status == "ended";
    let ended = call.end_timestamp.and_then(DateTime::from_timestamp_millis);
    let given_up = analysis_given_up(ended, now);
    if !over || (needs_analysis && call.call_analysis.is_none() && !given_up) {
        return PlatformCallState::Live;
    }
    let analysis = call.call_analysis.clone().unwrap_or_default();
    let mut answers = analysis.custom_analysis_data.unwrap_or_default();
    if reason == "ivr_reached" && !answers.contains_key(CALL_OUTCOME) {
        answers.insert(CALL_OUTCOME.into(), json!(CALL_OUTCOMES[5]));
    }
    PlatformCallState::Ended(Box::new(CallResult::Platform(PlatformResult {
        end: if analysis.in_voicemail == Some(true) && end == CallEnd::Conversation {
            CallEnd::Voicemail
        } else {
            end
        },
        end_detail: (!reason.is_empty()).then(|| reason.to_owned()),
        duration_seconds: call.duration_ms.map_or(0, |ms| ((ms + 500) / 1000) as u32),
        analysis: answers,
        transcript: call.transcript.clone().filter(|t| !t.trim().is_empty()),
        summary: analysis.call_summary,
        from_number: call.from_number.clone(),
        recording_url: call.recording_url.clone(),
        cost_cents: call.call_cost.as_ref().and_then(|cost| cost.cents()),
    })))
}

/// Retell's `disconnection_reason` in the driver's terms. An unknown reason on an `error` call is a
/// platform error; otherwise a conversation whose analysis decides.
fn end_of(reason: &str, call: &RetellCall) -> CallEnd {
    match reason {
        "dial_busy" => CallEnd::Busy,
        "dial_no_answer" | "user_declined" => CallEnd::NoAnswer,
        "voicemail_reached" => CallEnd::Voicemail,
        "max_duration_reached" => CallEnd::MaxDuration,
        // Silence long enough to end the call: the agent sat on hold with nobody coming.
        "inactivity" => CallEnd::HoldTooLong,
        "invalid_destination" => CallEnd::InvalidNumber,
        "dial_failed"
        | "concurrency_limit_reached"
        | "no_concurrency_fallback"
        | "no_valid_payment"
        | "scam_detected"
        | "telephony_provider_permission_denied"
        | "telephony_provider_unavailable"
        | "sip_routing_error"
        | "marked_as_spam"
        | "registered_call_timeout"
        | "manual_stopped" => CallEnd::PlatformError,
        r if r.starts_with("error_") => CallEnd::PlatformError,
        _ if call.call_status.as_deref() == Some("error") => CallEnd::PlatformError,
        _ if call.call_status.as_deref() == Some("not_connected") => CallEnd::NoAnswer,
        _ => CallEnd::Conversation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The end of every ended test call: 2026-03-02T15:13:00Z.
    const ENDED_MS: i64 = 1_772_464_380_000;

    fn call(status: &str, reason: Option<&str>, analysis: Option<Value>) -> RetellCall {
        let ended = matches!(status, "ended" | "not_connected" | "error");
        serde_json::from_value(json!({
            "call_id": "call_1", "call_status": status, "disconnection_reason": reason,
            "duration_ms": 61_400, "from_number": "+14155550100",
            "end_timestamp": ended.then_some(ENDED_MS),
            "call_analysis": analysis,
        }))
        .unwrap()
    }

    /// The call read half a minute after its end.
    fn call_state_now(call: &RetellCall) -> PlatformCallState {
        call_state(call, "2026-03-02T15:13:30Z".parse().unwrap())
    }

    #[test]
    fn a_conversation_whose_analysis_never_came_is_taken_as_it_is_after_the_grace() {
        let mut unanalysed = call("ended", Some("agent_hangup"), None);
        unanalysed.transcript = Some("Agent: Hello?".into());
        let at = |call: &RetellCall, s: &str| call_state(call, s.parse().unwrap());
        assert_eq!(
            at(&unanalysed, "2026-03-02T15:17:59Z"),
            PlatformCallState::Live
        );
        let result = ended(at(&unanalysed, "2026-03-02T15:18:01Z"));
        assert_eq!(result.end, CallEnd::Conversation);
        assert!(result.analysis.is_empty());
        assert_eq!(result.transcript.as_deref(), Some("Agent: Hello?"));
        // Without an end time there is nothing to measure the grace from: the call timeout decides.
        unanalysed.end_timestamp = None;
        assert_eq!(
            at(&unanalysed, "2026-03-03T15:00:00Z"),
            PlatformCallState::Live
        );
    }

    fn ended(state: PlatformCallState) -> PlatformResult {
        match state {
            PlatformCallState::Ended(ended) => match *ended {
                CallResult::Platform(result) => result,
                other => panic!("expected a platform result, got {other:?}"),
            },
            other => panic!("expected an ended call, got {other:?}"),
        }
    }

    #[test]
    fn a_conversation_waits_for_its_analysis() {
        assert_eq!(
            call_state_now(&call("ongoing", None, None)),
            PlatformCallState::Live
        );
        assert_eq!(
            call_state_now(&call("ended", Some("agent_hangup"), None)),
            PlatformCallState::Live
        );
        let analysed = call(
            "ended",
            Some("agent_hangup"),
            Some(
                json!({ "call_summary": "ok", "custom_analysis_data": { "callOutcome": "answered", "planActive": true } }),
            ),
        );
        let result = ended(call_state_now(&analysed));
        assert_eq!(result.end, CallEnd::Conversation);
        assert_eq!(result.duration_seconds, 61);
        assert_eq!(result.analysis["planActive"], json!(true));
    }

    #[test]
    fn the_combined_cost_in_cents_is_the_calls_price() {
        let mut analysed = call(
            "ended",
            Some("agent_hangup"),
            Some(json!({ "custom_analysis_data": { "callOutcome": "answered" } })),
        );
        assert_eq!(ended(call_state_now(&analysed)).cost_cents, None);
        // The SDK's `CallCost`: cents throughout, fractions of a cent included.
        analysed.call_cost = serde_json::from_value(json!({
            "product_costs": [
                { "product": "elevenlabs_tts", "unit_price": 0.1166667, "cost": 119.4 },
                { "product": "retell_platform", "unit_price": 0.0361, "cost": 37.0 }
            ],
            "total_duration_seconds": 61, "total_duration_unit_price": 0.1527667, "combined_cost": 156.4
        }))
        .unwrap();
        assert_eq!(ended(call_state_now(&analysed)).cost_cents, Some(156));
        analysed.call_cost.as_mut().unwrap().combined_cost = Some(156.5);
        assert_eq!(ended(call_state_now(&analysed)).cost_cents, Some(157));
        analysed.call_cost.as_mut().unwrap().combined_cost = Some(-3.0);
        assert_eq!(ended(call_state_now(&analysed)).cost_cents, None);
    }

    #[test]
    fn calls_that_never_connected_end_without_analysis() {
        assert_eq!(
            ended(call_state_now(&call(
                "not_connected",
                Some("dial_busy"),
                None
            )))
            .end,
            CallEnd::Busy
        );
        assert_eq!(
            ended(call_state_now(&call(
                "not_connected",
                Some("dial_no_answer"),
                None
            )))
            .end,
            CallEnd::NoAnswer
        );
        assert_eq!(
            ended(call_state_now(&call(
                "ended",
                Some("voicemail_reached"),
                None
            )))
            .end,
            CallEnd::Voicemail
        );
        assert_eq!(
            ended(call_state_now(&call(
                "ended",
                Some("max_duration_reached"),
                None
            )))
            .end,
            CallEnd::MaxDuration
        );
        assert_eq!(
            ended(call_state_now(&call("error", Some("error_retell"), None))).end,
            CallEnd::PlatformError
        );
    }

    #[test]
    fn schema_fields_are_string_items_that_admit_cannot_answer_and_controls_keep_their_types() {
        let field = |name: &str, kind: ExtractionType, control: bool| ExtractionField {
            name: name.into(),
            description: name.to_uppercase(),
            kind,
            control,
        };
        let items = analysis_data(&[
            field("text", ExtractionType::Text, false),
            field("flag", ExtractionType::Boolean, false),
            field("amount", ExtractionType::Number, false),
            field("plan", ExtractionType::Choice(vec!["HMO".into()]), false),
            field(
                CALL_OUTCOME,
                ExtractionType::Choice(vec!["answered".into()]),
                true,
            ),
            field("followUpNeeded", ExtractionType::Boolean, true),
            field("referralPhoneNumber", ExtractionType::Text, true),
        ]);
        let cannot = CANNOT_ANSWER_EXAMPLE;
        let string = |name: &str, description: &str, examples: Value| json!({ "name": name, "description": description, "type": "string", "examples": examples });
        assert_eq!(items[0], string("text", "TEXT", json!([cannot])));
        assert_eq!(
            items[1],
            string("flag", "FLAG", json!(["true", "false", cannot]))
        );
        assert_eq!(
            items[2],
            string("amount", "AMOUNT", json!(["1250.00", cannot]))
        );
        assert_eq!(items[3], string("plan", "PLAN", json!(["HMO", cannot])));
        assert_eq!(
            items[4],
            json!({ "name": CALL_OUTCOME, "description": "CALLOUTCOME", "type": "enum",
                    "choices": ["answered"], "required": true })
        );
        assert_eq!(
            items[5],
            json!({ "name": "followUpNeeded", "description": "FOLLOWUPNEEDED", "type": "boolean" })
        );
        assert_eq!(
            items[6],
            json!({ "name": "referralPhoneNumber", "description": "REFERRALPHONENUMBER", "type": "string" })
        );
        assert!(cannot.starts_with(crate::dialer::platform::extraction::CANNOT_ANSWER_PREFIX));
    }
}
