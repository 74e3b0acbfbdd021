//! Tests of the payer simulator: fixtures (schemas shaped like the demo configuration's) and helpers live
//! here; single calls in `calls.rs`; profiles, the pure decision and missing inputs in `rules.rs`;
//! referrals and wrong numbers in `referrals.rs`; lengths and waits in `timing.rs`; whole requests (redials, referrals, follow-ups) and the outcome distribution in
//! `requests.rs`.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{NaiveDate, TimeZone, Utc};
use switchboard_storage::{
    FieldCondition, FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord,
};

use super::*;
use crate::dialer::sandbox::dice::Dice;

mod calls;
mod referrals;
mod requests;
mod rules;
mod timing;
mod week;

/// Huge: waits round to nothing.
const FAST: f64 = 1.0e12;

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

fn choice(name: &str, values: &[&str], required: bool) -> FieldRecord {
    FieldRecord {
        allowed_values: Some(values.iter().map(|v| v.to_string()).collect()),
        ..field(name, FieldType::Multiple, required)
    }
}

fn when(mut field: FieldRecord, on: &str, equals: &str) -> FieldRecord {
    field.when = Some(FieldCondition {
        field: on.to_string(),
        equals: equals.to_string(),
    });
    field
}

fn schema(
    id: &str,
    request_type: &str,
    follow_up: Option<&str>,
    fields: Vec<FieldRecord>,
) -> Arc<SchemaVersionRecord> {
    Arc::new(SchemaVersionRecord {
        id: id.to_string(),
        version: 1,
        published_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        definition: SchemaDefinition {
            name: Some(id.to_string()),
            request_type: request_type.to_string(),
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
    let statuses = [
        "PAID",
        "PARTIALLY_PAID",
        "DENIED",
        "PENDING",
        "IN_PROCESS",
        "NOT_ON_FILE",
    ];
    schema(
        "claim-status-basic",
        "claim-status",
        Some("claim-appeal-basic"),
        vec![
            choice("claimStatus", &statuses, true),
            field("payerClaimNumber", Alphanumeric, false),
            field("claimReceivedDate", Date, false),
            field("billedAmount", Dollar, false),
            when(field("paidAmount", Dollar, false), "claimStatus", "PAID"),
            when(field("paymentDate", Date, false), "claimStatus", "PAID"),
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
    use FieldType::*;
    schema(
        "claim-appeal-basic",
        "claim-appeal",
        None,
        vec![
            choice(
                "appealSubmissionMethod",
                &["FAX", "MAIL", "PORTAL", "PHONE"],
                true,
            ),
            when(
                field("appealFaxNumber", Alphanumeric, false),
                "appealSubmissionMethod",
                "FAX",
            ),
            field("appealFilingLimitDays", Alphanumeric, true),
            field("appealCallReferenceNumber", Alphanumeric, true),
        ],
    )
}

fn vob() -> Arc<SchemaVersionRecord> {
    use FieldType::*;
    schema(
        "vob-basic",
        "vob",
        None,
        vec![
            field("planActive", Boolean, true),
            choice("planType", &["HMO", "PPO", "EPO", "POS"], false),
            field("effectiveDate", Date, false),
            field("providerInNetwork", Boolean, true),
            field("individualDeductible", Dollar, false),
            field("individualDeductibleMet", Dollar, false),
            field("outOfPocketMax", Dollar, false),
            field("copayAmount", Dollar, false),
            field("coinsurancePercent", Alphanumeric, false),
            field("priorAuthRequired", Boolean, false),
            field("callReferenceNumber", Alphanumeric, true),
            field("representativeName", Alphanumeric, true),
        ],
    )
}

fn prior_auth() -> Arc<SchemaVersionRecord> {
    use FieldType::*;
    schema(
        "prior-auth-basic",
        "prior-auth",
        None,
        vec![
            choice(
                "authStatus",
                &["APPROVED", "DENIED", "PENDED", "NOT_ON_FILE"],
                true,
            ),
            when(
                field("authorizationNumber", Alphanumeric, false),
                "authStatus",
                "APPROVED",
            ),
            field("callReferenceNumber", Alphanumeric, true),
        ],
    )
}

fn inputs(payer: &str, extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let base = [
        ("payerName", payer),
        ("memberId", "W123456789"),
        ("patientFirstName", "Jane"),
        ("patientLastName", "Doe"),
        ("patientDateOfBirth", "1980-02-14"),
        ("dateOfService", "2026-03-02"),
        ("billingProviderNpi", "1234567893"),
        ("billingProviderTaxId", "123456789"),
    ];
    base.iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn job(
    schema: Arc<SchemaVersionRecord>,
    inputs: BTreeMap<String, String>,
    step_index: usize,
    attempt: u32,
    seed: u64,
) -> CallJob {
    CallJob {
        call_id: format!("call-{step_index}-{attempt}").into(),
        request_id: format!("req-{seed}").into(),
        seq: attempt,
        attempt,
        step_key: format!("step-{step_index}").into(),
        step_index,
        schema,
        inputs,
        number: "8005550101".to_string(),
        placed_at: chrono::DateTime::UNIX_EPOCH,
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        restarts: 0,
        seed,
        time_scale: FAST,
        ai_only: false,
        onshore_only: false,
        known: BTreeMap::new(),
    }
}

/// Dice for pure-function tests.
fn dice(seed: u64) -> Dice {
    Dice::new(seed, &BTreeMap::new(), 0, 1)
}

/// A profile with every rate 0: every call completes.
fn quiet() -> PayerProfile {
    PayerProfile {
        ivr_failure_rate: 0.0,
        hold_minutes_median: 12.0,
        hold_timeout_rate: 0.0,
        voicemail_rate: 0.0,
        refusal_rate: 0.0,
        referral_rate: 0.0,
        not_found_rate: 0.0,
        missing_input_rate: 0.0,
        wrong_number_rate: 0.0,
    }
}

async fn place(dialer: &SimulatedPayerDialer, job: CallJob) -> CallReport {
    dialer.place(job).await
}

/// Whether `value` is a value of `field`'s type.
fn typed(field: &FieldRecord, value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match field.field_type {
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

/// Every required field captured with a typed value; conditional fields exactly when their condition
/// holds; nothing outside the schema.
fn assert_well_formed(schema: &SchemaVersionRecord, captured: &BTreeMap<String, String>) {
    let fields = &schema.definition.fields;
    for field in fields {
        match captured.get(&field.name) {
            Some(value) => assert!(typed(field, value), "{} = {value:?}", field.name),
            None => assert!(
                !field.required,
                "required {} missing: {captured:?}",
                field.name
            ),
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
