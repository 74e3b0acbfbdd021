//! `RequestResponse` (service-interface 2.4): a request as `GET /v1/requests/{requestId}` and the entries
//! of `GET /v1/requests` show it.

use std::collections::BTreeMap;

use serde::Serialize;
use switchboard_actors::cost::RequestCost;
use switchboard_storage::{
    Feature, Modality, RequestBatchId, RequestId, RequestRecord, RequestState, RunRecord,
};
use utoipa::ToSchema;

use super::call_trace::{CallStepOut, ContributingCallOut, Tracing};
use super::calls::{self, AttemptOut, FirstCall};
use super::cost::CostOut;
use super::lookup::PayerLookupOut;
use super::outcome::{DataCompletenessOut, FailureOut, ModalityOut, RequestStateOut};
use super::{format_timestamp, ReadContext};

/// A request as the read endpoints show it (2.4). Response objects can gain keys over time: ignore
/// unknown keys. Fields marked single-read only never appear on `GET /v1/requests` entries.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestOut {
    /// Server-generated.
    #[schema(value_type = String)]
    pub request_id: RequestId,
    /// The business day's batch the request was booked into.
    #[schema(value_type = String)]
    pub request_batch_id: RequestBatchId,
    /// The schema the request runs.
    pub schema_id: String,
    /// Derived from the schema.
    pub request_type: String,
    /// Where the request stands.
    pub state: RequestStateOut,
    /// Flat string map as accepted.
    pub inputs: BTreeMap<String, String>,
    /// Schema-specific keys: `{}` on `PROCESSING` and `FAILURE`, partial on `PARTIAL`, full on `SUCCESS`. An
    /// unanswered field is absent, never `null`; `CANNOT ANSWER - <reason>` may appear as a value.
    pub results: BTreeMap<String, String>,
    /// Schema fields not obtained; empty on `SUCCESS` and `PROCESSING`.
    pub missing_fields: Vec<String>,
    /// ISO 8601 with microseconds and an explicit `+00:00` offset, e.g. `2026-11-23T14:00:00.000000+00:00`.
    pub date_created: String,
    /// When the request reached its terminal state (same format as `dateCreated`); `null` while `PROCESSING`.
    #[schema(required = true)]
    pub completed_at: Option<String>,
    /// Scheduled run date (same format as `dateCreated`), set at submission from daily call capacity and
    /// pending work; `null` when unset (every request this server creates has one).
    #[schema(nullable)]
    pub due_date: String,
    /// Echoed from creation; always present, `null` when not supplied.
    #[schema(required = true)]
    pub internal_id: Option<String>,
    /// Same behaviour as `internalId`.
    #[schema(required = true)]
    pub internal_tag: Option<String>,
    /// How the result was obtained; `null` when nothing was dispatched yet. `phone_only` and
    /// `digital_plus_phone` are billable at the phone-call rate.
    #[schema(required = true)]
    pub modality: Option<ModalityOut>,
    /// `minimum` when `state` is `SUCCESS` and `modality` is `digital_only`, otherwise `null`. `enhanced` and
    /// `complete` are reserved. The key is snake_case.
    #[serde(rename = "data_completeness")]
    #[schema(required = true)]
    pub data_completeness: Option<DataCompletenessOut>,
    /// Populated only on `FAILURE`.
    #[schema(required = true)]
    pub error: Option<FailureOut>,
    /// Prose summary of a `SUCCESS`/`PARTIAL` request finished without a phone call; `null` otherwise.
    #[schema(required = true)]
    pub result_summary: Option<String>,
    /// Present whenever payer phone number lookup is enabled for the account (2.5).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub payer_lookup: Option<PayerLookupOut>,
    /// Optional per-account field on both reads: `<schemaId>@v<version>`, the schema version the request ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub script_version: Option<String>,
    /// The number actually dialed, sanitized as inputs are (ten digits), once a phone call completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub to: Option<String>,
    /// `HH:MM:SS`, when a call completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, pattern = r"^\d{2,}:\d{2}:\d{2}$")]
    pub call_duration: Option<String>,
    /// Generated summary, when a call completed. Also on list reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub call_summary: Option<String>,
    /// Generated audit summary, when a call completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub call_audit_summary: Option<String>,
    /// When the call reached a representative. Single-read only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub transcript: Option<String>,
    /// Optional per-account field. Single-read only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub transcript_post_call: Option<String>,
    /// Signed, expiring link to `GET /v1/recordings/{callId}` when a recording exists. Single-read only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, format = "uri")]
    pub recording_download_url: Option<String>,
    /// E.164 outbound caller number; optional per-account field.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub call_from_number: Option<String>,
    /// Optional per-account field: every call attempt in placement order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub attempt_details: Option<Vec<AttemptOut>>,
    /// Single-read only; on a completed phone request in `SUCCESS`, `PARTIAL` or `FAILURE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub call_steps: Option<Vec<CallStepOut>>,
    /// Single-read only; on phone requests in `SUCCESS` or `PARTIAL`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub contributing_calls: Option<Vec<ContributingCallOut>>,
    /// Single-read only, with `contributingCalls`: `results` field name to the `call` number that produced
    /// its final value. Not every field has an entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = call_numbers_schema)]
    pub result_sources: Option<BTreeMap<String, u32>>,
    /// Single-read only: what the request cost, by channel; final once the request is terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub cost: Option<CostOut>,
}

impl RequestOut {
    /// The request as `read` shows it.
    pub fn new(record: &RequestRecord, read: &ReadContext<'_>) -> RequestOut {
        let account = read.account;
        let run = record.run.as_ref();
        let results = match (record.state, run) {
            (RequestState::Success | RequestState::Partial, Some(run)) => run.results.clone(),
            _ => BTreeMap::new(),
        };
        let missing_fields = match (record.state, run) {
            (RequestState::Partial | RequestState::Failure, Some(run)) => {
                run.missing_fields.clone()
            }
            _ => Vec::new(),
        };
        let modality = run.and_then(|run| run.modality.or_else(|| live_modality(run)));
        let digital_success =
            record.state == RequestState::Success && modality == Some(Modality::DigitalOnly);
        let error = match (record.state, run.and_then(|run| run.error.as_ref())) {
            (RequestState::Failure, Some(error)) => Some(FailureOut::from(error)),
            _ => None,
        };
        let result_summary = match (record.state, modality) {
            (RequestState::Success | RequestState::Partial, Some(Modality::DigitalOnly)) => {
                run.map(result_summary)
            }
            _ => None,
        };
        let script_version = account.has(Feature::ScriptVersion).then(|| {
            let version = run.map_or(record.schema_version, |run| run.schema_version);
            format!("{}@v{version}", record.schema_id)
        });
        let first = run
            .and_then(|run| FirstCall::of(run, read))
            .unwrap_or_default();
        let attempt_details = account
            .has(Feature::AttemptDetails)
            .then(|| run.map(calls::attempt_details).unwrap_or_default());
        let tracing = match run {
            Some(run) if record.state.is_terminal() && read.single() => {
                Tracing::of(record, run, read)
            }
            _ => Tracing::default(),
        };
        RequestOut {
            request_id: record.id.clone(),
            request_batch_id: record.batch_id.clone(),
            schema_id: record.schema_id.clone(),
            request_type: record.request_type.clone(),
            state: record.state.into(),
            inputs: record.inputs.clone(),
            results,
            missing_fields,
            date_created: format_timestamp(record.created_at),
            completed_at: record.completed_at.map(format_timestamp),
            due_date: format_timestamp(record.due_at),
            internal_id: record.internal_id.clone(),
            internal_tag: record.internal_tag.clone(),
            modality: modality.map(ModalityOut::from),
            data_completeness: digital_success.then_some(DataCompletenessOut::Minimum),
            error,
            result_summary,
            payer_lookup: PayerLookupOut::shown(record, account, read.lookup_source),
            script_version,
            to: first.to,
            call_duration: first.call_duration,
            call_summary: first.call_summary,
            call_audit_summary: first.call_audit_summary,
            transcript: first.transcript,
            transcript_post_call: first.transcript_post_call,
            recording_download_url: first.recording_download_url,
            call_from_number: first.call_from_number,
            attempt_details,
            call_steps: tracing.call_steps,
            contributing_calls: tracing.contributing_calls,
            result_sources: tracing.result_sources,
            cost: read
                .single()
                .then(|| RequestCost::of(record, read.prices).into()),
        }
    }
}

/// Modality while still running: decided by what has been dispatched so far.
fn live_modality(run: &RunRecord) -> Option<Modality> {
    let electronic = run
        .electronic
        .as_ref()
        .is_some_and(|e| !e.captured.is_empty());
    match (electronic, !run.calls.is_empty()) {
        (_, false) => None,
        (true, true) => Some(Modality::DigitalPlusPhone),
        (false, true) => Some(Modality::PhoneOnly),
    }
}

/// Prose summary of an electronic-only result: the one written from the mapped values when the request
/// finished, else (records from before it was stored) one listing the results.
fn result_summary(run: &RunRecord) -> String {
    if let Some(summary) = &run.result_summary {
        return summary.clone();
    }
    let parts: Vec<String> = run
        .results
        .iter()
        .map(|(field, value)| format!("{field}: {value}"))
        .collect();
    format!(
        "Obtained electronically from the payer's eligibility service without a phone call. {}.",
        parts.join("; ")
    )
}

/// `resultSources`: field name to the `call` number (1, 2, ...) that produced its value.
fn call_numbers_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
    use utoipa::openapi::RefOr;
    let call = ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int32,
        )))
        .minimum(Some(1));
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(RefOr::T(Schema::Object(call.build()))))
        .description(Some(
            "Single-read only, with `contributingCalls`: `results` field name to the `call` number that \
             produced its final value. Not every field has an entry.",
        ))
        .build()
}
