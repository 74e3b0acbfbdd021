//! Unit tests of the request's rules, with plain `#[test]` and no actix `System`: every edge of
//! [`super::decide`] (`decide.rs`) and the terminal record and its webhook (`finalize.rs`).

mod decide;
mod fallback;
mod finalize;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use switchboard_storage::{
    AccountRecord, CallOutcomeRecord, CallRecord, CallReport, CredentialRecord, Disposition,
    ElectronicRecord, Environment, Feature, FieldRecord, FieldType, NumberSource, RequestRecord,
    RequestState, RunRecord, SchemaDefinition, SchemaVersionRecord, StepRecord, StepState,
};

use super::SchemaCatalog;
use crate::orchestration::error::OrchestrationError;

fn now() -> DateTime<Utc> {
    "2026-11-23T15:00:00Z".parse().unwrap()
}

fn seconds_ago(seconds: i64) -> DateTime<Utc> {
    now() - Duration::seconds(seconds)
}

fn field(name: &str, required: bool) -> FieldRecord {
    FieldRecord {
        name: name.into(),
        label: name.to_uppercase(),
        description: format!("What is {name}?"),
        field_type: FieldType::Alphanumeric,
        allowed_values: None,
        required,
        when: None,
    }
}

/// `vob` asks for `a` and `b` (and `c`, optional) and names `leg` as its follow-up; `leg` asks for `x`
/// and `y`.
fn schema(id: &str, version: u32) -> Arc<SchemaVersionRecord> {
    let (fields, follow_up) = match id {
        "leg" => (vec![field("x", true), field("y", true)], None),
        _ => (
            vec![field("a", true), field("b", true), field("c", false)],
            Some("leg".to_owned()),
        ),
    };
    Arc::new(SchemaVersionRecord {
        id: id.into(),
        version,
        published_at: seconds_ago(86_400),
        definition: SchemaDefinition {
            name: Some(format!("{id} v{version}")),
            request_type: "vob".into(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up,
            fields,
            electronic: Default::default(),
        },
    })
}

/// Schemas in memory: each id's published versions, the last one latest.
#[derive(Default)]
struct Catalog {
    published: BTreeMap<String, Vec<u32>>,
}

impl Catalog {
    fn with(schemas: &[(&str, &[u32])]) -> Catalog {
        Catalog {
            published: schemas
                .iter()
                .map(|(id, versions)| ((*id).to_owned(), versions.to_vec()))
                .collect(),
        }
    }

    /// `vob` v1 and v2, and the leg `leg` v1.
    fn full() -> Catalog {
        Catalog::with(&[("vob", &[1, 2]), ("leg", &[1])])
    }
}

impl SchemaCatalog for Catalog {
    async fn latest_version(&mut self, id: &str) -> Result<Option<u32>, OrchestrationError> {
        Ok(self.published.get(id).and_then(|v| v.last().copied()))
    }

    async fn version(
        &mut self,
        id: &str,
        version: u32,
    ) -> Result<Arc<SchemaVersionRecord>, OrchestrationError> {
        match self.published.get(id).is_some_and(|v| v.contains(&version)) {
            true => Ok(schema(id, version)),
            false => Err(OrchestrationError::SchemaMissing {
                id: id.to_owned(),
                version,
            }),
        }
    }
}

fn account(features: &[Feature]) -> AccountRecord {
    AccountRecord {
        id: "acme".into(),
        name: "Acme".into(),
        daily_call_capacity: 10,
        timezone: "America/New_York".into(),
        webhook_url: Some("https://hooks.example/acme".into()),
        webhook_secret: Some("whsec_acme".into()),
        features: features.to_vec(),
        schemas: vec!["vob".into()],
        phone_book: vec![],
        credentials: vec![
            credential("cred-live", Environment::Production, "pk_live"),
            credential("cred-test", Environment::Sandbox, "pk_test"),
        ],
        provider_name: None,
        retention_days: None,
        task_timeout_hours: None,
        dialer: None,
    }
}

fn credential(id: &str, environment: Environment, key: &str) -> CredentialRecord {
    CredentialRecord {
        id: id.into(),
        environment,
        key: key.into(),
        secret_sha256: String::new(),
        secret_argon2: String::new(),
        issued_at: seconds_ago(86_400),
    }
}

/// A production request for `vob`, booked on version 1, whose day has come.
fn request() -> RequestRecord {
    let day: NaiveDate = "2026-11-23".parse().unwrap();
    RequestRecord {
        id: "req-1".into(),
        account_id: "acme".into(),
        environment: Environment::Production,
        batch_id: "batch-1".into(),
        schema_id: "vob".into(),
        schema_version: 1,
        request_type: "vob".into(),
        inputs: BTreeMap::new(),
        internal_id: Some("claim-42".into()),
        internal_tag: None,
        webhook_url: None,
        ai_only: false,
        onshore_only: false,
        payer_lookup: None,
        dial: None,
        credential_id: Some("cred-live".into()),
        payer_electronic: false,
        electronic_payer_id: None,
        state: RequestState::Processing,
        created_at: seconds_ago(3_600),
        due_date: day,
        due_at: seconds_ago(1_800),
        completed_at: None,
        run: None,
        trace: None,
    }
}

/// [`request`] with a run pinned to `vob` v2.
fn running(steps: Vec<StepRecord>, calls: Vec<CallRecord>) -> RequestRecord {
    RequestRecord {
        run: Some(RunRecord {
            started_at: Some(seconds_ago(600)),
            schema_version: 2,
            steps,
            calls,
            ..RunRecord::default()
        }),
        ..request()
    }
}

fn with_electronic(mut record: RequestRecord, captured: &[&str]) -> RequestRecord {
    record.run.as_mut().unwrap().electronic = Some(ElectronicRecord {
        at: seconds_ago(300),
        captured: captured
            .iter()
            .map(|f| ((*f).to_owned(), format!("{f}-value")))
            .collect(),
        channel: Some("simulated".into()),
        transaction_id: Some("tx-9".into()),
        sources: BTreeMap::new(),
        outcome: Some("answered".into()),
        closes_request: false,
        cost_cents: Some(30),
    });
    record
}

fn step(number: usize, schema_id: &str, state: StepState) -> StepRecord {
    StepRecord {
        key: format!("step-{number}").into(),
        schema_id: schema_id.into(),
        schema_version: if schema_id == "leg" { 1 } else { 2 },
        name: schema_id.into(),
        state,
        triggered_by: (number > 1).then(|| "step-1".into()),
        fields_required: 2,
        fields_captured: 0,
        missing_fields: match schema_id {
            "leg" => vec!["x".into(), "y".into()],
            _ => vec!["a".into(), "b".into()],
        },
        error: None,
    }
}

/// A completed call of `step_key` that captured `captured`.
fn call(seq: u32, step_key: &str, captured: &[&str], follow_up_requested: bool) -> CallRecord {
    CallRecord {
        id: format!("call-{seq}").into(),
        seq,
        step_key: step_key.into(),
        attempt: 1,
        to: "8005550123".into(),
        number_source: NumberSource::Input,
        placed_at: seconds_ago(120),
        outcome: Some(Arc::new(CallOutcomeRecord {
            ended_at: seconds_ago(60),
            report: CallReport {
                duration_seconds: 60,
                captured: captured
                    .iter()
                    .map(|f| ((*f).to_owned(), format!("{f}-by-phone")))
                    .collect(),
                follow_up_requested,
                ..CallReport::new(Disposition::Completed)
            },
        })),
        platform: None,
    }
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}
