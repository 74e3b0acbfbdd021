//! Synchronous input validation of a request (service-interface 7.4).
//!
//! Every missing and every invalid key is reported at once, in two buckets, so a client fixes its input in
//! one round trip. A value breaks at most one rule: the universal rules first, then (for `memberId` under
//! member-ID validation) the payer family's rules, first failure only, then its type's rule. A value over
//! [`MAX_VALUE_BYTES`] breaks only its length rule: no pattern runs over it.

mod bounds;
mod member_id;
mod rules;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::configuration::InputType;
use crate::wire::InvalidInputsOut;
pub use bounds::{
    check_input_bounds, InputsTooLarge, MAX_INPUTS, MAX_INPUTS_BYTES, MAX_KEY_BYTES,
    MAX_VALUE_BYTES,
};
pub use member_id::MemberIdRules;
pub use rules::{parse_boolean, parse_date, ValueKind};

/// The two buckets of an `INVALID_INPUTS` answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputErrors {
    /// Required keys absent, `null`, empty or whitespace-only; sorted.
    pub missing_inputs: Vec<String>,
    /// Supplied values that break a rule, with the reason.
    pub invalid_inputs: BTreeMap<String, String>,
}

impl InputErrors {
    /// Whether nothing was found wrong.
    pub fn is_empty(&self) -> bool {
        self.missing_inputs.is_empty() && self.invalid_inputs.is_empty()
    }

    /// A one-line summary for the envelope's `message`.
    pub fn message(&self) -> String {
        let mut parts = Vec::new();
        if !self.missing_inputs.is_empty() {
            parts.push(format!(
                "missing required inputs: {}",
                self.missing_inputs.join(", ")
            ));
        }
        if !self.invalid_inputs.is_empty() {
            let keys: Vec<&str> = self.invalid_inputs.keys().map(String::as_str).collect();
            parts.push(format!("invalid inputs: {}", keys.join(", ")));
        }
        format!("Input validation failed: {}", parts.join("; "))
    }

    /// The envelope's `details`.
    pub fn details(&self) -> InvalidInputsOut {
        InvalidInputsOut {
            missing_inputs: self.missing_inputs.clone(),
            invalid_inputs: self.invalid_inputs.clone(),
        }
    }
}

/// What validation needs to know besides the inputs.
pub struct InputRules<'a> {
    /// Keys that must be present (schema, plus the payer's under per-payer required inputs).
    pub required: &'a [String],
    /// The input-type catalogue (`[input_types]`).
    pub catalogue: &'a BTreeMap<String, InputType>,
    /// Member-ID rules when the account enforces them.
    pub member_id: Option<MemberIdRules>,
}

/// Validates `inputs` and returns them as a flat string map (JSON booleans and 0/1 integers of boolean keys
/// become strings), or every problem found.
pub fn validate_inputs(
    inputs: &serde_json::Map<String, Value>,
    rules: &InputRules<'_>,
) -> Result<BTreeMap<String, String>, InputErrors> {
    let mut errors = InputErrors::default();
    for key in rules.required {
        let present = match inputs.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => s.len() > MAX_VALUE_BYTES || !s.trim().is_empty(),
            Some(_) => true,
        };
        if !present {
            errors.missing_inputs.push(key.clone());
        }
    }
    errors.missing_inputs.sort();
    errors.missing_inputs.dedup();

    let mut accepted = BTreeMap::new();
    for (key, value) in inputs {
        let kind = ValueKind::of(key, rules.catalogue.get(key).copied());
        let text = match value {
            Value::Null => continue,
            Value::String(s) if s.len() > MAX_VALUE_BYTES => {
                errors.invalid_inputs.insert(
                    key.clone(),
                    format!("{key} is longer than {MAX_VALUE_BYTES} bytes"),
                );
                continue;
            }
            Value::String(s) if s.trim().is_empty() => continue,
            Value::String(s) => s.clone(),
            Value::Bool(b) if kind == ValueKind::Boolean => b.to_string(),
            Value::Number(n)
                if kind == ValueKind::Boolean
                    && (n.as_u64() == Some(0) || n.as_u64() == Some(1)) =>
            {
                n.to_string()
            }
            // A boolean key also takes JSON booleans and 0/1, so anything else breaks its type rule;
            // any other key takes strings only.
            _ if kind == ValueKind::Boolean => {
                errors
                    .invalid_inputs
                    .insert(key.clone(), format!("{key} is invalid"));
                continue;
            }
            _ => {
                errors
                    .invalid_inputs
                    .insert(key.clone(), format!("{key} must be a string"));
                continue;
            }
        };
        if let Some(reason) = value_reason(key, &text, kind, rules.member_id) {
            errors.invalid_inputs.insert(key.clone(), reason);
            continue;
        }
        accepted.insert(key.clone(), text);
    }
    if errors.is_empty() {
        Ok(accepted)
    } else {
        Err(errors)
    }
}

fn value_reason(
    key: &str,
    value: &str,
    kind: ValueKind,
    member_id: Option<MemberIdRules>,
) -> Option<String> {
    if let Some(reason) = rules::universal_reason(key, value) {
        return Some(reason);
    }
    // Member-ID validation adds to the pattern (7.4 rule 6: without it, memberId gets "only" the universal
    // rules and the pattern). Its rules go first so that their named reasons are reachable: `N/A` would
    // otherwise always fail the pattern first.
    if key == "memberId" {
        if let Some(reason) = member_id.and_then(|rules| rules.check(value)) {
            return Some(reason);
        }
    }
    rules::type_reason(key, value, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalogue() -> BTreeMap<String, InputType> {
        [
            ("dateOfService", InputType::Date),
            ("claimChargeAmount", InputType::Dollar),
            ("isPrimaryPolicy", InputType::Boolean),
        ]
        .into_iter()
        .map(|(k, t)| (k.to_owned(), t))
        .collect()
    }

    fn run(
        inputs: Value,
        required: &[&str],
        member_id: Option<MemberIdRules>,
    ) -> Result<BTreeMap<String, String>, InputErrors> {
        let required: Vec<String> = required.iter().map(|s| (*s).to_owned()).collect();
        let catalogue = catalogue();
        let rules = InputRules {
            required: &required,
            catalogue: &catalogue,
            member_id,
        };
        validate_inputs(inputs.as_object().unwrap(), &rules)
    }

    #[test]
    fn a_value_of_1024_bytes_is_accepted_and_one_of_1025_is_refused_under_its_key() {
        let at_limit = "W".repeat(MAX_VALUE_BYTES);
        let accepted = run(json!({ "memberId": at_limit }), &["memberId"], None).unwrap();
        assert_eq!(accepted["memberId"].len(), MAX_VALUE_BYTES);
        // Blank or not, a value over the limit is refused (and not also reported missing).
        for over in [
            "W".repeat(MAX_VALUE_BYTES + 1),
            " ".repeat(MAX_VALUE_BYTES + 1),
        ] {
            let errors = run(json!({ "memberId": over }), &["memberId"], None).unwrap_err();
            assert!(errors.missing_inputs.is_empty(), "{errors:?}");
            assert_eq!(
                errors.invalid_inputs["memberId"],
                "memberId is longer than 1024 bytes"
            );
        }
    }

    #[test]
    fn absent_null_empty_and_blank_required_keys_are_all_missing() {
        let errors = run(
            json!({ "b": null, "c": "", "d": "   ", "e": "ok" }),
            &["e", "d", "c", "b", "a"],
            None,
        )
        .unwrap_err();
        assert_eq!(errors.missing_inputs, ["a", "b", "c", "d"]);
        assert!(errors.invalid_inputs.is_empty());
    }

    #[test]
    fn missing_and_invalid_are_reported_together() {
        let errors = run(
            json!({ "phoneNumber": "12345", "dateOfService": "2026-02-30", "claimChargeAmount": "$5" }),
            &["payerName", "phoneNumber"],
            None,
        )
        .unwrap_err();
        assert_eq!(errors.missing_inputs, ["payerName"]);
        assert_eq!(
            serde_json::to_value(errors.details()).unwrap(),
            json!({
                "missingInputs": ["payerName"],
                "invalidInputs": {
                    "phoneNumber": "phoneNumber is not a valid U.S. phone number",
                    "dateOfService": "dateOfService is invalid",
                    "claimChargeAmount": "claimChargeAmount is invalid",
                }
            })
        );
    }

    #[test]
    fn omitted_optional_keys_are_never_flagged_and_extra_keys_pass_through() {
        let accepted = run(
            json!({ "payerName": "Aetna", "someContext": "note", "claimChargeAmount": "" }),
            &["payerName"],
            None,
        )
        .unwrap();
        assert_eq!(accepted.len(), 2);
        assert_eq!(accepted["someContext"], "note");
    }

    #[test]
    fn the_universal_rules_win_over_the_type_rule() {
        let errors = run(
            json!({ "claimChargeAmount": "1.0e5", "note": "{x}" }),
            &[],
            None,
        )
        .unwrap_err();
        assert_eq!(
            errors.invalid_inputs["claimChargeAmount"],
            "claimChargeAmount is scientific notation"
        );
        assert_eq!(
            errors.invalid_inputs["note"],
            "note contains invalid characters (curly braces)"
        );
    }

    #[test]
    fn boolean_keys_accept_json_booleans_and_zero_or_one_but_other_non_strings_are_invalid() {
        let accepted = run(json!({ "isPrimaryPolicy": true }), &[], None).unwrap();
        assert_eq!(accepted["isPrimaryPolicy"], "true");
        assert_eq!(
            run(json!({ "isPrimaryPolicy": 1 }), &[], None).unwrap()["isPrimaryPolicy"],
            "1"
        );
        let errors = run(
            json!({ "isPrimaryPolicy": 2, "memberId": 12345, "x": ["a"] }),
            &[],
            None,
        )
        .unwrap_err();
        assert_eq!(
            errors.invalid_inputs["isPrimaryPolicy"],
            "isPrimaryPolicy is invalid"
        );
        assert_eq!(
            errors.invalid_inputs["memberId"],
            "memberId must be a string"
        );
        assert_eq!(errors.invalid_inputs["x"], "x must be a string");
    }

    #[test]
    fn member_id_validation_adds_its_rules_before_the_pattern_and_reports_one_reason() {
        let family = Some(MemberIdRules::Family {
            require_prefix: false,
        });
        let errors = run(json!({ "memberId": "abc" }), &[], family).unwrap_err();
        assert!(
            errors.invalid_inputs["memberId"].contains("uppercase"),
            "{errors:?}"
        );
        assert!(run(json!({ "memberId": "XYZ123456" }), &[], family).is_ok());
        let generic = run(
            json!({ "memberId": "N/A" }),
            &[],
            Some(MemberIdRules::Generic),
        )
        .unwrap_err();
        assert!(generic.invalid_inputs["memberId"].contains("NA, N/A or NONE"));
        // Enforcement makes the check stricter, never looser: the pattern still applies after the rules.
        assert_eq!(
            run(
                json!({ "memberId": "W1234_5678" }),
                &[],
                Some(MemberIdRules::Generic)
            )
            .unwrap_err()
            .invalid_inputs["memberId"],
            "memberId is invalid"
        );
        // Without enforcement only the universal rules and the pattern apply.
        assert_eq!(
            run(json!({ "memberId": "N/A" }), &[], None)
                .unwrap_err()
                .invalid_inputs["memberId"],
            "memberId is invalid"
        );
        assert!(run(json!({ "memberId": "abc" }), &[], None).is_ok());
    }
}
