//! Unit tests of the pure parts: the structured-data schema and variables, and the mapping of ended calls
//! (Vapi's documented `endedReason` values and `analysis.structuredData`) to reports.

use std::collections::BTreeMap;

use serde_json::{json, Value};
use switchboard_storage::{Disposition, FieldCondition, FieldRecord, FieldType, SchemaDefinition};

use super::extraction::{structured_data_schema, variable_values};
use super::mapping::{ending_for, failure_for_outcome, report_from_call, ten_digits, Ending};
use super::types::{Analysis, Artifact, Call};

fn field(name: &str, field_type: FieldType, required: bool) -> FieldRecord {
    FieldRecord {
        name: name.to_string(),
        label: name.to_string(),
        description: format!("What is the {name}?"),
        field_type,
        allowed_values: (field_type == FieldType::Multiple)
            .then(|| vec!["ACTIVE".to_string(), "INACTIVE".to_string()]),
        required,
        when: None,
    }
}

fn schema() -> SchemaDefinition {
    let mut deductible = field("deductibleAmount", FieldType::Dollar, false);
    deductible.when = Some(FieldCondition {
        field: "planStatus".to_string(),
        equals: "ACTIVE".to_string(),
    });
    SchemaDefinition {
        name: Some("VOB".to_string()),
        request_type: "benefits".to_string(),
        required_inputs: vec!["memberId".to_string()],
        optional_inputs: vec![],
        follow_up: None,
        fields: vec![
            field("planStatus", FieldType::Multiple, true),
            field("effectiveDate", FieldType::Date, true),
            field("inNetwork", FieldType::Boolean, false),
            deductible,
        ],
    }
}

fn ended(reason: &str, data: Value) -> Call {
    Call {
        id: "call-1".to_string(),
        status: Some("ended".to_string()),
        ended_reason: Some(reason.to_string()),
        started_at: Some("2026-03-02T15:00:00.000Z".to_string()),
        ended_at: Some("2026-03-02T15:12:30.500Z".to_string()),
        analysis: Some(Analysis {
            summary: Some("The representative confirmed the plan.".to_string()),
            structured_data: data.as_object().cloned(),
        }),
        artifact: Some(Artifact {
            transcript: Some("AI: Hello\nUser: Hi".to_string()),
            recording_url: Some("https://storage.vapi.ai/rec.wav".to_string()),
            ..Artifact::default()
        }),
        ..Call::default()
    }
}

#[test]
fn the_schema_has_one_string_property_per_field_and_the_control_fields() {
    let generated = structured_data_schema(&schema());
    assert_eq!(generated.kind, "object");
    let names: Vec<&str> = generated.properties.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "callOutcome",
            "deductibleAmount",
            "effectiveDate",
            "failureCode",
            "followUpNeeded",
            "inNetwork",
            "planStatus",
            "referralPhoneNumber"
        ]
    );
    let status = &generated.properties["planStatus"];
    assert_eq!(status.kind, "string");
    assert!(status
        .description
        .as_deref()
        .unwrap()
        .contains("ACTIVE, INACTIVE"));
    assert_eq!(
        generated.properties["effectiveDate"].format.as_deref(),
        Some("date")
    );
    assert!(generated.properties["deductibleAmount"]
        .description
        .as_deref()
        .unwrap()
        .contains("only when planStatus is ACTIVE"));
    assert_eq!(generated.properties["followUpNeeded"].kind, "boolean");
    assert_eq!(
        generated.properties["callOutcome"]
            .allowed
            .as_ref()
            .unwrap()
            .len(),
        7
    );
    assert_eq!(generated.required, ["callOutcome"]);
    // Serialized as Vapi's JsonSchema names it.
    let wire = serde_json::to_value(&generated).unwrap();
    assert_eq!(wire["properties"]["callOutcome"]["enum"][0], "answered");
    assert_eq!(wire["type"], "object");
}

#[test]
fn variables_carry_inputs_request_type_and_questions() {
    let inputs = BTreeMap::from([("memberId".to_string(), "W123".to_string())]);
    let values = variable_values(&schema(), &inputs);
    assert_eq!(values["memberId"], "W123");
    assert_eq!(values["requestType"], "benefits");
    let questions = values["questions"].as_str().unwrap();
    assert_eq!(questions.lines().count(), 4);
    assert!(questions
        .contains("- planStatus: planStatus [multiple, required] (one of: ACTIVE, INACTIVE)"));
}

#[test]
fn ended_reasons_map_to_endings() {
    for reason in ["customer-busy", "customer-did-not-answer", "voicemail"] {
        assert_eq!(ending_for(reason), Ending::Unanswered, "{reason}");
    }
    for reason in ["exceeded-max-duration", "silence-timed-out"] {
        assert_eq!(ending_for(reason), Ending::OutOfTime, "{reason}");
    }
    for reason in [
        "assistant-ended-call",
        "customer-ended-call",
        "assistant-said-end-call-phrase",
    ] {
        assert_eq!(ending_for(reason), Ending::Conversation, "{reason}");
    }
    assert_eq!(
        ending_for("twilio-reported-customer-misdialed"),
        Ending::Misdialed
    );
    for reason in [
        "call.start.error-get-assistant",
        "assistant-not-found",
        "pipeline-error-openai-llm-failed",
        "worker-shutdown",
    ] {
        assert_eq!(ending_for(reason), Ending::PlatformError, "{reason}");
    }
}

#[test]
fn an_answered_call_keeps_values_under_schema_field_names() {
    let call = ended(
        "assistant-ended-call",
        json!({"callOutcome": "answered", "planStatus": "ACTIVE", "effectiveDate": "2026-01-01",
               "inNetwork": true, "deductibleAmount": 500, "unknownField": "x", "failureCode": "",
               "followUpNeeded": false}),
    );
    let report = report_from_call(&call, &schema());
    assert_eq!(report.disposition, Disposition::Completed);
    assert_eq!(
        report.captured,
        BTreeMap::from([
            ("deductibleAmount".to_string(), "500".to_string()),
            ("effectiveDate".to_string(), "2026-01-01".to_string()),
            ("inNetwork".to_string(), "true".to_string()),
            ("planStatus".to_string(), "ACTIVE".to_string()),
        ])
    );
    assert_eq!(report.duration_seconds, 750);
    assert_eq!(
        report.summary.as_deref(),
        Some("The representative confirmed the plan.")
    );
    assert!(report.transcript.unwrap().starts_with("AI: Hello"));
    assert!(report.recording);
    assert!(report.failure.is_none());
    assert!(!report.follow_up_requested);
}

#[test]
fn a_cannot_answer_value_and_a_follow_up_are_kept() {
    let call = ended(
        "customer-ended-call",
        json!({"callOutcome": "answered", "planStatus": "CANNOT ANSWER - not in the system",
               "followUpNeeded": true}),
    );
    let report = report_from_call(&call, &schema());
    assert_eq!(
        report.captured["planStatus"],
        "CANNOT ANSWER - not in the system"
    );
    assert!(report.follow_up_requested);
}

#[test]
fn unanswered_calls_are_redialed_and_holds_time_out() {
    for reason in ["customer-busy", "customer-did-not-answer", "voicemail"] {
        let report = report_from_call(&ended(reason, json!({})), &schema());
        assert_eq!(report.disposition, Disposition::Voicemail, "{reason}");
    }
    for reason in ["exceeded-max-duration", "silence-timed-out"] {
        let report = report_from_call(&ended(reason, json!({"callOutcome": "other"})), &schema());
        assert_eq!(report.disposition, Disposition::HoldTimeout, "{reason}");
    }
    // Out of time after the answers were given: the answers count.
    let report = report_from_call(
        &ended(
            "exceeded-max-duration",
            json!({"callOutcome": "answered", "planStatus": "ACTIVE"}),
        ),
        &schema(),
    );
    assert_eq!(report.disposition, Disposition::Completed);
}

#[test]
fn a_referral_dials_the_given_number() {
    let call = ended(
        "assistant-ended-call",
        json!({"callOutcome": "referred", "referralPhoneNumber": "+1 (800) 555-0188"}),
    );
    let report = report_from_call(&call, &schema());
    assert_eq!(report.disposition, Disposition::Referred);
    assert_eq!(report.referral_number.as_deref(), Some("8005550188"));
    let without = report_from_call(
        &ended("assistant-ended-call", json!({"callOutcome": "referred"})),
        &schema(),
    );
    assert_eq!(without.disposition, Disposition::Failed);
    assert_eq!(without.failure.unwrap().code, "OTHER");
}

#[test]
fn failures_take_fitting_codes_else_the_outcome_code() {
    let code = |outcome: &str, data: Value| {
        let report = report_from_call(&ended("assistant-ended-call", data), &schema());
        assert_eq!(report.disposition, Disposition::Failed, "{outcome}");
        let failure = report.failure.unwrap();
        (failure.category, failure.code)
    };
    assert_eq!(
        code(
            "not_found",
            json!({"callOutcome": "not_found", "failureCode": "claim_not_found"})
        ),
        ("NOT_FOUND".to_string(), "CLAIM_NOT_FOUND".to_string())
    );
    assert_eq!(
        code("not_found", json!({"callOutcome": "not_found"})),
        ("NOT_FOUND".to_string(), "MEMBER_NOT_FOUND".to_string())
    );
    assert_eq!(
        code(
            "missing",
            json!({"callOutcome": "missing_input", "failureCode": "PROVIDER_PTAN_MISSING"})
        ),
        ("NOT_FOUND".to_string(), "PROVIDER_PTAN_MISSING".to_string())
    );
    assert_eq!(
        code(
            "refused",
            json!({"callOutcome": "refused", "failureCode": "MEMBER_NOT_FOUND"})
        ),
        ("SYSTEM_ERROR".to_string(), "PAYER_REFUSAL".to_string())
    );
    assert_eq!(
        code("ivr", json!({"callOutcome": "ivr_failure"})),
        ("SYSTEM_ERROR".to_string(), "IVR_FAILURE".to_string())
    );
    assert_eq!(
        code(
            "wrong",
            json!({"callOutcome": "other", "failureCode": "PHONE_NUMBER_INCORRECT"})
        )
        .1,
        "PHONE_NUMBER_INCORRECT"
    );
    assert_eq!(code("nothing", json!({})).1, "OTHER");
    assert_eq!(
        failure_for_outcome("missing_input", Some("NONSENSE")).code,
        "OTHER"
    );
}

#[test]
fn platform_errors_and_misdials_fail() {
    let report = report_from_call(
        &ended("call.start.error-get-assistant", json!({})),
        &schema(),
    );
    assert_eq!(report.failure.unwrap().code, "OTHER");
    let report = report_from_call(
        &ended("twilio-reported-customer-misdialed", json!({})),
        &schema(),
    );
    assert_eq!(report.failure.unwrap().code, "PHONE_NUMBER_INCORRECT");
}

#[test]
fn us_numbers_normalize_to_ten_digits() {
    assert_eq!(ten_digits("18005550188").as_deref(), Some("8005550188"));
    assert_eq!(ten_digits("800-555-0188").as_deref(), Some("8005550188"));
    assert_eq!(ten_digits("555-0188"), None);
    assert_eq!(ten_digits("+44 20 7946 0958 12"), None);
}
