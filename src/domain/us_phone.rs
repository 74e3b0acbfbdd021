//! U.S. phone numbers as the spec sanitizes them (7.4): spaces, parentheses, hyphens, `+` and a leading `1`
//! are stripped, and the first number is taken when several are separated by commas or `x`. What remains
//! must be a valid U.S. number of the North American Numbering Plan: ten digits, area code and exchange
//! not starting with 0 or 1, and an area code actually assigned to the United States or its territories.
//! The assignment check uses libphonenumber's metadata (the `phonenumber` crate) rather than a hand-kept
//! list, so N11 codes, unassigned codes such as 555, and Canadian or Caribbean numbers are refused.

use std::fmt;
use std::sync::LazyLock;

use crate::memo::Memo;

/// A valid ten-digit U.S. number.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct UsPhone(String);

impl UsPhone {
    /// Sanitizes and checks `raw`; `None` when it is not a valid U.S. number.
    pub fn parse(raw: &str) -> Option<UsPhone> {
        let first = raw.split([',', 'x', 'X']).next().unwrap_or_default();
        let mut digits: String = first
            .chars()
            .filter(|c| !matches!(c, ' ' | '(' | ')' | '-' | '+'))
            .collect();
        if digits.len() == 11 && digits.starts_with('1') {
            digits.remove(0);
        }
        let bytes = digits.as_bytes();
        let shaped = bytes.len() == 10
            && bytes.iter().all(u8::is_ascii_digit)
            && (b'2'..=b'9').contains(&bytes[0])
            && (b'2'..=b'9').contains(&bytes[3]);
        (shaped && is_assigned_us_number(&digits)).then_some(UsPhone(digits))
    }

    /// Loads the numbering-plan metadata now rather than on the first request that needs it (it takes a
    /// few hundred milliseconds once).
    pub fn warm_up() {
        let _ = is_assigned_us_number("2125550123");
    }

    /// The ten digits.
    pub fn digits(&self) -> &str {
        &self.0
    }

    /// E.164 form, `+1` and ten digits.
    pub fn e164(&self) -> String {
        format!("+1{}", self.0)
    }
}

/// Regions of the numbering plan that are the United States.
const US_REGIONS: [phonenumber::country::Id; 6] = {
    use phonenumber::country::Id::{AS, GU, MP, PR, US, VI};
    [US, PR, VI, GU, AS, MP]
};

fn is_assigned_us_number(digits: &str) -> bool {
    // libphonenumber's check is a few microseconds of regex work, and the same payer numbers come back
    // on request after request.
    static VERDICTS: LazyLock<Memo<String, bool>> = LazyLock::new(Memo::new);
    VERDICTS.get_or_compute(digits.to_owned(), |digits| check_assignment(digits))
}

fn check_assignment(digits: &str) -> bool {
    let Ok(number) = phonenumber::parse(Some(phonenumber::country::Id::US), digits) else {
        return false;
    };
    phonenumber::is_valid(&number)
        && number
            .country()
            .id()
            .is_some_and(|region| US_REGIONS.contains(&region))
}

impl fmt::Display for UsPhone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizing_accepts_the_spec_spellings() {
        for raw in [
            "8005550123",
            "(800) 555-0123",
            "800-555-0123",
            "+1 800 555 0123",
            "1-800-555-0123",
            "18005550123",
            "800-555-0123, 800-555-0199",
            "800-555-0123x42",
            "800 555 0123 X 7",
        ] {
            assert_eq!(
                UsPhone::parse(raw).map(|p| p.digits().to_owned()),
                Some("8005550123".into()),
                "{raw}"
            );
        }
    }

    #[test]
    fn numbers_outside_the_numbering_plan_are_rejected() {
        for raw in [
            "",
            "555-0123",
            "0005550123",
            "1805550123x",
            "8000550123",
            "8001550123",
            "80055501234",
            "800555012a",
            "800.555.0123",
            "28005550123",
        ] {
            assert_eq!(UsPhone::parse(raw), None, "{raw}");
        }
    }

    #[test]
    fn e164_prefixes_the_country_code() {
        assert_eq!(
            UsPhone::parse("(800) 555-0123").unwrap().e164(),
            "+18005550123"
        );
    }
}
