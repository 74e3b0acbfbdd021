//! The shared per-call extraction ([`ExtractionField`]s: the step's schema fields, then the control
//! fields) rendered as Vapi's `structuredDataPlan`: an object `JsonSchema` with one property per field,
//! named exactly as the field; only `callOutcome` is required, since every call has one.
//!
//! A schema field may hold `CANNOT ANSWER - <reason>` whatever its type, and Vapi's `JsonSchema` has no
//! `anyOf` to say "a boolean or that string". So every typed schema field is a `string` whose `pattern`
//! admits the typed answers (`true`/`false`, an amount, one of the allowed values) or the non-answer; the
//! answers are read back in the field's type. Control fields never hold a non-answer and keep their
//! JSON types (`callOutcome` an `enum`, `followUpNeeded` a boolean).

use crate::dialer::platform::extraction::CALL_OUTCOME;
use crate::dialer::platform::{ExtractionField, ExtractionType};

use super::types::{JsonSchema, StructuredDataPlan};

/// Seconds Vapi may spend extracting before it gives up (and leaves `structuredData` empty): long enough
/// for a schema of dozens of fields.
const EXTRACTION_TIMEOUT_SECONDS: u32 = 60;

/// The alternative of a [`pattern`] that admits `CANNOT ANSWER - <reason>`.
const CANNOT_ANSWER_ALTERNATIVE: &str = "CANNOT ANSWER - .+";

/// An amount in the spec's dollar format (`1500`, `-20.5`, `1234.56`).
const AMOUNT_ALTERNATIVE: &str = r"-?\d+(\.\d{1,2})?";

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
    let string = |pattern: Option<String>, allowed: Option<Vec<String>>| JsonSchema {
        kind: "string".to_owned(),
        description: Some(field.description.clone()),
        pattern,
        allowed,
        ..JsonSchema::default()
    };
    if field.admits_cannot_answer() {
        let typed: Vec<String> = match &field.kind {
            // Free text already admits the non-answer.
            ExtractionType::Text => return string(None, None),
            ExtractionType::Choice(values) => values.iter().map(|v| escaped(v)).collect(),
            ExtractionType::Boolean => vec!["true".to_owned(), "false".to_owned()],
            ExtractionType::Number => vec![AMOUNT_ALTERNATIVE.to_owned()],
        };
        return string(Some(pattern(&typed)), None);
    }
    let kind = match &field.kind {
        ExtractionType::Text => "string",
        ExtractionType::Choice(values) => return string(None, Some(values.clone())),
        ExtractionType::Boolean => "boolean",
        ExtractionType::Number => "number",
    };
    JsonSchema {
        kind: kind.to_owned(),
        description: Some(field.description.clone()),
        ..JsonSchema::default()
    }
}

/// A whole-value regex: one of the `typed` alternatives, or a non-answer.
fn pattern(typed: &[String]) -> String {
    format!("^({}|{CANNOT_ANSWER_ALTERNATIVE})$", typed.join("|"))
}

/// `value` matched literally inside a regex.
fn escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if r"\^$.|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
