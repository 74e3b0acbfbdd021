//! `RequestResponse` (service-interface 2.4) and the create response (4.6).

use serde::Serialize;
use serde_json::{json, Map, Value};
use switchboard_storage::{AccountRecord, Feature, NumberSource, PayerLookupRecord, RequestRecord};

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

/// A request as the read endpoints show it.
pub fn request_out(record: &RequestRecord, account: &AccountRecord, product_word: &str) -> Value {
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
    put("results", json!({}));
    put("missingFields", json!([]));
    put("dateCreated", json!(format_timestamp(record.created_at)));
    put(
        "completedAt",
        json!(record.completed_at.map(format_timestamp)),
    );
    put("dueDate", json!(format_timestamp(record.due_at)));
    put("internalId", json!(record.internal_id));
    put("internalTag", json!(record.internal_tag));
    put("modality", Value::Null);
    put("data_completeness", Value::Null);
    put("error", Value::Null);
    put("resultSummary", Value::Null);
    if let Some(lookup) = payer_lookup(record, account, product_word) {
        put("payerLookup", lookup);
    }
    if account.has(Feature::ScriptVersion) {
        put(
            "scriptVersion",
            json!(format!("{}@v{}", record.schema_id, record.schema_version)),
        );
    }
    if account.has(Feature::AttemptDetails) {
        put("attemptDetails", json!([]));
    }
    Value::Object(out)
}
