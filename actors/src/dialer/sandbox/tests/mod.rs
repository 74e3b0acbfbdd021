//! Tests of the sandbox generator against a claim-status-like schema and its appeal leg: the fixtures and
//! checks live here, the call scenarios in `calls.rs`, names, tables, timing and the electronic channel in
//! `rules.rs`.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use chrono::{NaiveDate, TimeZone, Utc};
use futures::FutureExt;
use switchboard_storage::{
    Disposition, FieldCondition, FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord,
};

use super::*;

mod calls;
mod rules;
use crate::dialer::{CallJob, Dialer};
use crate::electronic::sandbox::SandboxElectronic;
use crate::electronic::{ElectronicChannel, ElectronicJob};

fn field(name: &str, field_type: FieldType, required: bool) -> FieldRecord {
    FieldRecord {
        name: name.to_string(),
        label: name.to_string(),
        description: format!("What is the {name}?"),
        field_type,
        allowed_values: None,
        required,
        when: None,
    }
}

fn choice(name: &str, values: &[&str]) -> FieldRecord {
    let allowed = values.iter().map(|v| v.to_string()).collect();
    FieldRecord {
        allowed_values: Some(allowed),
        ..field(name, FieldType::Multiple, true)
    }
}

fn when(mut field: FieldRecord, on: &str, equals: &str) -> FieldRecord {
    field.when = Some(FieldCondition {
        field: on.to_string(),
        equals: equals.to_string(),
    });
    field
}

fn schema(id: &str, follow_up: Option<&str>, fields: Vec<FieldRecord>) -> Arc<SchemaVersionRecord> {
    Arc::new(SchemaVersionRecord {
        id: id.to_string(),
        version: 1,
        published_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        definition: SchemaDefinition {
            name: Some(id.to_string()),
            request_type: id.trim_end_matches("-basic").to_string(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: follow_up.map(str::to_string),
            fields,
            electronic: Default::default(),
        },
    })
}

fn claim_status() -> Arc<SchemaVersionRecord> {
    use FieldType::*;
    schema(
        "claim-status-basic",
        Some("claim-appeal-basic"),
        vec![
            choice("claimStatus", &["PAID", "DENIED", "PENDING"]),
            field("claimReceivedDate", Date, true),
            field("billedAmount", Dollar, true),
            field("claimOnFile", Boolean, true),
            field("payerClaimNumber", Alphanumeric, false),
            field("patientResponsibility", Dollar, false),
            field("eftEnrolled", Boolean, false),
            when(field("paidAmount", Dollar, false), "claimStatus", "PAID"),
            when(
                field("denialReason", Alphanumeric, false),
                "claimStatus",
                "DENIED",
            ),
            when(
                field("isAppealable", Boolean, false),
                "claimStatus",
                "DENIED",
            ),
            when(field("appealDeadline", Date, false), "isAppealable", "true"),
            field("callReferenceNumber", Alphanumeric, true),
            field("representativeName", Alphanumeric, true),
        ],
    )
}

fn appeal_leg() -> Arc<SchemaVersionRecord> {
    schema(
        "claim-appeal-basic",
        None,
        vec![
            choice("appealSubmissionMethod", &["FAX", "MAIL", "PORTAL"]),
            when(
                field("appealFaxNumber", FieldType::Alphanumeric, false),
                "appealSubmissionMethod",
                "FAX",
            ),
            field("appealFilingLimitDays", FieldType::Alphanumeric, true),
            field("appealCallReferenceNumber", FieldType::Alphanumeric, true),
        ],
    )
}

fn inputs(scenario: Option<&str>) -> BTreeMap<String, String> {
    let mut inputs: BTreeMap<String, String> = [
        ("payerName", "Aetna"),
        ("memberId", "W123456789"),
        ("patientFirstName", "Jane"),
        ("patientLastName", "Doe"),
        ("patientDateOfBirth", "1980-02-14"),
        ("dateOfService", "2026-03-02"),
        ("billingProviderNpi", "1234567893"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if let Some(scenario) = scenario {
        inputs.insert(SCENARIO_INPUT.to_string(), scenario.to_string());
    }
    inputs
}

fn job(scenario: Option<&str>, step_index: usize, attempt: u32, seed: u64) -> CallJob {
    CallJob {
        call_id: format!("call-{step_index}-{attempt}").into(),
        request_id: "req-1".to_string().into(),
        seq: attempt,
        attempt,
        step_key: format!("step-{step_index}").into(),
        step_index,
        schema: if step_index == 0 {
            claim_status()
        } else {
            appeal_leg()
        },
        inputs: inputs(scenario),
        number: "8005550101".to_string(),
        placed_at: chrono::DateTime::UNIX_EPOCH,
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        restarts: 0,
        seed,
        time_scale: 1_000_000.0,
        ai_only: false,
        onshore_only: false,
        known: BTreeMap::new(),
    }
}

async fn place(job: CallJob) -> CallReport {
    SandboxDialer::new().place(job).await
}

/// Whether `value` is a value of `field`'s type (or an explicit non-answer).
fn typed(field: &FieldRecord, value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    value.starts_with("CANNOT ANSWER - ")
        || match field.field_type {
            FieldType::Alphanumeric => !value.trim().is_empty(),
            FieldType::Boolean => value == "true" || value == "false",
            FieldType::Multiple => field.allowed_values.iter().flatten().any(|v| v == value),
            FieldType::Dollar => value
                .split_once('.')
                .is_some_and(|(w, c)| digits(w) && digits(c) && c.len() == 2),
            FieldType::Date => {
                value.len() == 10 && NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok()
            }
        }
}

/// Every required field is captured with a typed value; conditional fields exactly when their condition
/// holds; nothing outside the schema.
fn assert_well_formed(schema: &SchemaVersionRecord, captured: &BTreeMap<String, String>) {
    let fields = &schema.definition.fields;
    for field in fields {
        match (captured.get(&field.name), &field.when) {
            (Some(value), _) => assert!(typed(field, value), "{} = {value:?}", field.name),
            (None, _) if field.required => panic!("required {} missing: {captured:?}", field.name),
            (None, _) => {}
        }
        if let Some(cond) = &field.when {
            let holds = captured.get(&cond.field) == Some(&cond.equals);
            assert_eq!(
                captured.contains_key(&field.name),
                holds,
                "{}: {captured:?}",
                field.name
            );
        }
    }
    assert!(captured.keys().all(|k| fields.iter().any(|f| &f.name == k)));
}

fn assert_completed_call(report: &CallReport) {
    assert_eq!(report.disposition, Disposition::Completed);
    assert!((180..=600).contains(&report.duration_seconds));
    assert!(report.recording && report.failure.is_none());
    let from = report.from_number.as_deref().unwrap();
    assert!(from.starts_with("+161755501") && from.len() == 12, "{from}");
    let transcript = report.transcript.as_deref().unwrap();
    assert!(
        transcript.contains("Aetna")
            && transcript.contains("Agent: ")
            && transcript.contains("Representative: ")
    );
    assert!(transcript.lines().count() > 10, "{transcript}");
    for text in [
        &report.summary,
        &report.audit_summary,
        &report.transcript_post_call,
    ] {
        assert!(text.as_deref().is_some_and(|t| !t.is_empty()));
    }
}
