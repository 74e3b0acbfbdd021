//! A person's answers, checked against the schema as a call's captured values are: read in the field's
//! type by the same code that reads a voice platform's answers ([`captured_answer`]), then held to it:
//! a value the type or the allowed values refuse is refused here (a platform's is kept as given, since a
//! call cannot be asked again; a person can correct the form). `CANNOT ANSWER - <reason>` is always an
//! answer.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde_json::Value;
use switchboard_storage::{FieldRecord, FieldType, SchemaVersionRecord};

use crate::dialer::platform::answers::captured_answer;
use crate::dialer::platform::extraction::CANNOT_ANSWER_PREFIX;

/// Field name to why its answer was refused.
pub type AnswerErrors = BTreeMap<String, String>;

/// The stored values of `answers` for the fields of `schema`, or why each refused answer was refused.
/// An empty answer (null or blank) leaves its field unanswered.
pub fn check_answers(
    schema: &SchemaVersionRecord,
    answers: &BTreeMap<String, Value>,
) -> Result<BTreeMap<String, String>, AnswerErrors> {
    let mut values = BTreeMap::new();
    let mut errors = AnswerErrors::new();
    for (name, answer) in answers {
        let Some(field) = schema.definition.fields.iter().find(|f| &f.name == name) else {
            errors.insert(name.clone(), "not a field of this task's schema".to_owned());
            continue;
        };
        match checked(field, answer) {
            Ok(Some(value)) => {
                values.insert(name.clone(), value);
            }
            Ok(None) => {}
            Err(why) => {
                errors.insert(name.clone(), why);
            }
        }
    }
    // A conditional field is asked only after its condition's answer: answered beside another answer to
    // that field, it is refused.
    for field in &schema.definition.fields {
        let (Some(when), true) = (&field.when, values.contains_key(&field.name)) else {
            continue;
        };
        if let Some(other) = values.get(&when.field) {
            if !other.eq_ignore_ascii_case(&when.equals) {
                errors.insert(
                    field.name.clone(),
                    format!("asked only when {} is {}", when.field, when.equals),
                );
            }
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(errors)
    }
}

fn checked(field: &FieldRecord, answer: &Value) -> Result<Option<String>, String> {
    if !matches!(
        answer,
        Value::Null | Value::String(_) | Value::Bool(_) | Value::Number(_)
    ) {
        return Err("must be a string, a number or a boolean".to_owned());
    }
    let Some(value) = captured_answer(field, answer) else {
        return Ok(None);
    };
    if let Some(reason) = value.strip_prefix(CANNOT_ANSWER_PREFIX) {
        return if reason.trim().is_empty() {
            Err(format!("{CANNOT_ANSWER_PREFIX}needs a reason"))
        } else {
            Ok(Some(value))
        };
    }
    let fits = match field.field_type {
        FieldType::Boolean => value == "true" || value == "false",
        FieldType::Dollar => value.parse::<f64>().is_ok() && value.contains('.'),
        FieldType::Date => NaiveDate::parse_from_str(&value, "%Y-%m-%d").is_ok(),
        FieldType::Multiple => field
            .allowed_values
            .iter()
            .flatten()
            .any(|allowed| allowed == &value),
        FieldType::Alphanumeric => true,
    };
    if fits {
        return Ok(Some(value));
    }
    Err(match field.field_type {
        FieldType::Boolean => "must be true or false".to_owned(),
        FieldType::Dollar => "must be a dollar amount such as 1500.00".to_owned(),
        FieldType::Date => "must be a date as YYYY-MM-DD".to_owned(),
        FieldType::Multiple => format!(
            "must be one of {}",
            field
                .allowed_values
                .iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        FieldType::Alphanumeric => unreachable!("every text is alphanumeric"),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use switchboard_storage::{SchemaDefinition, SchemaVersionRecord};

    use super::*;

    fn schema() -> SchemaVersionRecord {
        let field = |name: &str, field_type, allowed: Option<&[&str]>| FieldRecord {
            name: name.into(),
            label: name.into(),
            description: format!("{name}?"),
            field_type,
            allowed_values: allowed.map(|a| a.iter().map(|s| (*s).to_owned()).collect()),
            required: true,
            when: None,
        };
        let definition: SchemaDefinition = serde_json::from_value(json!({
            "request_type": "claim-status",
            "required_inputs": [],
            "optional_inputs": [],
            "fields": [],
        }))
        .unwrap();
        let mut definition = definition;
        definition.fields = vec![
            field("status", FieldType::Multiple, Some(&["PAID", "DENIED"])),
            field("paid", FieldType::Dollar, None),
            field("on", FieldType::Date, None),
            field("active", FieldType::Boolean, None),
        ];
        SchemaVersionRecord {
            id: "s".into(),
            version: 1,
            published_at: chrono::Utc::now(),
            definition,
        }
    }

    #[test]
    fn answers_in_their_type_are_stored_as_a_call_stores_them() {
        let answers = BTreeMap::from([
            ("status".to_owned(), json!("paid")),
            ("paid".to_owned(), json!("$1,200")),
            ("on".to_owned(), json!("2026-11-02")),
            ("active".to_owned(), json!(true)),
        ]);
        let values = check_answers(&schema(), &answers).unwrap();
        assert_eq!(values["status"], "PAID");
        assert_eq!(values["paid"], "1200.00");
        assert_eq!(values["active"], "true");
    }

    #[test]
    fn a_conditional_answer_beside_another_answer_to_its_condition_is_refused() {
        let mut schema = schema();
        schema.definition.fields[1].when = Some(switchboard_storage::FieldCondition {
            field: "status".into(),
            equals: "PAID".into(),
        });
        let paid = BTreeMap::from([
            ("status".to_owned(), json!("PAID")),
            ("paid".to_owned(), json!("10")),
        ]);
        assert!(check_answers(&schema, &paid).is_ok());
        let denied = BTreeMap::from([
            ("status".to_owned(), json!("DENIED")),
            ("paid".to_owned(), json!("10")),
        ]);
        let errors = check_answers(&schema, &denied).unwrap_err();
        assert_eq!(errors["paid"], "asked only when status is PAID");
    }

    #[test]
    fn refused_answers_name_their_field_and_why() {
        let answers = BTreeMap::from([
            ("status".to_owned(), json!("LOST")),
            ("on".to_owned(), json!("11/02/2026")),
            ("nope".to_owned(), json!("x")),
            (
                "paid".to_owned(),
                json!("CANNOT ANSWER - rep would not say"),
            ),
        ]);
        let errors = check_answers(&schema(), &answers).unwrap_err();
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["nope", "on", "status"]);
        assert!(errors["status"].contains("PAID, DENIED"));
    }
}
