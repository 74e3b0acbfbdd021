//! Answers written in a field's type: amounts in the spec's dollar format, percentages, and only values a
//! field can take (its allowed values, `true`/`false`, `YYYY-MM-DD`).

use switchboard_storage::{FieldRecord, FieldType};

/// `value` if it suits the field: a `multiple` field takes only its allowed values, a boolean only
/// `true`/`false`, a date only `YYYY-MM-DD`, a dollar field only an amount.
pub(super) fn typed(field: &FieldRecord, value: &str) -> Option<String> {
    let ok = match field.field_type {
        FieldType::Multiple => field
            .allowed_values
            .as_ref()
            .is_some_and(|allowed| allowed.iter().any(|a| a == value)),
        FieldType::Boolean => matches!(value, "true" | "false"),
        FieldType::Date => chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok(),
        FieldType::Dollar => dollars(value).is_some(),
        FieldType::Alphanumeric => !value.trim().is_empty(),
    };
    ok.then(|| value.to_owned())
}

/// An amount for a dollar field (`1234.50`), or as written for a text field.
pub(super) fn typed_amount(field: &FieldRecord, raw: &str) -> Option<String> {
    match field.field_type {
        FieldType::Dollar => dollars(raw),
        FieldType::Alphanumeric => dollars(raw).map(|d| format!("${d}")),
        _ => None,
    }
}

/// A decimal (`3200`, `5555.16`, `.5`) in the spec's dollar format, rounded to the cent.
pub fn dollars(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let (whole, fraction) = raw.split_once('.').unwrap_or((raw, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let padded = format!("{fraction:0<3}");
    let thousandths: u64 = padded[..3].parse().ok()?;
    let cents = whole.checked_mul(100)? + (thousandths + 5) / 10;
    Some(format!("{}.{:02}", cents / 100, cents % 100))
}

/// A fraction (`.2`, `0.25`) as a percentage for a text field (`20%`).
pub(super) fn percent(field: &FieldRecord, raw: &str) -> Option<String> {
    if field.field_type != FieldType::Alphanumeric {
        return None;
    }
    // Rounded to whole percents: X12 sends `.2` for 20 %.
    let hundredths = dollars(raw)?.replace('.', "").parse::<u64>().ok()?;
    Some(format!("{hundredths}%"))
}
