//! The shared per-call extraction ([`ExtractionField`]s: the step's schema fields, then the control
//! fields) rendered as Vapi's `structuredDataPlan`: an object `JsonSchema` with one property per field,
//! named exactly as the field. Choices are strings with an `enum`, booleans and numbers keep their JSON
//! types, the rest are strings; only `callOutcome` is required, since every call has one.

use crate::dialer::platform::extraction::CALL_OUTCOME;
use crate::dialer::platform::{ExtractionField, ExtractionType};

use super::types::{JsonSchema, StructuredDataPlan};

/// Seconds Vapi may spend extracting before it gives up (and leaves `structuredData` empty): long enough
/// for a schema of dozens of fields.
const EXTRACTION_TIMEOUT_SECONDS: u32 = 60;

/// The per-call structured-data plan for `fields`.
pub fn structured_data_plan(fields: &[ExtractionField]) -> StructuredDataPlan {
    StructuredDataPlan {
        enabled: true,
        schema: Some(structured_data_schema(fields)),
        timeout_seconds: Some(EXTRACTION_TIMEOUT_SECONDS),
    }
}

/// The object schema of `fields`.
pub fn structured_data_schema(fields: &[ExtractionField]) -> JsonSchema {
    JsonSchema {
        kind: "object".to_owned(),
        properties: fields
            .iter()
            .map(|field| (field.name.clone(), property(field)))
            .collect(),
        required: fields
            .iter()
            .filter(|f| f.name == CALL_OUTCOME)
            .map(|f| f.name.clone())
            .collect(),
        ..JsonSchema::default()
    }
}

fn property(field: &ExtractionField) -> JsonSchema {
    let (kind, allowed) = match &field.kind {
        ExtractionType::Text => ("string", None),
        ExtractionType::Choice(values) => ("string", Some(values.clone())),
        ExtractionType::Boolean => ("boolean", None),
        ExtractionType::Number => ("number", None),
    };
    JsonSchema {
        kind: kind.to_owned(),
        description: Some(field.description.clone()),
        allowed,
        ..JsonSchema::default()
    }
}
