//! A call placed after an electronic answer agrees with it (issue 13, "consistent call summaries"): it
//! does not ask again what the answer filled, its conditional questions follow the answer's values, and
//! its summary and transcript never state a different claim status.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use switchboard_storage::{
    Disposition, FieldCondition, FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord,
};

use crate::dialer::sandbox::SandboxDialer;
use crate::dialer::simulated::SimulatedPayerDialer;
use crate::dialer::{CallJob, Dialer};

fn field(name: &str, field_type: FieldType, required: bool, when: Option<&str>) -> FieldRecord {
    FieldRecord {
        name: name.into(),
        label: name.into(),
        description: format!("What is the {name}?"),
        field_type,
        allowed_values: (field_type == FieldType::Multiple)
            .then(|| vec!["PAID".into(), "DENIED".into(), "PENDING".into()]),
        required,
        when: when.map(|equals| FieldCondition {
            field: "claimStatus".into(),
            equals: equals.into(),
        }),
    }
}

fn claim_status() -> Arc<SchemaVersionRecord> {
    use FieldType::*;
    Arc::new(SchemaVersionRecord {
        id: "claim-status-basic".into(),
        version: 1,
        published_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        definition: SchemaDefinition {
            name: Some("Claim status".into()),
            request_type: "claim-status".into(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: Some("claim-appeal-basic".into()),
            fields: vec![
                field("claimStatus", Multiple, true, None),
                field("paidAmount", Dollar, false, Some("PAID")),
                field("denialReason", Alphanumeric, false, Some("DENIED")),
                field("pendingReason", Alphanumeric, false, Some("PENDING")),
                field("callReferenceNumber", Alphanumeric, true, None),
                field("representativeName", Alphanumeric, true, None),
            ],
            electronic: Default::default(),
        },
    })
}

fn job(seed: u64, scenario: Option<&str>) -> CallJob {
    let mut inputs = BTreeMap::from([
        ("payerName".to_string(), "Aetna".to_string()),
        ("memberId".to_string(), format!("W{seed:09}")),
        ("claimNumber".to_string(), "CLM-1".to_string()),
    ]);
    if let Some(scenario) = scenario {
        inputs.insert("sandboxScenario".into(), scenario.into());
    }
    CallJob {
        call_id: format!("call-{seed}").into(),
        request_id: format!("req-{seed}").into(),
        seq: 1,
        attempt: 1,
        step_key: "step-1".into(),
        step_index: 0,
        schema: claim_status(),
        inputs,
        number: "8005550101".into(),
        placed_at: chrono::DateTime::UNIX_EPOCH,
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        restarts: 0,
        seed,
        time_scale: 1.0e12,
        ai_only: false,
        onshore_only: false,
        known: BTreeMap::from([("claimStatus".to_string(), "PAID".to_string())]),
    }
}

#[tokio::test]
async fn a_call_after_an_electronic_paid_status_never_reports_another_status() {
    let simulated = SimulatedPayerDialer::new();
    let sandbox = SandboxDialer::new();
    let mut completed = 0;
    for seed in 0..60 {
        let reports = [
            simulated.place(job(seed, None)).await,
            sandbox.place(job(seed, Some("digital_plus_phone"))).await,
            sandbox.place(job(seed, Some("follow_up"))).await,
        ];
        for report in reports {
            if report.disposition != Disposition::Completed {
                continue;
            }
            completed += 1;
            assert!(
                !report.captured.contains_key("claimStatus"),
                "asked again: {:?}",
                report.captured
            );
            assert!(
                report.captured.contains_key("paidAmount"),
                "the question the electronic PAID opens is asked: {:?}",
                report.captured
            );
            assert!(
                !report.captured.contains_key("denialReason")
                    && !report.captured.contains_key("pendingReason"),
                "{:?}",
                report.captured
            );
            let texts = [
                report.summary.clone().unwrap_or_default(),
                report.transcript.clone().unwrap_or_default(),
                report.transcript_post_call.clone().unwrap_or_default(),
            ]
            .join("\n");
            for other in ["DENIED", "Denied", "PENDING", "Pending"] {
                assert!(!texts.contains(other), "{other} in {texts}");
            }
        }
    }
    assert!(completed > 60, "{completed}");
}
