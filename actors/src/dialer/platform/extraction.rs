//! The per-call structured extraction: one field per schema field (named exactly as the schema field,
//! typed from its type and `allowedValues`, described by its description) plus the control fields that
//! tell Switchboard how the call went. Platform-neutral; each adapter renders the list in its own format
//! (Retell `post_call_analysis_data`, Vapi `structuredDataPlan.schema`).

use std::collections::BTreeMap;

use switchboard_storage::{FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord};

/// How the call went, in the agent's words.
pub const CALL_OUTCOME: &str = "callOutcome";
/// The 7.3 failure code the agent chose, when the call failed.
pub const FAILURE_CODE: &str = "failureCode";
/// The number a representative referred the agent to.
pub const REFERRAL_PHONE_NUMBER: &str = "referralPhoneNumber";
/// Whether the call surfaced a matter for the follow-up leg.
pub const FOLLOW_UP_NEEDED: &str = "followUpNeeded";

/// Values of [`CALL_OUTCOME`].
pub const CALL_OUTCOMES: [&str; 7] = [
    "answered",
    "referred",
    "refused",
    "not_found",
    "missing_input",
    "ivr_failure",
    "other",
];

/// The prefix of an answer that says why the representative could not answer; it still counts as an
/// answer (service-interface semantics).
pub const CANNOT_ANSWER_PREFIX: &str = "CANNOT ANSWER - ";

/// A made-up non-answer in the convention's shape, for platforms that teach their model by example.
pub const CANNOT_ANSWER_EXAMPLE: &str = "CANNOT ANSWER - the representative's system was down";

/// The value type of one extracted field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExtractionType {
    /// Free text (dates and free answers).
    Text,
    /// One of the listed values.
    Choice(Vec<String>),
    /// `true` or `false`.
    Boolean,
    /// A number (dollar amounts).
    Number,
}

/// One field of the extraction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractionField {
    /// The exact name the answer must come back under.
    pub name: String,
    /// What to extract, for the platform's model.
    pub description: String,
    /// Its type.
    pub kind: ExtractionType,
    /// Whether it is a control field rather than a schema field.
    pub control: bool,
}

impl ExtractionField {
    /// Whether the field may hold `CANNOT ANSWER - <reason>` whatever its type: every schema field may
    /// (service-interface semantics), the control fields never do.
    pub fn admits_cannot_answer(&self) -> bool {
        !self.control
    }
}

/// The extraction of a call on `schema`: every field in schema order (the operator contract asks for one
/// value per field of the step's schema, whatever the electronic channel answered), then the control
/// fields.
pub fn extraction_fields(schema: &SchemaVersionRecord) -> Vec<ExtractionField> {
    let mut fields: Vec<ExtractionField> = schema
        .definition
        .fields
        .iter()
        .map(|field| {
            let kind = match (field.field_type, &field.allowed_values) {
                (FieldType::Boolean, _) => ExtractionType::Boolean,
                (FieldType::Dollar, _) => ExtractionType::Number,
                (FieldType::Multiple, Some(values)) if !values.is_empty() => {
                    ExtractionType::Choice(values.clone())
                }
                _ => ExtractionType::Text,
            };
            // Spelled out in words too: where a platform must type the field as text to admit a
            // `CANNOT ANSWER` value, the description is what tells its model the typed answers.
            let format = match (&kind, field.field_type) {
                (ExtractionType::Boolean, _) => " Answer true or false.".to_owned(),
                (ExtractionType::Choice(values), _) => {
                    format!(" Answer with one of: {}.", values.join(", "))
                }
                (_, FieldType::Date) => " Give dates as YYYY-MM-DD.".to_owned(),
                (_, FieldType::Dollar) => {
                    " Give the amount in US dollars as a number.".to_owned()
                }
                _ => String::new(),
            };
            ExtractionField {
                name: field.name.clone(),
                description: format!(
                    "{}{format} Leave empty if the call did not cover it; if the representative \
                     explained why it cannot be answered, give \"{CANNOT_ANSWER_PREFIX}<their reason>\".",
                    field.description.trim_end()
                ),
                kind,
                control: false,
            }
        })
        .collect();
    fields.extend(control_fields());
    fields
}

fn control_fields() -> [ExtractionField; 4] {
    [
        ExtractionField {
            name: CALL_OUTCOME.into(),
            description: "How the call went: answered (a representative answered the questions), \
                referred (they gave another number to call), refused (they would not share the \
                information), not_found (the member, patient or claim was not found), missing_input \
                (they needed information we did not have), ivr_failure (the phone menu could not be \
                navigated to a representative), other."
                .into(),
            kind: ExtractionType::Choice(CALL_OUTCOMES.iter().map(|s| (*s).to_owned()).collect()),
            control: true,
        },
        ExtractionField {
            name: FAILURE_CODE.into(),
            description: "When the call did not get the answers, the most specific code: for not_found \
                MEMBER_NOT_FOUND, PROVIDER_NOT_FOUND, CLAIM_NOT_FOUND, PRIOR_AUTH_NOT_FOUND or \
                APPEAL_NOT_FOUND; for missing_input the missing item such as MEMBER_GROUP_MISSING or \
                CLAIM_NUMBER_MISSING; an input the payer's records contradict such as \
                MEMBER_DATE_OF_BIRTH_INCORRECT; PHONE_NUMBER_INCORRECT when the number reached the wrong \
                place; otherwise OTHER. Empty when the call was answered."
                .into(),
            kind: ExtractionType::Text,
            control: true,
        },
        ExtractionField {
            name: REFERRAL_PHONE_NUMBER.into(),
            description: "When the representative said to call another number, that number with area \
                code. Empty otherwise."
                .into(),
            kind: ExtractionType::Text,
            control: true,
        },
        ExtractionField {
            name: FOLLOW_UP_NEEDED.into(),
            description: "true when the call surfaced a matter that needs a follow-up call (for example a \
                denied claim to appeal), false otherwise."
                .into(),
            kind: ExtractionType::Boolean,
            control: true,
        },
    ]
}

/// The prompt variables of a call: every input under its own key, plus `questions`, the schema's
/// questions still open as numbered lines, and `known_answers`, what the payer already answered
/// electronically as `name: value` lines (empty when nothing was), so the agent neither asks it again nor
/// contradicts it. (The results keep the electronic answers whatever the call says.)
pub fn prompt_variables(
    schema: &SchemaVersionRecord,
    inputs: &BTreeMap<String, String>,
    known: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut variables = inputs.clone();
    let questions: Vec<String> = open_fields(schema, known)
        .enumerate()
        .map(|(i, f)| format!("{}. {} ({})", i + 1, f.description.trim(), f.name))
        .collect();
    variables.insert("questions".into(), questions.join("\n"));
    let answers: Vec<String> = known
        .iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect();
    variables.insert("known_answers".into(), answers.join("\n"));
    variables
}

/// The fields of `schema` a call still has to ask, given what the payer answered electronically (`known`):
/// neither answered, nor ruled out by an answer (see [`ruled_out`]).
pub fn open_fields<'a>(
    schema: &'a SchemaVersionRecord,
    known: &'a BTreeMap<String, String>,
) -> impl Iterator<Item = &'a FieldRecord> + 'a {
    schema.definition.fields.iter().filter(|field| {
        !known.contains_key(&field.name) && !ruled_out(&schema.definition, field, known)
    })
}

/// Whether `known` rules `field` out: its condition names a field answered with another value, or a field
/// that is itself ruled out, followed to the end of the chain (`appealDeadline` when `isAppealable` is
/// asked only of a denied claim and the claim is known to be paid). A chain that loops back (never
/// declared by a valid schema) ends the walk without ruling anything out.
pub fn ruled_out(
    schema: &SchemaDefinition,
    field: &FieldRecord,
    known: &BTreeMap<String, String>,
) -> bool {
    let mut current = field;
    for _ in 0..=schema.fields.len() {
        let Some(when) = &current.when else {
            return false;
        };
        if let Some(answer) = known.get(&when.field) {
            return *answer != when.equals;
        }
        match schema.fields.iter().find(|f| f.name == when.field) {
            Some(parent) => current = parent,
            None => return false,
        }
    }
    false
}

/// An extracted value as Switchboard stores it, or `None` when the field was left empty.
pub fn as_captured(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Null => None,
        serde_json::Value::Bool(b) => Some(b.to_string()),
        // Numbers are dollar amounts (the only numeric field type), kept as Switchboard writes them.
        serde_json::Value::Number(n) => n.as_f64().map(|f| format!("{f:.2}")),
        serde_json::Value::String(s) => {
            let trimmed = s.trim();
            (!trimmed.is_empty()).then(|| trimmed.to_owned())
        }
        other => Some(other.to_string()),
    }
}
