//! A schema field's extracted answer read back in the field's type. Platforms give typed answers (a JSON
//! boolean or number) or, where the extraction had to be a string to admit `CANNOT ANSWER - <reason>`,
//! the same answer as text: both become the value Switchboard stores (`true`/`false`, the dollar format
//! `1234.50`, the allowed value as the schema spells it). A `CANNOT ANSWER - ` value is an answer on every
//! type and is kept verbatim; anything else unrecognised is kept as given rather than lost.

use serde_json::Value;
use switchboard_storage::{FieldRecord, FieldType};

use super::extraction::{as_captured, CANNOT_ANSWER_PREFIX};

/// The stored value of `field`'s answer `value`, or `None` when the field was left empty.
pub fn captured_answer(field: &FieldRecord, value: &Value) -> Option<String> {
    let text = as_captured(value)?;
    if text.starts_with(CANNOT_ANSWER_PREFIX) {
        return Some(text);
    }
    let typed = match field.field_type {
        FieldType::Boolean => boolean(&text),
        FieldType::Dollar => dollars(&text),
        FieldType::Multiple => field
            .allowed_values
            .iter()
            .flatten()
            .find(|allowed| allowed.eq_ignore_ascii_case(&text))
            .cloned(),
        FieldType::Date | FieldType::Alphanumeric => None,
    };
    Some(typed.unwrap_or(text))
}

fn boolean(text: &str) -> Option<String> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "yes" => Some("true".to_owned()),
        "false" | "no" => Some("false".to_owned()),
        _ => None,
    }
}

/// `text` (`1500`, `$1,500.5`, `-20`) in the spec's dollar format (`1500.00`), rounded to the cent.
fn dollars(text: &str) -> Option<String> {
    let plain: String = text
        .chars()
        .filter(|c| !matches!(c, '$' | ',' | ' '))
        .collect();
    let valid = !plain.is_empty()
        && plain
            .trim_start_matches('-')
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.');
    let amount: f64 = plain.parse().ok().filter(|_| valid)?;
    Some(format!("{amount:.2}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field(field_type: FieldType, allowed: Option<&[&str]>) -> FieldRecord {
        FieldRecord {
            name: "f".into(),
            label: "F".into(),
            description: "F?".into(),
            field_type,
            allowed_values: allowed.map(|a| a.iter().map(|s| (*s).to_owned()).collect()),
            required: true,
            when: None,
        }
    }

    #[test]
    fn typed_answers_and_their_text_forms_read_the_same() {
        let flag = field(FieldType::Boolean, None);
        assert_eq!(captured_answer(&flag, &json!(true)).unwrap(), "true");
        assert_eq!(captured_answer(&flag, &json!("False")).unwrap(), "false");
        assert_eq!(captured_answer(&flag, &json!("yes")).unwrap(), "true");
        let amount = field(FieldType::Dollar, None);
        assert_eq!(captured_answer(&amount, &json!(250.5)).unwrap(), "250.50");
        assert_eq!(
            captured_answer(&amount, &json!("$1,500")).unwrap(),
            "1500.00"
        );
        assert_eq!(captured_answer(&amount, &json!("-20")).unwrap(), "-20.00");
        let plan = field(FieldType::Multiple, Some(&["HMO", "PPO"]));
        assert_eq!(captured_answer(&plan, &json!("ppo")).unwrap(), "PPO");
        assert_eq!(captured_answer(&plan, &json!(" ")), None);
        assert_eq!(captured_answer(&plan, &Value::Null), None);
    }

    #[test]
    fn cannot_answer_is_kept_verbatim_on_every_type() {
        let value = json!("CANNOT ANSWER - representative could not confirm");
        for field in [
            field(FieldType::Boolean, None),
            field(FieldType::Multiple, Some(&["HMO", "PPO"])),
            field(FieldType::Dollar, None),
            field(FieldType::Date, None),
            field(FieldType::Alphanumeric, None),
        ] {
            assert_eq!(
                captured_answer(&field, &value).as_deref(),
                Some("CANNOT ANSWER - representative could not confirm"),
                "{:?}",
                field.field_type
            );
        }
    }

    #[test]
    fn an_answer_outside_the_type_is_kept_as_given() {
        let plan = field(FieldType::Multiple, Some(&["HMO", "PPO"]));
        assert_eq!(captured_answer(&plan, &json!("EPO")).unwrap(), "EPO");
        let amount = field(FieldType::Dollar, None);
        assert_eq!(
            captured_answer(&amount, &json!("about 20")).unwrap(),
            "about 20"
        );
    }
}
