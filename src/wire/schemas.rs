//! The schema endpoints' shapes (service-interface 2.1-2.3, 4.2-4.5).

use serde::{Deserialize, Serialize};
use switchboard_storage::{FieldRecord, SchemaVersionRecord};
use utoipa::ToSchema;

/// `GET /v1/schemas`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SchemaListOut {
    /// The account's schemas, retired and hidden ones filtered out, sorted by `schemaId`.
    pub schemas: Vec<SchemaRowOut>,
}

/// A row of `GET /v1/schemas`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaRowOut {
    /// Passed to request creation.
    pub schema_id: String,
    /// Human label; falls back to `schemaId` when no name is set.
    pub name: String,
    /// Server-derived kind of extraction.
    #[schema(examples("claim-status", "vob"))]
    pub request_type: String,
}

impl SchemaRowOut {
    /// The row for the latest version of a schema.
    pub fn from_version(version: &SchemaVersionRecord) -> SchemaRowOut {
        SchemaRowOut {
            schema_id: version.id.clone(),
            name: version
                .definition
                .name
                .clone()
                .unwrap_or_else(|| version.id.clone()),
            request_type: version.definition.request_type.clone(),
        }
    }
}

/// `GET /v1/schemas/{schemaId}` (2.2): the schema's latest version.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaDetailOut {
    /// Schema id.
    pub schema_id: String,
    /// Name, falling back to the id.
    pub name: String,
    /// Kind of extraction.
    pub request_type: String,
    /// Every field the schema can put in `results`, sorted by `name`. Never empty.
    #[schema(min_items = 1)]
    pub results_fields: Vec<ResultsFieldOut>,
}

impl SchemaDetailOut {
    /// The detail of one schema version.
    pub fn from_version(version: &SchemaVersionRecord) -> SchemaDetailOut {
        let row = SchemaRowOut::from_version(version);
        let mut results_fields: Vec<ResultsFieldOut> = version
            .definition
            .fields
            .iter()
            .map(ResultsFieldOut::from)
            .collect();
        results_fields.sort_by(|a, b| a.name.cmp(&b.name));
        SchemaDetailOut {
            schema_id: row.schema_id,
            name: row.name,
            request_type: row.request_type,
            results_fields,
        }
    }
}

/// One field a schema can put in `results` (2.2).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultsFieldOut {
    /// Exactly the key used in `results` and in top-level `missingFields`.
    pub name: String,
    /// Display label.
    pub label: String,
    /// The question the field answers.
    pub description: String,
    /// Value type. The set is not closed.
    #[serde(rename = "type")]
    #[schema(examples("alphanumeric", "boolean", "multiple", "dollar", "date"))]
    pub field_type: &'static str,
    /// Present for `multiple`. Not a closed set: `CANNOT ANSWER - <reason>` may appear on any type.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub allowed_values: Option<Vec<String>>,
}

impl From<&FieldRecord> for ResultsFieldOut {
    fn from(field: &FieldRecord) -> ResultsFieldOut {
        ResultsFieldOut {
            name: field.name.clone(),
            label: field.label.clone(),
            description: field.description.clone(),
            field_type: field.field_type.as_str(),
            allowed_values: field.allowed_values.clone(),
        }
    }
}

/// `GET /v1/schemas/{schemaId}/required-inputs` (2.3). The two lists are disjoint; neither constrains
/// `inputs` (extra keys are accepted). With payer phone number lookup `phoneNumber` is optional.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequiredInputsOut {
    /// Schema id.
    pub schema_id: String,
    /// Keys that must be supplied.
    pub required_inputs: FieldListOut,
    /// Keys that may be supplied.
    pub optional_inputs: FieldListOut,
}

/// `{ fields: [...] }`, sorted.
#[derive(Debug, Serialize, ToSchema)]
pub struct FieldListOut {
    /// Sorted input keys.
    pub fields: Vec<String>,
}

/// The body of `POST /v1/schemas/{schemaId}/required-payer-inputs`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequiredPayerInputsIn {
    /// Payer names, resolved independently and in order, without de-duplication. A blank entry becomes
    /// a per-payer `INVALID_PAYER_NAME` error.
    #[schema(min_items = 1, max_items = 50)]
    pub payer_names: Vec<String>,
}

/// `POST /v1/schemas/{schemaId}/required-payer-inputs` (4.5).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequiredPayerInputsOut {
    /// Echoes the path parameter.
    pub schema_id: String,
    /// The schema's required keys.
    pub required_inputs: FieldListOut,
    /// The schema's optional keys.
    pub optional_inputs: FieldListOut,
    /// Exactly one entry per `payerNames` entry, positionally aligned.
    pub payers: Vec<PayerInputsOut>,
}

/// One payer name's answer: its extra required inputs, or why it could not be resolved (tell them apart
/// by `errorCode`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum PayerInputsOut {
    /// A matched payer.
    Matched(PayerMatchOut),
    /// A name that could not be resolved.
    Unresolved(PayerUnresolvedOut),
}

/// A matched payer. The resolved phone number is deliberately omitted.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayerMatchOut {
    /// The entry as supplied, without surrounding whitespace (a blank entry is `""`).
    pub input_payer_name: String,
    /// The directory's name of the payer.
    pub matched_payer_name: String,
    /// Extra input keys this payer requires, sorted.
    pub payer_required_inputs: FieldListOut,
}

/// A payer name that could not be resolved.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayerUnresolvedOut {
    /// The entry as supplied, without surrounding whitespace (a blank entry is `""`).
    pub input_payer_name: String,
    /// Open-ended.
    #[schema(examples("INVALID_PAYER_NAME", "PAYER_NOT_FOUND"))]
    pub error_code: &'static str,
    /// Human-readable reason.
    pub message: String,
}
