use serde::Serialize;
use switchboard_storage::{FieldRecord, SchemaVersionRecord};

/// A row of `GET /v1/schemas`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaRowOut {
    /// Schema id.
    pub schema_id: String,
    /// Name, falling back to the id.
    pub name: String,
    /// Kind of extraction.
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

/// `GET /v1/schemas/{schemaId}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaDetailOut {
    /// Schema id.
    pub schema_id: String,
    /// Name, falling back to the id.
    pub name: String,
    /// Kind of extraction.
    pub request_type: String,
    /// Every field, sorted by name.
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

/// One item of `resultsFields`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultsFieldOut {
    /// Key in `results`.
    pub name: String,
    /// Display label.
    pub label: String,
    /// The question the field answers.
    pub description: String,
    /// Value type.
    #[serde(rename = "type")]
    pub field_type: &'static str,
    /// Present for `multiple` fields.
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// `GET /v1/schemas/{schemaId}/required-inputs`.
#[derive(Debug, Serialize)]
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
#[derive(Debug, Serialize)]
pub struct FieldListOut {
    /// Sorted input keys.
    pub fields: Vec<String>,
}
