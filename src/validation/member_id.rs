//! Member ID validation under `enforce_member_id_validation` (service-interface 7.4 rule 6).
//!
//! The rule set is chosen by the payer: a name that, with spaces removed and lowercased, contains one of the
//! regional-plan family's markers selects the family rules; anything else the generic rules. Only the first
//! failing rule is reported.

/// Substrings of a normalized payer name that select the regional-plan family (Blue Cross Blue Shield).
const FAMILY_MARKERS: [&str; 3] = ["bluecross", "blueshield", "bcbs"];
/// Placeholders that are never real member IDs.
const PLACEHOLDERS: [&str; 3] = ["NULL", "TEST", "ABCD"];

/// Which rules to apply, decided from the payer name and the account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberIdRules {
    /// The regional-plan family's rules; `require_prefix` adds the three-character plan prefix rule.
    Family {
        /// Whether the plan-prefix rule applies (gated per account, never for federal or Medicare plans).
        require_prefix: bool,
    },
    /// Every other payer.
    Generic,
}

impl MemberIdRules {
    /// The rules for `payer_name`; `prefix_gate` is the account's opt-in to the plan-prefix rule.
    pub fn for_payer(payer_name: &str, prefix_gate: bool) -> MemberIdRules {
        let normalized: String = payer_name
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_lowercase();
        if !FAMILY_MARKERS
            .iter()
            .any(|marker| normalized.contains(marker))
        {
            return MemberIdRules::Generic;
        }
        let federal_or_medicare = ["federal", "fep", "medicare"]
            .iter()
            .any(|m| normalized.contains(m));
        MemberIdRules::Family {
            require_prefix: prefix_gate && !federal_or_medicare,
        }
    }

    /// The reason of the first rule `member_id` breaks, if any.
    pub fn check(self, member_id: &str) -> Option<String> {
        match self {
            MemberIdRules::Family { require_prefix } => check_family(member_id, require_prefix),
            MemberIdRules::Generic => check_generic(member_id),
        }
    }
}

fn check_family(id: &str, require_prefix: bool) -> Option<String> {
    if id.is_empty()
        || !id
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        return Some("memberId must contain only uppercase letters and digits".into());
    }
    if PLACEHOLDERS.iter().any(|p| id.contains(p)) {
        return Some("memberId must not contain NULL, TEST or ABCD".into());
    }
    if id.len() < 9 {
        return Some("memberId must be at least 9 characters for this payer".into());
    }
    let bytes = id.as_bytes();
    let r_number = bytes[0] == b'R' && bytes[1..].iter().all(u8::is_ascii_digit);
    if id.len() == 9 && bytes[0] == b'R' && !r_number {
        return Some(
            "memberId of 9 characters starting with R must be R followed by 8 digits".into(),
        );
    }
    if require_prefix && !r_number {
        let prefix_ok = bytes[0].is_ascii_uppercase()
            && (bytes[1].is_ascii_uppercase() || (b'2'..=b'9').contains(&bytes[1]))
            && bytes[2].is_ascii_uppercase();
        if !prefix_ok {
            return Some("memberId must begin with the plan's 3-character prefix (letter, letter or digit 2-9, letter)".into());
        }
    }
    None
}

fn check_generic(id: &str) -> Option<String> {
    let upper = id.to_ascii_uppercase();
    if ["NA", "N/A", "NONE"].contains(&upper.as_str()) {
        return Some("memberId must not be NA, N/A or NONE".into());
    }
    if id.chars().count() < 4 {
        return Some("memberId must be at least 4 characters".into());
    }
    if PLACEHOLDERS.iter().any(|p| upper.contains(p)) {
        return Some("memberId must not contain NULL, TEST or ABCD".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payer_name_selects_the_rule_set() {
        let family = MemberIdRules::Family {
            require_prefix: false,
        };
        for name in [
            "Blue Cross Blue Shield of Texas",
            "BCBS TX",
            "Anthem Blue Cross",
            "Regence BlueShield",
            "blue cross",
        ] {
            assert_eq!(MemberIdRules::for_payer(name, false), family, "{name}");
        }
        for name in ["Aetna", "UnitedHealthcare", "Cigna", "Blue Care Network"] {
            assert_eq!(
                MemberIdRules::for_payer(name, true),
                MemberIdRules::Generic,
                "{name}"
            );
        }
    }

    #[test]
    fn the_prefix_rule_is_gated_and_skips_federal_and_medicare_plans() {
        assert_eq!(
            MemberIdRules::for_payer("BCBS TX", true),
            MemberIdRules::Family {
                require_prefix: true
            }
        );
        assert_eq!(
            MemberIdRules::for_payer("BCBS TX", false),
            MemberIdRules::Family {
                require_prefix: false
            }
        );
        for name in [
            "BCBS Federal Employee Program",
            "Blue Cross FEP",
            "Blue Cross Medicare Advantage",
        ] {
            assert_eq!(
                MemberIdRules::for_payer(name, true),
                MemberIdRules::Family {
                    require_prefix: false
                },
                "{name}"
            );
        }
    }

    #[test]
    fn family_rules_apply_in_order_and_report_only_the_first_failure() {
        let rules = MemberIdRules::Family {
            require_prefix: true,
        };
        let cases = [
            ("abc123456", Some("uppercase")),              // lowercase: rule 1
            ("XYZ-12345", Some("uppercase")),              // punctuation: rule 1
            ("XYZTEST12", Some("NULL, TEST or ABCD")),     // rule 2 before length
            ("NULL", Some("NULL, TEST or ABCD")),          // rule 2 before rule 3
            ("XYZ1234", Some("at least 9")),               // rule 3
            ("R1234567A", Some("R followed by 8 digits")), // rule 4
            ("1XZ123456", Some("prefix")),                 // rule 5
            ("X1Z123456", Some("prefix")),                 // digit 1 is not allowed second
            ("XYZ123456", None),
            ("X2Z123456789", None),
            ("R12345678", None), // federal-style R number needs no prefix
        ];
        for (id, expected) in cases {
            let reason = rules.check(id);
            match expected {
                Some(part) => assert!(
                    reason.as_deref().is_some_and(|r| r.contains(part)),
                    "{id}: {reason:?}"
                ),
                None => assert_eq!(reason, None, "{id}"),
            }
        }
        assert_eq!(
            MemberIdRules::Family {
                require_prefix: false
            }
            .check("123456789"),
            None
        );
    }

    #[test]
    fn generic_rules_apply_in_order() {
        let rules = MemberIdRules::Generic;
        let cases = [
            ("NA", Some("NA, N/A or NONE")),
            ("n/a", Some("NA, N/A or NONE")),
            ("None", Some("NA, N/A or NONE")),
            ("AB1", Some("at least 4")),
            ("TEST1234", Some("NULL, TEST or ABCD")),
            ("xnullx", Some("NULL, TEST or ABCD")),
            ("W123456789", None),
            ("abc1", None),
        ];
        for (id, expected) in cases {
            let reason = rules.check(id);
            match expected {
                Some(part) => assert!(
                    reason.as_deref().is_some_and(|r| r.contains(part)),
                    "{id}: {reason:?}"
                ),
                None => assert_eq!(reason, None, "{id}"),
            }
        }
    }
}
