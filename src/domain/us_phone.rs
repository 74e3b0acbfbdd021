//! U.S. phone numbers as the spec sanitizes them (7.4): spaces, parentheses, hyphens, `+` and a leading `1`
//! are stripped, and the first number is taken when several are separated by commas or `x`. What remains
//! must be a valid U.S. number of the North American Numbering Plan: ten digits, area code and exchange
//! not starting with 0 or 1, and an area code actually assigned to the United States or its territories.
//! The assignment check uses libphonenumber's metadata (the `phonenumber` crate) rather than a hand-kept
//! list, so N11 codes, unassigned codes such as 555, and Canadian or Caribbean numbers are refused.
//!
//! Only the plan's own territories are loaded (`nanp_metadata.xml`, written by `scripts/nanp-metadata`
//! from the crate's copy). The crate's full database compiles the patterns of all 254 regions: 70 to
//! 95 ms on every start, against 8 to 14 ms for these 25, and no U.S. verdict depends on the others.

use std::fmt;
use std::sync::LazyLock;

use phonenumber::metadata::Database;

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

    /// Loads the numbering-plan metadata now rather than on the first request that needs it.
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
    VERDICTS.get_or_compute(digits.to_owned(), |digits| verdict(&PLAN, digits))
}

/// The metadata of the plan's territories.
static PLAN: LazyLock<Database> = LazyLock::new(|| {
    // Parsed on a thread of its own. Parsed on the start-up thread, the XML reader's temporaries stayed
    // in that thread's allocator heap: 5 to 6 MiB more resident at readiness (34.5 against 28.9 MiB on
    // an empty store, 148 against 141 MiB with 1,000,000 stored requests). They leave with the thread.
    std::thread::scope(|scope| {
        scope
            .spawn(|| Database::parse(include_str!("nanp_metadata.xml")))
            .join()
            .expect("the metadata parser does not panic")
            .expect("the numbering plan's metadata loads")
    })
});

/// Whether `digits` is a valid number of a U.S. region according to `database`.
fn verdict(database: &Database, digits: &str) -> bool {
    let Ok(number) = phonenumber::parse_with(database, Some(phonenumber::country::Id::US), digits)
    else {
        return false;
    };
    phonenumber::is_valid_with(database, &number)
        && number
            .metadata(database)
            .and_then(|region| region.id().parse().ok())
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
    fn the_plan_subset_agrees_with_the_full_database() {
        // Every area code with exchanges that are assigned, reserved (555, N11) or typical of the
        // Caribbean and Canada, so that a metadata upgrade the subset misses shows here.
        let full = &*phonenumber::metadata::DATABASE;
        let mut checked = 0;
        for area in 200..1000 {
            for exchange in [200, 234, 555, 611, 876, 911] {
                let digits = format!("{area}{exchange}0123");
                assert_eq!(verdict(&PLAN, &digits), verdict(full, &digits), "{digits}");
                checked += usize::from(verdict(&PLAN, &digits));
            }
        }
        // Most U.S. area codes are assigned: guards against both databases refusing everything.
        assert!(checked > 1000, "only {checked} numbers valid");
    }

    #[test]
    fn the_plan_subset_holds_the_full_databases_metadata_for_every_territory_of_the_plan() {
        let full = &*phonenumber::metadata::DATABASE;
        let regions = full
            .region(&1)
            .expect("country code 1 in the full database");
        assert_eq!(PLAN.region(&1), Some(regions.clone()));
        for region in regions {
            assert!(full.by_id(region).is_some(), "{region}");
            assert_eq!(
                format!("{:?}", PLAN.by_id(region)),
                format!("{:?}", full.by_id(region)),
                "{region}: run scripts/nanp-metadata"
            );
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
