//! `POST /v1/requests` (service-interface 4.6): the bodies it accepts and the answers it gives.
//!
//! The handler reads the body as JSON and checks each key by hand (`intake::prepare_entry`) so every
//! problem gets the spec's own message; `CreateRequestIn` and `CreateBatchIn` are the shapes it accepts,
//! as the document shows them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_storage::{AccountRecord, RequestBatchId, RequestId, RequestRecord};
use utoipa::ToSchema;

use super::errors::ErrorOut;
use super::lookup::PayerLookupOut;

/// One request to create (4.6). Unknown top-level keys are ignored; there is no top-level `to` (the
/// dialed number is `inputs.phoneNumber`). A body that also carries a `requests` key is not one request:
/// it is read as a batch (`CreateBatchIn`), and its other top-level keys are ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateRequestIn {
    /// Must be provisioned to the account.
    pub schema_id: String,
    /// Flat `{key: value}` map; keys are schema-specific (see required-inputs). Values are strings; a
    /// boolean-typed key also takes a JSON boolean or the integers 0/1. Validated synchronously (7.4).
    /// At most 100 keys of at most 128 bytes each, each value at most 1024 bytes (UTF-8), and at most
    /// 16 KiB of keys and values together.
    #[schema(schema_with = inputs_schema)]
    pub inputs: BTreeMap<String, Value>,
    /// Ignored: the type is derived from the schema.
    #[schema(nullable = false)]
    pub request_type: Option<String>,
    /// Per-request webhook URL; wins over the account-level URL; frozen at creation. Must be http(s) and
    /// (unless the operator allows it) must not resolve to a private or reserved address. At most 2048
    /// bytes.
    #[schema(nullable = false, format = "uri", max_length = 2048)]
    pub webhook_url: Option<String>,
    /// Dial the matched payer number instead of the supplied one (payer phone number lookup only).
    #[serde(default)]
    #[schema(default = false)]
    pub use_matched_payer_phone: bool,
    /// Correlation ID and idempotency key: a reused value returns the original request and creates nothing.
    /// At most 256 bytes (UTF-8).
    #[schema(nullable = false, max_length = 256)]
    pub internal_id: Option<String>,
    /// Opaque tag echoed on reads and webhooks. At most 256 bytes (UTF-8).
    #[schema(nullable = false, max_length = 256)]
    pub internal_tag: Option<String>,
    /// Calls are handled only by the automated voice agent.
    #[serde(default)]
    #[schema(default = false)]
    pub ai_only: bool,
    /// Phone handling is restricted to US-based agents.
    #[serde(default)]
    #[schema(default = false)]
    pub onshore_only: bool,
}

/// `inputs`: input values by key, with the key count bounded.
fn inputs_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
    use utoipa::openapi::{Ref, RefOr};
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(crate::validation::MAX_KEY_BYTES)),
        ))
        .additional_properties(Some(AdditionalProperties::RefOr(RefOr::Ref(
            Ref::from_schema_name("InputValueIn"),
        ))))
        .max_properties(Some(crate::validation::MAX_INPUTS))
        .build()
}

/// An input value: a string, or for a boolean-typed key a JSON boolean or the integer 0 or 1. Only
/// documents `inputs` (intake reads the JSON values themselves); written by hand because the derive cannot
/// bound a variant's integer to 0 and 1.
pub enum InputValueIn {}

impl utoipa::PartialSchema for InputValueIn {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        // `maxLength` counts characters where the server counts UTF-8 bytes: for the ASCII of real
        // inputs the two agree, and otherwise the document is the looser of the two.
        let text = ObjectBuilder::new()
            .schema_type(Type::String)
            .max_length(Some(crate::validation::MAX_VALUE_BYTES))
            .description(Some("Any input; at most 1024 bytes (UTF-8)."));
        let flag = ObjectBuilder::new()
            .schema_type(Type::Boolean)
            .description(Some("A boolean-typed input."));
        let bit = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(0))
            .maximum(Some(1))
            .description(Some("A boolean-typed input as 0 or 1."));
        OneOfBuilder::new()
            .item(text)
            .item(flag)
            .item(bit)
            .description(Some(
                "An input value: a string, or for a boolean-typed key a JSON boolean or the integer 0 or 1.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for InputValueIn {}

/// Many requests at once. Entries are validated and de-duplicated independently (an entry repeating the
/// `internalId` of an earlier entry of the same POST returns that entry's request); entries scheduled for
/// different business days get distinct `requestBatchId`s.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateBatchIn {
    /// The entries, answered in the same order; at most 1000.
    #[schema(min_items = 1, max_items = 1000)]
    pub requests: Vec<CreateRequestIn>,
}

/// The create response of one request (4.6).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedOut {
    /// Server-generated.
    #[schema(value_type = String)]
    pub request_id: RequestId,
    /// The business day's batch the request was booked into.
    #[schema(value_type = String)]
    pub request_batch_id: RequestBatchId,
    /// Echoed only when supplied.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub internal_id: Option<String>,
    /// Present whenever payer phone number lookup is enabled for the account.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub payer_lookup: Option<PayerLookupOut>,
}

impl CreatedOut {
    /// The answer for `record` (new or replayed).
    pub fn new(record: &RequestRecord, account: &AccountRecord, lookup_source: &str) -> CreatedOut {
        CreatedOut {
            request_id: record.id.clone(),
            request_batch_id: record.batch_id.clone(),
            internal_id: record.internal_id.clone(),
            payer_lookup: PayerLookupOut::shown(record, account, lookup_source),
        }
    }
}

/// One entry per input entry, in input order: the created request or its error envelope (server-side entry
/// failures surface as `INVALID_REQUEST`). Successful entries are persisted even when others failed.
#[derive(Debug, Serialize, ToSchema)]
pub struct BatchCreatedOut {
    /// Entry answers in input order.
    pub requests: Vec<BatchEntryOut>,
}

/// A batch entry's answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum BatchEntryOut {
    /// Created or replayed.
    Created(CreatedOut),
    /// Rejected; nothing was written for it.
    Rejected(ErrorOut),
}

/// What `POST /v1/requests` accepts: one request, or a batch under `requests`. The `requests` key decides:
/// a body that carries it is a batch whatever else it holds (its other top-level keys are ignored, as
/// unknown keys are), a body without it is one request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum CreateIn {
    /// One request: a body without a `requests` key.
    Single(CreateRequestIn),
    /// A batch: a body with a `requests` key, whatever else it holds.
    Batch(CreateBatchIn),
}

/// What a `400` or `500` of `POST /v1/requests` carries: the envelope, or for a batch the entries with
/// their envelopes (every entry failed, or an entry failed on the server side).
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum CreateRejectedOut {
    /// The whole POST failed.
    Envelope(ErrorOut),
    /// A batch, answered per entry.
    Batch(BatchCreatedOut),
}

/// What a `200` of `POST /v1/requests` carries: the single answer, or every batch entry created.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum CreateOut {
    /// A single create.
    Single(CreatedOut),
    /// A batch.
    Batch(BatchCreatedOut),
}
