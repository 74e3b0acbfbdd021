//! What a fake Vapi call ends with: the seeded payer simulator of `switchboard-actors` rolls the call (or a
//! test forces it), and its report becomes what Vapi would say: an `endedReason`, the structured data the
//! assistant's analysis plan extracted (schema fields plus the control fields), a summary and a transcript.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Utc;
use serde_json::{json, Map, Value};
use switchboard_actors::dialer::simulated::{PayerFamily, PayerProfile, SimulatedPayerDialer};
use switchboard_actors::dialer::{CallJob, CallReport, Dialer};
use switchboard_storage::{Disposition, SchemaDefinition, SchemaVersionRecord};

/// How a call goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The payer simulator decides, on the payer's own profile.
    Simulated,
    /// A representative answers everything the simulator captures.
    Answered,
    /// As [`Outcome::Answered`], and the call surfaced a matter for the follow-up leg.
    AnsweredWithFollowUp,
    /// An answering machine (`voicemail`).
    Voicemail,
    /// The line is busy (`customer-busy`).
    Busy,
    /// Nobody picks up (`customer-did-not-answer`).
    NoAnswer,
    /// The hold never ends (`silence-timed-out`).
    HoldTimeout,
    /// The representative refers the call to this number.
    Referral(String),
    /// The payer cannot find the entity (a 7.3 `..._NOT_FOUND` code).
    NotFound(&'static str),
}

/// What the fake reports at the end of a call.
pub struct Ending {
    pub ended_reason: &'static str,
    pub structured_data: Map<String, Value>,
    pub summary: Option<String>,
    pub transcript: Option<String>,
    pub duration_seconds: u32,
}

/// The ending of a call created with `body`, whose schema is `schema`.
pub fn ending(outcome: &Outcome, body: &Value, schema: &SchemaDefinition, seed: u64) -> Ending {
    let simple = |reason: &'static str, data: Value| Ending {
        ended_reason: reason,
        structured_data: data.as_object().cloned().unwrap_or_default(),
        summary: None,
        transcript: None,
        duration_seconds: 40,
    };
    match outcome {
        Outcome::Voicemail => simple("voicemail", json!({})),
        Outcome::Busy => simple("customer-busy", json!({})),
        Outcome::NoAnswer => simple("customer-did-not-answer", json!({})),
        Outcome::HoldTimeout => simple("silence-timed-out", json!({"callOutcome": "other"})),
        Outcome::Referral(number) => simple(
            "assistant-ended-call",
            json!({"callOutcome": "referred", "referralPhoneNumber": number}),
        ),
        Outcome::NotFound(code) => simple(
            "assistant-ended-call",
            json!({"callOutcome": "not_found", "failureCode": code}),
        ),
        Outcome::Answered => from_report(simulate(body, schema, seed, Some(answering())), body),
        Outcome::AnsweredWithFollowUp => {
            let mut ending = from_report(simulate(body, schema, seed, Some(answering())), body);
            ending
                .structured_data
                .insert("followUpNeeded".into(), Value::Bool(true));
            ending
        }
        Outcome::Simulated => from_report(simulate(body, schema, seed, None), body),
    }
}

/// A captured value as the structured-data plan's model would give it: typed as the create's JSON Schema
/// types the property (a string only if it matches the property's `pattern`, as structured outputs
/// enforce); `None` when the type cannot hold it.
fn typed(value: &str, property: &Value) -> Option<Value> {
    match property["type"].as_str() {
        Some("boolean") => value.parse::<bool>().ok().map(Value::Bool),
        Some("number") => value.parse::<f64>().ok().map(|n| json!(n)),
        _ => {
            let pattern = property["pattern"].as_str().unwrap_or(".*");
            let fits = regex::Regex::new(pattern).is_ok_and(|p| p.is_match(value));
            fits.then(|| Value::String(value.to_string()))
        }
    }
}

/// A profile on which every call reaches a representative who answers.
fn answering() -> PayerProfile {
    PayerProfile {
        ivr_failure_rate: 0.0,
        hold_timeout_rate: 0.0,
        voicemail_rate: 0.0,
        refusal_rate: 0.0,
        referral_rate: 0.0,
        not_found_rate: 0.0,
        missing_input_rate: 0.0,
        wrong_number_rate: 0.0,
        ..PayerProfile::baseline(PayerFamily::Unknown)
    }
}

/// Runs the payer simulator on the job the create body describes.
fn simulate(
    body: &Value,
    schema: &SchemaDefinition,
    seed: u64,
    profile: Option<PayerProfile>,
) -> CallReport {
    let overrides = &body["assistantOverrides"];
    let inputs: BTreeMap<String, String> = overrides["variableValues"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| *k != "questions" && *k != "requestType")
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect();
    let metadata = &overrides["metadata"];
    let number = body["customer"]["number"].as_str().unwrap_or_default();
    let job = CallJob {
        call_id: metadata["switchboard_call_id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
            .into(),
        request_id: metadata["switchboard_request_id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
            .into(),
        seq: 1,
        attempt: metadata["switchboard_attempt"].as_u64().unwrap_or(1) as u32,
        step_key: String::new().into(),
        step_index: 0,
        schema: Arc::new(SchemaVersionRecord {
            id: "fake".to_string(),
            version: 1,
            published_at: Utc::now(),
            definition: schema.clone(),
        }),
        inputs,
        number: number.trim_start_matches("+1").to_string(),
        placed_at: Utc::now(),
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        known: BTreeMap::new(),
        restarts: 0,
        seed,
        // Decide at once: the fake waits on its own schedule.
        time_scale: f64::MAX,
        ai_only: false,
        onshore_only: false,
    };
    let dialer = match profile {
        Some(profile) => SimulatedPayerDialer::with_profile_override(profile),
        None => SimulatedPayerDialer::new(),
    };
    futures::executor::block_on(dialer.place(job))
}

/// Vapi's view of a simulated call.
fn from_report(report: CallReport, body: &Value) -> Ending {
    let properties =
        &body["assistantOverrides"]["analysisPlan"]["structuredDataPlan"]["schema"]["properties"];
    let mut data = Map::new();
    let (reason, outcome) = match report.disposition {
        Disposition::Completed => {
            for (name, value) in &report.captured {
                if let Some(value) = typed(value, &properties[name]) {
                    data.insert(name.clone(), value);
                }
            }
            data.insert(
                "followUpNeeded".into(),
                Value::Bool(report.follow_up_requested),
            );
            ("assistant-ended-call", "answered")
        }
        Disposition::Voicemail => ("voicemail", ""),
        Disposition::HoldTimeout => ("silence-timed-out", "other"),
        Disposition::Referred => {
            let number = report.referral_number.clone().unwrap_or_default();
            data.insert(
                "referralPhoneNumber".into(),
                Value::String(format!("+1{number}")),
            );
            ("assistant-ended-call", "referred")
        }
        Disposition::Failed => {
            let code = report
                .failure
                .as_ref()
                .map(|f| f.code.to_string())
                .unwrap_or_default();
            let outcome = match code.as_str() {
                "IVR_FAILURE" => "ivr_failure",
                "PAYER_REFUSAL" => "refused",
                c if c.ends_with("_NOT_FOUND") => "not_found",
                c if c.ends_with("_MISSING") => "missing_input",
                _ => "other",
            };
            data.insert("failureCode".into(), Value::String(code));
            ("customer-ended-call", outcome)
        }
    };
    if !outcome.is_empty() {
        data.insert("callOutcome".into(), Value::String(outcome.to_string()));
    }
    Ending {
        ended_reason: reason,
        structured_data: data,
        summary: report.summary,
        transcript: report.transcript,
        duration_seconds: report.duration_seconds,
    }
}
