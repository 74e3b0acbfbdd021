//! The per-value rules of service-interface 7.4: universal rules, then the rule of the key's type.

use std::sync::LazyLock;

use chrono::NaiveDate;
use regex::Regex;

use crate::configuration::InputType;
use crate::domain::UsPhone;

static SCIENTIFIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^-?\d+\.\d+[eE][-+]?\d+$").unwrap());
static DOLLAR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^-?\d+(?:\.\d{1,2})?$").unwrap());
static PTAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:[A-Za-z0-9]{6}|[A-Za-z0-9]{9})$").unwrap());
static NPI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\d{10}$").unwrap());
static TAX_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d-?){9}$").unwrap());
static PERSON_NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[A-Za-z ,.'-]+$").unwrap());
static MEMBER_ID: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-zA-Z0-9 -]+$").unwrap());

/// Date spellings accepted as unambiguous: ISO first (advised), then the U.S. month-first forms.
const DATE_FORMATS: [&str; 5] = ["%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%m-%d-%Y", "%Y%m%d"];

/// How a key's value is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// Any key containing `phonenumber`, whatever the catalogue says.
    Phone,
    /// A calendar date.
    Date,
    /// A dollar amount.
    Dollar,
    /// A boolean flag.
    Boolean,
    /// Free text, with the key's custom pattern if it has one.
    String,
}

impl ValueKind {
    /// The kind of `key`: phone by name, otherwise the catalogue's type, otherwise string.
    pub fn of(key: &str, catalogue_type: Option<InputType>) -> ValueKind {
        if key.to_ascii_lowercase().contains("phonenumber") {
            return ValueKind::Phone;
        }
        match catalogue_type {
            Some(InputType::Phone) => ValueKind::Phone,
            Some(InputType::Date) => ValueKind::Date,
            Some(InputType::Dollar) => ValueKind::Dollar,
            Some(InputType::Boolean) => ValueKind::Boolean,
            Some(InputType::String) | None => ValueKind::String,
        }
    }
}

/// The universal rules, applied to every non-empty value.
pub fn universal_reason(key: &str, value: &str) -> Option<String> {
    if SCIENTIFIC.is_match(value) {
        return Some(format!("{key} is scientific notation"));
    }
    if value.contains(['{', '}']) {
        return Some(format!("{key} contains invalid characters (curly braces)"));
    }
    None
}

/// The rule of the key's type.
pub fn type_reason(key: &str, value: &str, kind: ValueKind) -> Option<String> {
    let valid = match kind {
        ValueKind::Phone => {
            return UsPhone::parse(value)
                .is_none()
                .then(|| format!("{key} is not a valid U.S. phone number"));
        }
        ValueKind::Date => parse_date(value).is_some(),
        ValueKind::Dollar => DOLLAR.is_match(value),
        ValueKind::Boolean => parse_boolean(value).is_some(),
        ValueKind::String => return custom_pattern_reason(key, value),
    };
    (!valid).then(|| format!("{key} is invalid"))
}

fn custom_pattern_reason(key: &str, value: &str) -> Option<String> {
    let (pattern, message): (&Regex, Option<&str>) = match key {
        "ptan" => (&PTAN, Some("PTAN must be 6 or 9 alphanumeric characters.")),
        "billingProviderNpi" | "facilityNpi" | "renderingProviderNpi" | "practiceNPI" => {
            (&NPI, Some("Must contain exactly 10 digits."))
        }
        "billingProviderTaxId" | "groupTaxId" | "practiceTaxId" | "renderingProviderTaxId" => (
            &TAX_ID,
            Some("Must contain exactly 9 digits and may include hyphens."),
        ),
        "memberFirstName" | "memberLastName" | "patientFirstName" | "patientLastName" => (
            &PERSON_NAME,
            Some("Only letters, spaces, hyphens, commas, periods, and apostrophes are allowed."),
        ),
        "memberId" => (&MEMBER_ID, None),
        _ => return None,
    };
    if pattern.is_match(value) {
        return None;
    }
    Some(match message {
        Some(message) => format!("{key} is invalid: {message}"),
        None => format!("{key} is invalid"),
    })
}

/// A calendar date in one of the unambiguous spellings; impossible dates (2026-02-30) are `None`.
pub fn parse_date(value: &str) -> Option<NaiveDate> {
    DATE_FORMATS
        .iter()
        .find_map(|format| NaiveDate::parse_from_str(value.trim(), format).ok())
}

/// `true`, `false`, `1`, `0`, `yes`, `no`, `y`, `n`, any case.
pub fn parse_boolean(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "y" => Some(true),
        "false" | "0" | "no" | "n" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn universal_rules_catch_scientific_notation_and_curly_braces() {
        let cases = [
            ("1.5e10", Some("x is scientific notation")),
            ("-2.0E-3", Some("x is scientific notation")),
            ("1e10", None), // the spec's pattern needs a fraction
            (
                "{{name}}",
                Some("x contains invalid characters (curly braces)"),
            ),
            ("a}b", Some("x contains invalid characters (curly braces)")),
            ("12345", None),
            ("plain text", None),
        ];
        for (value, expected) in cases {
            assert_eq!(universal_reason("x", value).as_deref(), expected, "{value}");
        }
    }

    #[test]
    fn keys_containing_phonenumber_are_phones_in_any_case() {
        assert_eq!(ValueKind::of("phoneNumber", None), ValueKind::Phone);
        assert_eq!(
            ValueKind::of("callbackPHONENUMBER", Some(InputType::String)),
            ValueKind::Phone
        );
        assert_eq!(
            ValueKind::of("faxNumber", Some(InputType::Phone)),
            ValueKind::Phone
        );
        assert_eq!(
            ValueKind::of("dateOfService", Some(InputType::Date)),
            ValueKind::Date
        );
        assert_eq!(ValueKind::of("whatever", None), ValueKind::String);
    }

    #[test]
    fn each_type_rule_has_a_valid_and_an_invalid_case() {
        let cases = [
            ("phoneNumber", ValueKind::Phone, "(800) 555-0123", None),
            (
                "phoneNumber",
                ValueKind::Phone,
                "555-0123",
                Some("phoneNumber is not a valid U.S. phone number"),
            ),
            (
                "phoneNumber",
                ValueKind::Phone,
                "(123) 555-0123",
                Some("phoneNumber is not a valid U.S. phone number"),
            ),
            ("dateOfService", ValueKind::Date, "2026-11-23", None),
            ("dateOfService", ValueKind::Date, "11/23/2026", None),
            (
                "dateOfService",
                ValueKind::Date,
                "2026-02-30",
                Some("dateOfService is invalid"),
            ),
            (
                "dateOfService",
                ValueKind::Date,
                "23.11.2026",
                Some("dateOfService is invalid"),
            ),
            (
                "dateOfService",
                ValueKind::Date,
                "yesterday",
                Some("dateOfService is invalid"),
            ),
            ("claimChargeAmount", ValueKind::Dollar, "1250.50", None),
            ("claimChargeAmount", ValueKind::Dollar, "-3", None),
            (
                "claimChargeAmount",
                ValueKind::Dollar,
                "$1250.50",
                Some("claimChargeAmount is invalid"),
            ),
            (
                "claimChargeAmount",
                ValueKind::Dollar,
                "1,250.50",
                Some("claimChargeAmount is invalid"),
            ),
            (
                "claimChargeAmount",
                ValueKind::Dollar,
                "12.345",
                Some("claimChargeAmount is invalid"),
            ),
            ("isPrimaryPolicy", ValueKind::Boolean, "Yes", None),
            ("isPrimaryPolicy", ValueKind::Boolean, "0", None),
            (
                "isPrimaryPolicy",
                ValueKind::Boolean,
                "maybe",
                Some("isPrimaryPolicy is invalid"),
            ),
            ("groupNumber", ValueKind::String, "anything at all", None),
        ];
        for (key, kind, value, expected) in cases {
            assert_eq!(
                type_reason(key, value, kind).as_deref(),
                expected,
                "{key}={value}"
            );
        }
    }

    #[test]
    fn each_custom_pattern_has_a_valid_and_an_invalid_case_with_its_exact_message() {
        let npi = "is invalid: Must contain exactly 10 digits.";
        let tax = "is invalid: Must contain exactly 9 digits and may include hyphens.";
        let name = "is invalid: Only letters, spaces, hyphens, commas, periods, and apostrophes are allowed.";
        let cases: Vec<(&str, &str, Option<String>)> = vec![
            ("ptan", "AB1234", None),
            ("ptan", "AB1234567", None),
            (
                "ptan",
                "AB12345",
                Some("ptan is invalid: PTAN must be 6 or 9 alphanumeric characters.".into()),
            ),
            ("billingProviderNpi", "1234567890", None),
            (
                "billingProviderNpi",
                "123456789",
                Some(format!("billingProviderNpi {npi}")),
            ),
            (
                "facilityNpi",
                "12345678901",
                Some(format!("facilityNpi {npi}")),
            ),
            (
                "renderingProviderNpi",
                "12345abcde",
                Some(format!("renderingProviderNpi {npi}")),
            ),
            ("practiceNPI", "0123456789", None),
            ("billingProviderTaxId", "12-3456789", None),
            ("groupTaxId", "123456789", None),
            (
                "practiceTaxId",
                "12345678",
                Some(format!("practiceTaxId {tax}")),
            ),
            (
                "renderingProviderTaxId",
                "12 3456789",
                Some(format!("renderingProviderTaxId {tax}")),
            ),
            ("patientFirstName", "Mary-Jo", None),
            ("memberLastName", "O'Neil, Jr.", None),
            (
                "patientLastName",
                "Sm1th",
                Some(format!("patientLastName {name}")),
            ),
            (
                "memberFirstName",
                "Zoë",
                Some(format!("memberFirstName {name}")),
            ),
            ("memberId", "W123 456-78", None),
            ("memberId", "W123_456", Some("memberId is invalid".into())),
        ];
        for (key, value, expected) in cases {
            assert_eq!(
                type_reason(key, value, ValueKind::String),
                expected,
                "{key}={value}"
            );
        }
    }

    #[test]
    fn dates_must_be_real_calendar_dates() {
        assert_eq!(
            parse_date("2024-02-29"),
            NaiveDate::from_ymd_opt(2024, 2, 29)
        );
        assert_eq!(parse_date("2025-02-29"), None);
        assert_eq!(parse_date("2026-13-01"), None);
        assert_eq!(
            parse_date("20261123"),
            NaiveDate::from_ymd_opt(2026, 11, 23)
        );
    }
}
