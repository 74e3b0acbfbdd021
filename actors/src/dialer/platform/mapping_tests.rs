use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;
use switchboard_storage::{
    Disposition, FieldCondition, FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord,
};

use super::*;
use crate::dialer::platform::extraction::{extraction_fields, prompt_variables};
use crate::dialer::platform::ExtractionType;

fn schema() -> Arc<SchemaVersionRecord> {
    let field = |name: &str, field_type, allowed: Option<Vec<&str>>| FieldRecord {
        name: name.into(),
        label: name.into(),
        description: format!("What is {name}?"),
        field_type,
        allowed_values: allowed.map(|v| v.into_iter().map(str::to_owned).collect()),
        required: true,
        when: None,
    };
    Arc::new(SchemaVersionRecord {
        id: "vob-basic".into(),
        version: 1,
        published_at: chrono::DateTime::UNIX_EPOCH,
        definition: SchemaDefinition {
            name: None,
            request_type: "vob".into(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: None,
            fields: vec![
                field("planActive", FieldType::Boolean, None),
                field("planType", FieldType::Multiple, Some(vec!["HMO", "PPO"])),
                field("deductible", FieldType::Dollar, None),
                field("effectiveDate", FieldType::Date, None),
            ],
            electronic: Default::default(),
        },
    })
}

fn job() -> CallJob {
    CallJob {
        call_id: "call-1".into(),
        request_id: "req-1".into(),
        seq: 1,
        attempt: 1,
        step_key: "s1".into(),
        step_index: 0,
        schema: schema(),
        inputs: BTreeMap::new(),
        number: "8005550101".into(),
        placed_at: chrono::DateTime::UNIX_EPOCH,
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        known: BTreeMap::new(),
        restarts: 0,
        seed: 1,
        time_scale: 1.0,
        ai_only: false,
        onshore_only: false,
    }
}

fn conversation(analysis: serde_json::Value) -> CallResult {
    CallResult::Platform(PlatformResult {
        end: CallEnd::Conversation,
        end_detail: Some("agent_hangup".into()),
        duration_seconds: 300,
        analysis: serde_json::from_value(analysis).unwrap(),
        transcript: Some("Agent: hello".into()),
        summary: Some("Verified.".into()),
        from_number: Some("+14155550100".into()),
        recording_url: None,
        cost_cents: Some(156),
    })
}

fn ended(end: CallEnd) -> CallResult {
    CallResult::Platform(PlatformResult {
        end,
        end_detail: None,
        duration_seconds: 0,
        analysis: BTreeMap::new(),
        transcript: None,
        summary: None,
        from_number: None,
        recording_url: None,
        cost_cents: None,
    })
}

#[test]
fn the_extraction_names_types_and_describes_every_schema_field_then_the_controls() {
    let fields = extraction_fields(&schema());
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "planActive",
            "planType",
            "deductible",
            "effectiveDate",
            "callOutcome",
            "failureCode",
            "referralPhoneNumber",
            "followUpNeeded"
        ]
    );
    assert_eq!(fields[0].kind, ExtractionType::Boolean);
    assert_eq!(
        fields[1].kind,
        ExtractionType::Choice(vec!["HMO".into(), "PPO".into()])
    );
    assert_eq!(fields[2].kind, ExtractionType::Number);
    assert_eq!(fields[3].kind, ExtractionType::Text);
    assert!(fields[0].description.starts_with("What is planActive?"));
    assert!(fields[4].control && !fields[3].control);
}

#[test]
fn a_call_after_an_electronic_answer_asks_only_the_open_questions_and_is_told_what_is_known() {
    let mut schema = (*schema()).clone();
    schema.definition.fields.push(FieldRecord {
        name: "terminationDate".into(),
        label: "terminationDate".into(),
        description: "When did the plan end?".into(),
        field_type: FieldType::Date,
        allowed_values: None,
        required: false,
        when: Some(FieldCondition {
            field: "planActive".into(),
            equals: "false".into(),
        }),
    });
    let known = BTreeMap::from([
        ("planActive".to_owned(), "true".to_owned()),
        ("planType".to_owned(), "PPO".to_owned()),
    ]);
    // The extraction still names every field: one value per field of the step's schema.
    let extracted = extraction_fields(&schema).len();
    assert_eq!(extracted, schema.definition.fields.len() + 4);
    let inputs = BTreeMap::from([("memberId".to_owned(), "W123".to_owned())]);
    let variables = prompt_variables(&schema, &inputs, &known);
    // Neither the answered fields nor the one their answer rules out are asked.
    assert_eq!(
        variables["questions"],
        "1. What is deductible? (deductible)\n2. What is effectiveDate? (effectiveDate)"
    );
    assert_eq!(
        variables["known_answers"],
        "planActive: true\nplanType: PPO"
    );
    assert_eq!(variables["memberId"], "W123");
    let nothing_known = prompt_variables(&schema, &inputs, &BTreeMap::new());
    assert_eq!(nothing_known["known_answers"], "");
    assert!(nothing_known["questions"].starts_with("1. What is planActive? (planActive)\n"));
    assert!(nothing_known["questions"].ends_with("5. When did the plan end? (terminationDate)"));
}

#[test]
fn a_field_whose_condition_rests_on_a_ruled_out_field_is_not_asked_either() {
    // claim-status-basic's chain: appealDeadline asks after isAppealable, which only a denied claim asks.
    let conditional = |name: &str, field_type, on: &str, equals: &str| FieldRecord {
        name: name.into(),
        label: name.into(),
        description: format!("What is {name}?"),
        field_type,
        allowed_values: None,
        required: false,
        when: Some(FieldCondition {
            field: on.into(),
            equals: equals.into(),
        }),
    };
    let mut schema = (*schema()).clone();
    schema.definition.fields = vec![
        FieldRecord {
            name: "claimStatus".into(),
            label: "claimStatus".into(),
            description: "What is claimStatus?".into(),
            field_type: FieldType::Multiple,
            allowed_values: Some(vec!["PAID".into(), "DENIED".into()]),
            required: true,
            when: None,
        },
        conditional("paidAmount", FieldType::Dollar, "claimStatus", "PAID"),
        conditional("isAppealable", FieldType::Boolean, "claimStatus", "DENIED"),
        conditional("appealDeadline", FieldType::Date, "isAppealable", "true"),
        conditional(
            "appealAddress",
            FieldType::Alphanumeric,
            "appealDeadline",
            "2026-01-01",
        ),
    ];
    let inputs = BTreeMap::new();
    let paid = BTreeMap::from([("claimStatus".to_owned(), "PAID".to_owned())]);
    assert_eq!(
        prompt_variables(&schema, &inputs, &paid)["questions"],
        "1. What is paidAmount? (paidAmount)",
        "a paid claim asks neither the appeal question nor anything chained to it"
    );
    let denied = BTreeMap::from([("claimStatus".to_owned(), "DENIED".to_owned())]);
    assert_eq!(
        prompt_variables(&schema, &inputs, &denied)["questions"],
        "1. What is isAppealable? (isAppealable)\n2. What is appealDeadline? (appealDeadline)\n\
         3. What is appealAddress? (appealAddress)",
        "a denied claim keeps the whole chain open: only the call can tell whether it is appealable"
    );
    let not_appealable = BTreeMap::from([
        ("claimStatus".to_owned(), "DENIED".to_owned()),
        ("isAppealable".to_owned(), "false".to_owned()),
    ]);
    assert_eq!(
        prompt_variables(&schema, &inputs, &not_appealable)["questions"],
        ""
    );
}

#[test]
fn cannot_answer_on_a_boolean_and_a_multiple_field_is_an_answer_kept_verbatim() {
    let report = report(
        &job(),
        conversation(json!({
            "callOutcome": "answered",
            "planActive": "CANNOT ANSWER - representative could not confirm",
            "planType": "CANNOT ANSWER - the plan type is not on file",
            "deductible": "$1,500", "effectiveDate": "2026-01-01", "followUpNeeded": false,
        })),
    );
    assert_eq!(report.disposition, Disposition::Completed);
    assert_eq!(
        report.captured["planActive"],
        "CANNOT ANSWER - representative could not confirm"
    );
    assert_eq!(
        report.captured["planType"],
        "CANNOT ANSWER - the plan type is not on file"
    );
    assert_eq!(report.captured["deductible"], "1500.00");
    assert!(report.failure.is_none());
}

#[test]
fn typed_answers_given_as_text_are_read_back_in_the_field_s_type() {
    let report = report(
        &job(),
        conversation(json!({
            "callOutcome": "answered", "planActive": "True", "planType": "ppo",
            "deductible": "250.5", "effectiveDate": "2026-01-01",
        })),
    );
    assert_eq!(report.captured["planActive"], "true");
    assert_eq!(report.captured["planType"], "PPO");
    assert_eq!(report.captured["deductible"], "250.50");
}

#[test]
fn schema_fields_describe_their_typed_answers_and_the_non_answer() {
    let fields = extraction_fields(&schema());
    assert!(fields[0].description.contains("Answer true or false."));
    assert!(fields[1]
        .description
        .contains("Answer with one of: HMO, PPO."));
    assert!(fields[..4]
        .iter()
        .all(|f| f.admits_cannot_answer() && f.description.contains("CANNOT ANSWER - ")));
    assert!(fields[4..].iter().all(|f| !f.admits_cannot_answer()));
}

#[test]
fn an_answered_call_captures_schema_fields_only_and_keeps_cannot_answer_values() {
    let report = report(
        &job(),
        conversation(json!({
            "callOutcome": "answered", "planActive": true, "planType": "PPO", "deductible": 1500,
            "effectiveDate": "CANNOT ANSWER - the system is down", "stray": "x", "followUpNeeded": false,
        })),
    );
    assert_eq!(report.disposition, Disposition::Completed);
    assert_eq!(report.captured["planActive"], "true");
    assert_eq!(report.captured["deductible"], "1500.00");
    assert_eq!(
        report.captured["effectiveDate"],
        "CANNOT ANSWER - the system is down"
    );
    assert!(!report.captured.contains_key("stray") && !report.captured.contains_key("callOutcome"));
    assert_eq!(report.duration_seconds, 300);
    assert!(!report.follow_up_requested);
    assert_eq!(
        report.cost_cents,
        Some(156),
        "the platform's price is the call's"
    );
}

#[test]
fn unreached_calls_redial_and_long_holds_time_out() {
    for end in [CallEnd::Busy, CallEnd::NoAnswer, CallEnd::Voicemail] {
        assert_eq!(
            report(&job(), ended(end)).disposition,
            Disposition::Voicemail,
            "{end:?}"
        );
    }
    for end in [CallEnd::MaxDuration, CallEnd::HoldTooLong] {
        assert_eq!(
            report(&job(), ended(end)).disposition,
            Disposition::HoldTimeout,
            "{end:?}"
        );
    }
    let wrong = report(&job(), ended(CallEnd::InvalidNumber));
    assert_eq!(
        wrong.cost_cents, None,
        "no price reported: the duration prices it"
    );
    assert_eq!(wrong.failure.unwrap().code, "PHONE_NUMBER_INCORRECT");
}

#[test]
fn failures_become_7_3_codes() {
    let cases = [
        (
            json!({"callOutcome": "refused"}),
            "SYSTEM_ERROR",
            "PAYER_REFUSAL",
        ),
        (
            json!({"callOutcome": "ivr_failure"}),
            "SYSTEM_ERROR",
            "IVR_FAILURE",
        ),
        (
            json!({"callOutcome": "not_found", "failureCode": "MEMBER_NOT_FOUND"}),
            "NOT_FOUND",
            "MEMBER_NOT_FOUND",
        ),
        (json!({"callOutcome": "not_found"}), "NOT_FOUND", "OTHER"),
        (
            json!({"callOutcome": "missing_input", "failureCode": "member group missing"}),
            "NOT_FOUND",
            "MEMBER_GROUP_MISSING",
        ),
        (
            json!({"callOutcome": "other", "failureCode": "PHONE_NUMBER_INCORRECT"}),
            "SYSTEM_ERROR",
            "PHONE_NUMBER_INCORRECT",
        ),
    ];
    for (analysis, category, code) in cases {
        let report = report(&job(), conversation(analysis.clone()));
        assert_eq!(report.disposition, Disposition::Failed, "{analysis}");
        let failure = report.failure.unwrap();
        assert_eq!(
            (failure.category.as_str(), failure.code.as_str()),
            (category, code),
            "{analysis}"
        );
    }
}

#[test]
fn a_referral_dials_the_given_number_and_follow_ups_are_requested() {
    let referred = report(
        &job(),
        conversation(
            json!({"callOutcome": "referred", "referralPhoneNumber": "+1 (888) 555-0111"}),
        ),
    );
    assert_eq!(referred.disposition, Disposition::Referred);
    assert_eq!(referred.referral_number.as_deref(), Some("8885550111"));
    let follow = report(
        &job(),
        conversation(
            json!({"callOutcome": "answered", "planActive": false, "followUpNeeded": true}),
        ),
    );
    assert!(follow.follow_up_requested);
}

#[test]
fn an_agent_report_passes_through() {
    let outcome: crate::dialer::http::AgentOutcome = serde_json::from_value(json!({
        "disposition": "voicemail", "durationSeconds": 12, "transcript": null, "transcriptPostCall": null,
        "summary": null, "auditSummary": null, "fromNumber": null, "failure": null, "referralNumber": null,
    }))
    .unwrap();
    assert_eq!(
        report(&job(), CallResult::Agent(outcome)).disposition,
        Disposition::Voicemail
    );
}
