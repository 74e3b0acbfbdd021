//! `RequestResponse` (service-interface 2.4) and the create response (4.6).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Map, Value};
use switchboard_storage::{
    AccountRecord, Feature, Modality, NumberSource, PayerLookupRecord, RequestRecord, RequestState,
    RunRecord,
};

use crate::recordings::RecordingLinks;

use super::format_timestamp;

/// The `payerLookup` object.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PayerLookupOut {
    input_payer_name: String,
    input_phone_number: Option<String>,
    matched_payer_name: Option<String>,
    matched_payer_phone: Option<String>,
    phone_number_to_use: String,
    phone_number_source: String,
}

impl PayerLookupOut {
    /// The wire form; `product_word` names the built-in directory source (`switchboard`).
    pub fn new(record: &PayerLookupRecord, product_word: &str) -> PayerLookupOut {
        PayerLookupOut {
            input_payer_name: record.input_payer_name.clone(),
            input_phone_number: record.input_phone_number.clone(),
            matched_payer_name: record.matched_payer_name.clone(),
            matched_payer_phone: record.matched_payer_phone.clone(),
            phone_number_to_use: record.phone_number_to_use.clone(),
            phone_number_source: match record.phone_number_source {
                NumberSource::Directory => product_word.to_lowercase(),
                NumberSource::PhoneBook => "phoneBook".to_owned(),
                // A payer lookup decision is made at creation, before any call could refer elsewhere.
                NumberSource::Input | NumberSource::Referral => "input".to_owned(),
            },
        }
    }
}

/// The create response of one request: `{requestId, requestBatchId, internalId?, payerLookup?}`.
pub fn created_out(record: &RequestRecord, account: &AccountRecord, product_word: &str) -> Value {
    let mut out = json!({ "requestId": record.id, "requestBatchId": record.batch_id });
    if let Some(internal_id) = &record.internal_id {
        out["internalId"] = json!(internal_id);
    }
    if let Some(lookup) = payer_lookup(record, account, product_word) {
        out["payerLookup"] = lookup;
    }
    out
}

fn payer_lookup(
    record: &RequestRecord,
    account: &AccountRecord,
    product_word: &str,
) -> Option<Value> {
    if !account.has(Feature::PayerPhoneLookup) {
        return None;
    }
    record.payer_lookup.as_ref().map(|lookup| {
        serde_json::to_value(PayerLookupOut::new(lookup, product_word))
            .expect("plain struct serializes")
    })
}

/// Which read a response is for: the list omits the single-read-only fields (4.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKind {
    /// `GET /v1/requests/{requestId}`.
    Single,
    /// An entry of `GET /v1/requests`.
    List,
}

/// What a read needs besides the record.
pub struct ReadContext<'a> {
    /// The caller's account (its optional fields and features).
    pub account: &'a AccountRecord,
    /// Names the directory source in `payerLookup`.
    pub product_word: &'a str,
    /// Signs `recordingDownloadUrl`s.
    pub links: &'a RecordingLinks,
    /// The clock's now, for link expiry.
    pub now: DateTime<Utc>,
    /// Single read or list entry.
    pub kind: ReadKind,
}

/// A request as the read endpoints show it (2.4, 2.6).
pub fn request_out(record: &RequestRecord, read: &ReadContext<'_>) -> Value {
    let account = read.account;
    let run = record.run.as_ref();
    let terminal = record.state.is_terminal();
    let mut out = Map::new();
    let mut put = |key: &str, value: Value| {
        out.insert(key.to_owned(), value);
    };
    put("requestId", json!(record.id));
    put("requestBatchId", json!(record.batch_id));
    put("schemaId", json!(record.schema_id));
    put("requestType", json!(record.request_type));
    put("state", json!(record.state.as_str()));
    put("inputs", json!(record.inputs));
    let results = match (record.state, run) {
        (RequestState::Success | RequestState::Partial, Some(run)) => json!(run.results),
        _ => json!({}),
    };
    put("results", results);
    let missing = match (record.state, run) {
        (RequestState::Partial | RequestState::Failure, Some(run)) => json!(run.missing_fields),
        _ => json!([]),
    };
    put("missingFields", missing);
    put("dateCreated", json!(format_timestamp(record.created_at)));
    put(
        "completedAt",
        json!(record.completed_at.map(format_timestamp)),
    );
    put("dueDate", json!(format_timestamp(record.due_at)));
    put("internalId", json!(record.internal_id));
    put("internalTag", json!(record.internal_tag));
    let modality = run.and_then(|run| run.modality.or_else(|| live_modality(run)));
    put("modality", json!(modality.map(Modality::as_str)));
    let digital_success =
        record.state == RequestState::Success && modality == Some(Modality::DigitalOnly);
    put(
        "data_completeness",
        if digital_success {
            json!("minimum")
        } else {
            Value::Null
        },
    );
    let error = match (record.state, run.and_then(|run| run.error.as_ref())) {
        (RequestState::Failure, Some(error)) => json!({
            "errorCategory": error.category,
            "errorCode": error.code,
            "errorMessage": error.message,
        }),
        _ => Value::Null,
    };
    put("error", error);
    let summary = match (record.state, modality) {
        (RequestState::Success | RequestState::Partial, Some(Modality::DigitalOnly)) => {
            run.map(result_summary)
        }
        _ => None,
    };
    put("resultSummary", json!(summary));
    if let Some(lookup) = payer_lookup(record, account, read.product_word) {
        put("payerLookup", lookup);
    }
    if account.has(Feature::ScriptVersion) {
        let version = run.map_or(record.schema_version, |run| run.schema_version);
        put(
            "scriptVersion",
            json!(format!("{}@v{version}", record.schema_id)),
        );
    }
    if let Some(run) = run {
        super::calls::enrich(&mut out, run, read);
    }
    if account.has(Feature::AttemptDetails) {
        let attempts = run.map(super::calls::attempt_details).unwrap_or_default();
        out.insert("attemptDetails".into(), json!(attempts));
    }
    if terminal && read.kind == ReadKind::Single {
        if let Some(run) = run {
            super::calls::tracing_fields(&mut out, record, run, read);
        }
    }
    Value::Object(out)
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
