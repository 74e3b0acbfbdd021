//! What a Vapi call is asked to extract and told about: the `structuredDataPlan` JSON Schema generated
//! from the step's schema (one string property per field, named exactly as the field, plus the control
//! fields) and the assistant's template variables (the request's inputs and the questions).
//!
//! Every schema field is a JSON string, whatever its type: a captured value is text, and any field may be
//! answered `CANNOT ANSWER - <reason>` (service-interface 2.2), which a JSON boolean or an `enum` could not
//! carry. The field's type and allowed values go into its description, where the model reads them; dates
//! also carry `format: date`.

use std::collections::BTreeMap;

use serde_json::Value;
use switchboard_storage::{FieldRecord, FieldType, SchemaDefinition};

use super::types::{JsonSchema, StructuredDataPlan};

/// Control field: how the conversation went.
pub const CALL_OUTCOME: &str = "callOutcome";
/// Control field: the service-interface 7.3 failure code.
pub const FAILURE_CODE: &str = "failureCode";
/// Control field: the number a representative referred the call to.
pub const REFERRAL_PHONE_NUMBER: &str = "referralPhoneNumber";
/// Control field: whether the call surfaced a matter for the follow-up leg.
pub const FOLLOW_UP_NEEDED: &str = "followUpNeeded";

/// The values of [`CALL_OUTCOME`].
pub const CALL_OUTCOMES: [&str; 7] = [
    "answered",
    "referred",
    "refused",
    "not_found",
    "missing_input",
    "ivr_failure",
    "other",
];

/// Template variable holding the questions, one per line.
pub const QUESTIONS_VARIABLE: &str = "questions";
/// Template variable holding the schema's request type (`benefits`, `claim_status`, ...).
pub const REQUEST_TYPE_VARIABLE: &str = "requestType";

/// Seconds Vapi may spend extracting before it gives up: long enough for a schema of dozens of fields.
const EXTRACTION_TIMEOUT_SECONDS: u32 = 60;

/// The per-call structured-data plan for `schema`.
pub fn structured_data_plan(schema: &SchemaDefinition) -> StructuredDataPlan {
    StructuredDataPlan {
        enabled: true,
        schema: Some(structured_data_schema(schema)),
        timeout_seconds: Some(EXTRACTION_TIMEOUT_SECONDS),
    }
}

/// An object schema: one property per schema field, plus the control fields (only `callOutcome` is
/// required: every call has one; the others apply to some outcomes).
pub fn structured_data_schema(schema: &SchemaDefinition) -> JsonSchema {
    let mut properties: BTreeMap<String, JsonSchema> = schema
        .fields
        .iter()
        .map(|field| (field.name.clone(), field_property(field)))
        .collect();
    properties.insert(
        CALL_OUTCOME.to_string(),
        JsonSchema {
            kind: "string".to_string(),
            description: Some(
                "How the call went: answered (a representative answered the questions), referred (the \
                 representative gave another number to call), refused, not_found (the member, claim or \
                 authorization could not be found), missing_input (the payer required information we did \
                 not have), ivr_failure (the phone tree never reached a representative) or other."
                    .to_string(),
            ),
            allowed: Some(CALL_OUTCOMES.iter().map(|s| s.to_string()).collect()),
            ..JsonSchema::default()
        },
    );
    properties.insert(
        FAILURE_CODE.to_string(),
        string_property(
            "When the call did not get answers: the failure code in capitals with underscores, such as \
             MEMBER_NOT_FOUND, CLAIM_NOT_FOUND, PROVIDER_PTAN_MISSING, MEMBER_GROUP_MISSING, PAYER_REFUSAL, \
             IVR_FAILURE or PHONE_NUMBER_INCORRECT.",
        ),
    );
    properties.insert(
        REFERRAL_PHONE_NUMBER.to_string(),
        string_property(
            "When the representative referred the call elsewhere: the phone number they gave, digits only.",
        ),
    );
    properties.insert(
        FOLLOW_UP_NEEDED.to_string(),
        JsonSchema {
            kind: "boolean".to_string(),
            description: Some(
                "Whether the call surfaced a matter needing a follow-up call, such as a denied claim to appeal."
                    .to_string(),
            ),
            ..JsonSchema::default()
        },
    );
    JsonSchema {
        kind: "object".to_string(),
        properties,
        required: vec![CALL_OUTCOME.to_string()],
        ..JsonSchema::default()
    }
}

/// The property of one schema field.
fn field_property(field: &FieldRecord) -> JsonSchema {
    let mut description = field.description.trim().to_string();
    if description.is_empty() {
        description = field.label.clone();
    }
    let format = match field.field_type {
        FieldType::Alphanumeric => "Free text.".to_string(),
        FieldType::Boolean => "Answer true or false.".to_string(),
        FieldType::Multiple => format!(
            "Answer exactly one of: {}.",
            field
                .allowed_values
                .as_deref()
                .unwrap_or_default()
                .join(", ")
        ),
        FieldType::Dollar => {
            "An amount in US dollars, digits with cents, such as 1250.00.".to_string()
        }
        FieldType::Date => "A date as YYYY-MM-DD.".to_string(),
    };
    let condition = field
        .when
        .as_ref()
        .map(|c| format!(" Ask only when {} is {}.", c.field, c.equals))
        .unwrap_or_default();
    JsonSchema {
        kind: "string".to_string(),
        description: Some(format!(
            "{description} {format}{condition} If the representative cannot provide it, answer \
             \"CANNOT ANSWER - \" followed by the reason. Leave it out if it was never asked."
        )),
        format: (field.field_type == FieldType::Date).then(|| "date".to_string()),
        ..JsonSchema::default()
    }
}

fn string_property(description: &str) -> JsonSchema {
    JsonSchema {
        kind: "string".to_string(),
        description: Some(description.to_string()),
        ..JsonSchema::default()
    }
}

/// The assistant's template variables: every input under its own name, the request type and the
/// questions (one line per field: name, label, type and allowed values, condition, required or not).
pub fn variable_values(
    schema: &SchemaDefinition,
    inputs: &BTreeMap<String, String>,
) -> BTreeMap<String, Value> {
    let mut values: BTreeMap<String, Value> = inputs
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    values.insert(
        REQUEST_TYPE_VARIABLE.to_string(),
        Value::String(schema.request_type.clone()),
    );
    values.insert(
        QUESTIONS_VARIABLE.to_string(),
        Value::String(questions(schema)),
    );
    values
}

fn questions(schema: &SchemaDefinition) -> String {
    schema
        .fields
        .iter()
        .map(|field| {
            let choices = match &field.allowed_values {
                Some(values) if !values.is_empty() => format!(" (one of: {})", values.join(", ")),
                _ => String::new(),
            };
            let condition = field
                .when
                .as_ref()
                .map(|c| format!(" [only if {} is {}]", c.field, c.equals))
                .unwrap_or_default();
            let need = if field.required {
                "required"
            } else {
                "optional"
            };
            format!(
                "- {}: {} [{}, {need}]{choices}{condition}",
                field.name,
                field.label,
                field.field_type.as_str()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
