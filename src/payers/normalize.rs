//! Payer names reduced to comparable forms: case, punctuation, "&", corporate suffixes and word order stop
//! mattering, and the family abbreviation and state codes expand to the words they stand for.

use std::collections::BTreeSet;

/// A name in comparable form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameForm {
    /// Tokens joined without spaces, in order: catches "BlueCross BlueShield" vs "Blue Cross Blue Shield".
    pub compact: String,
    /// The set of tokens: catches word order.
    pub tokens: BTreeSet<String>,
}

/// Words that never distinguish one payer from another.
const NOISE: [&str; 11] = [
    "of",
    "the",
    "inc",
    "corp",
    "corporation",
    "company",
    "llc",
    "ltd",
    "lp",
    "incorporated",
    "plc",
];

/// Two-letter state codes (those that are not also common English words, which would misfire).
const STATES: [(&str, &str); 45] = [
    ("al", "alabama"),
    ("ak", "alaska"),
    ("az", "arizona"),
    ("ar", "arkansas"),
    ("ca", "california"),
    ("co", "colorado"),
    ("ct", "connecticut"),
    ("de", "delaware"),
    ("fl", "florida"),
    ("ga", "georgia"),
    ("id", "idaho"),
    ("il", "illinois"),
    ("ia", "iowa"),
    ("ks", "kansas"),
    ("ky", "kentucky"),
    ("la", "louisiana"),
    ("md", "maryland"),
    ("ma", "massachusetts"),
    ("mi", "michigan"),
    ("mn", "minnesota"),
    ("ms", "mississippi"),
    ("mo", "missouri"),
    ("mt", "montana"),
    ("ne", "nebraska"),
    ("nv", "nevada"),
    ("nh", "new hampshire"),
    ("nj", "new jersey"),
    ("nm", "new mexico"),
    ("ny", "new york"),
    ("nc", "north carolina"),
    ("nd", "north dakota"),
    ("oh", "ohio"),
    ("pa", "pennsylvania"),
    ("ri", "rhode island"),
    ("sc", "south carolina"),
    ("sd", "south dakota"),
    ("tn", "tennessee"),
    ("tx", "texas"),
    ("ut", "utah"),
    ("vt", "vermont"),
    ("va", "virginia"),
    ("wa", "washington"),
    ("wv", "west virginia"),
    ("wi", "wisconsin"),
    ("wy", "wyoming"),
];

/// Abbreviations and compounds written many ways.
const EXPANSIONS: [(&str, &str); 5] = [
    ("bcbs", "blue cross blue shield"),
    ("bluecross", "blue cross"),
    ("blueshield", "blue shield"),
    ("bc", "blue cross"),
    ("bs", "blue shield"),
];

/// The comparable form of `name`.
pub fn normalize(name: &str) -> NameForm {
    let lowered = name.to_lowercase().replace('&', " and ");
    let cleaned: String = lowered
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let mut words: Vec<String> = Vec::new();
    for word in cleaned.split_whitespace() {
        if NOISE.contains(&word) {
            continue;
        }
        // "co" is both a corporate suffix and Colorado: a suffix after a name, the state on its own.
        if word == "co" && !words.is_empty() {
            continue;
        }
        let expanded = EXPANSIONS
            .iter()
            .chain(STATES.iter())
            .find(|(short, _)| *short == word)
            .map_or(word, |(_, long)| *long);
        words.extend(expanded.split(' ').map(str::to_owned));
    }
    words.retain(|w| w != "and");
    NameForm {
        compact: words.concat(),
        tokens: words.into_iter().collect(),
    }
}

/// Whether a name belongs to the regional-plan family (Blue Cross Blue Shield plans).
pub fn is_family(form: &NameForm) -> bool {
    form.tokens.contains("blue")
        && (form.tokens.contains("cross") || form.tokens.contains("shield"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_punctuation_suffixes_and_ampersands_do_not_matter() {
        assert_eq!(normalize("Aetna, Inc.").compact, "aetna");
        assert_eq!(normalize("AETNA").compact, "aetna");
        assert_eq!(
            normalize("Texas Medicaid & Healthcare Partnership").compact,
            "texasmedicaidhealthcarepartnership"
        );
        assert_eq!(normalize("Medi-Cal").compact, "medical");
    }

    #[test]
    fn the_family_abbreviation_and_state_codes_expand() {
        assert_eq!(
            normalize("BCBS TX").tokens,
            normalize("Blue Cross Blue Shield of Texas").tokens
        );
        assert_eq!(
            normalize("BlueCross BlueShield of Tennessee").compact,
            normalize("Blue Cross Blue Shield Tennessee").compact
        );
        assert!(is_family(&normalize("bcbs")));
        assert!(!is_family(&normalize("Blue Care Network")));
    }
}
