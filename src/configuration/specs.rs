//! Accounts, schemas and payers as an operator declares them: in `[[accounts]]`, `[[schemas]]` and
//! `[[payers]]` of the config file, and as the JSON bodies of the admin API, which take the same fields.
//! Each spec validates itself; cross-references (a schema an account names, a follow-up leg) are checked
//! by whoever knows the whole set.

use std::collections::BTreeSet;

use serde::Deserialize;
use switchboard_storage::{Environment, Feature, FieldType};

use crate::domain::{SchemaId, UsPhone};
use crate::secret::Secret;

/// A validation failure: the key at fault, relative to the spec, and what is wrong with it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct SpecError {
    /// Dotted path of the offending key, e.g. `fields[2].allowed_values`.
    pub key: String,
    /// Human-readable problem.
    pub problem: String,
}

impl SpecError {
    pub(crate) fn new(key: impl Into<String>, problem: impl Into<String>) -> SpecError {
        SpecError {
            key: key.into(),
            problem: problem.into(),
        }
    }

    /// The same error with its key placed under `prefix`.
    pub fn within(self, prefix: &str) -> SpecError {
        SpecError {
            key: format!("{prefix}.{}", self.key),
            problem: self.problem,
        }
    }
}

/// `[[accounts]]` / `PUT /admin/v1/accounts/{id}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountSpec {
    /// Required in config; in the admin API the path gives it (a body `id` must then match).
    #[serde(default)]
    pub id: Option<String>,
    /// Display name; the id stands in when absent.
    pub name: Option<String>,
    /// Requests scheduled per business day.
    pub daily_call_capacity: u32,
    /// IANA zone of the account's business days.
    #[serde(default = "utc")]
    pub timezone: String,
    /// Account-level webhook URL.
    pub webhook_url: Option<String>,
    /// Account-level webhook secret.
    pub webhook_secret: Option<Secret>,
    /// Opt-in capabilities.
    #[serde(default)]
    pub features: Vec<Feature>,
    /// Provisioned schema ids.
    #[serde(default)]
    pub schemas: Vec<String>,
    /// Key/secret pairs. When absent from an admin replace, the issued pairs are kept.
    pub credentials: Option<Vec<CredentialSpec>>,
    /// Per-account payer phone overrides.
    #[serde(default)]
    pub phone_book: Vec<PhoneBookSpec>,
}

fn utc() -> String {
    "UTC".to_owned()
}

/// One declared key/secret pair.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialSpec {
    /// Production or sandbox.
    pub environment: Environment,
    /// The API key.
    pub key: String,
    /// The API secret.
    pub secret: Secret,
}

/// One per-account phone override.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhoneBookSpec {
    /// Payer name as clients write it.
    pub payer: String,
    /// The number to dial.
    pub phone: String,
}

impl AccountSpec {
    /// Checks everything that can be checked without the rest of the configuration.
    pub fn validate(&self) -> Result<(), SpecError> {
        if let Some(id) = &self.id {
            validate_identifier("id", id)?;
        }
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if self.timezone.parse::<chrono_tz::Tz>().is_err() {
            return Err(SpecError::new(
                "timezone",
                format!("{:?} is not an IANA time zone", self.timezone),
            ));
        }
        if let Some(url) = &self.webhook_url {
            validate_http_url("webhook_url", url)?;
        }
        if self
            .webhook_secret
            .as_ref()
            .is_some_and(|s| s.expose().is_empty())
        {
            return Err(SpecError::new("webhook_secret", "must not be empty"));
        }
        let mut keys = BTreeSet::new();
        for (i, credential) in self.credentials.iter().flatten().enumerate() {
            let at = format!("credentials[{i}]");
            if !is_header_token(&credential.key) {
                return Err(SpecError::new(
                    format!("{at}.key"),
                    "must be 1 to 200 visible ASCII characters without spaces",
                ));
            }
            if credential.secret.expose().is_empty() || !is_header_token(credential.secret.expose())
            {
                return Err(SpecError::new(
                    format!("{at}.secret"),
                    "must be 1 to 200 visible ASCII characters without spaces",
                ));
            }
            if !keys.insert(credential.key.as_str()) {
                return Err(SpecError::new(format!("{at}.key"), "is declared twice"));
            }
        }
        for (i, entry) in self.phone_book.iter().enumerate() {
            if entry.payer.trim().is_empty() {
                return Err(SpecError::new(
                    format!("phone_book[{i}].payer"),
                    "must not be blank",
                ));
            }
            if UsPhone::parse(&entry.phone).is_none() {
                return Err(SpecError::new(
                    format!("phone_book[{i}].phone"),
                    format!("{:?} is not a valid U.S. phone number", entry.phone),
                ));
            }
        }
        Ok(())
    }
}

/// `[[schemas]]` / `PUT /admin/v1/schemas/{id}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaSpec {
    /// Required in config; the admin path gives it otherwise.
    #[serde(default)]
    pub id: Option<String>,
    /// Human label.
    pub name: Option<String>,
    /// Kind of extraction.
    pub request_type: String,
    /// Version of a brand-new schema (later versions are numbered by the server).
    pub version: Option<u32>,
    /// Retired: gone for detail and creation.
    #[serde(default)]
    pub retired: bool,
    /// Hidden: gone from the list only.
    #[serde(default)]
    pub hidden: bool,
    /// Input keys that must be supplied.
    #[serde(default)]
    pub required_inputs: Vec<String>,
    /// Input keys that may be supplied.
    #[serde(default)]
    pub optional_inputs: Vec<String>,
    /// Chained follow-up leg.
    pub follow_up: Option<String>,
    /// Output fields.
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
}

/// One output field of a schema.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    /// Key in `results`.
    pub name: String,
    /// Display label.
    pub label: String,
    /// The question the field answers.
    pub description: String,
    /// Value type.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Suggested values of a `multiple` field.
    pub allowed_values: Option<Vec<String>>,
    /// `SUCCESS` needs every required field.
    #[serde(default)]
    pub required: bool,
    /// Asked only when another field has a given value.
    pub when: Option<WhenSpec>,
}

/// Condition of a conditional field.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WhenSpec {
    /// The deciding field.
    pub field: String,
    /// The answer that opens the conditional field.
    pub equals: String,
}

impl SchemaSpec {
    /// Checks the schema on its own (follow-up existence is the caller's).
    pub fn validate(&self) -> Result<(), SpecError> {
        if let Some(id) = &self.id {
            SchemaId::try_from(id.clone()).map_err(|e| SpecError::new("id", e.to_string()))?;
            if self.follow_up.as_deref() == Some(id.as_str()) {
                return Err(SpecError::new(
                    "follow_up",
                    "a schema cannot chain to itself",
                ));
            }
        }
        if self.request_type.trim().is_empty() {
            return Err(SpecError::new("request_type", "must not be blank"));
        }
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if self.version == Some(0) {
            return Err(SpecError::new("version", "versions start at 1"));
        }
        let mut inputs = BTreeSet::new();
        for (list, keys) in [
            ("required_inputs", &self.required_inputs),
            ("optional_inputs", &self.optional_inputs),
        ] {
            for (i, key) in keys.iter().enumerate() {
                if key.trim().is_empty() {
                    return Err(SpecError::new(format!("{list}[{i}]"), "must not be blank"));
                }
                if !inputs.insert(key.as_str()) {
                    return Err(SpecError::new(
                        format!("{list}[{i}]"),
                        format!("{key:?} is listed twice"),
                    ));
                }
            }
        }
        if self.fields.is_empty() {
            return Err(SpecError::new(
                "fields",
                "a schema needs at least one field",
            ));
        }
        let names: BTreeSet<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        if names.len() != self.fields.len() {
            let duplicate = self
                .fields
                .iter()
                .enumerate()
                .find(|(i, f)| self.fields[..*i].iter().any(|g| g.name == f.name))
                .map(|(i, _)| i)
                .unwrap_or_default();
            return Err(SpecError::new(
                format!("fields[{duplicate}].name"),
                "is used by another field",
            ));
        }
        for (i, field) in self.fields.iter().enumerate() {
            field
                .validate(&names)
                .map_err(|e| e.within(&format!("fields[{i}]")))?;
        }
        Ok(())
    }
}

impl FieldSpec {
    fn validate(&self, names: &BTreeSet<&str>) -> Result<(), SpecError> {
        if self.name.trim().is_empty() {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if self.label.trim().is_empty() {
            return Err(SpecError::new("label", "must not be blank"));
        }
        match (self.field_type, &self.allowed_values) {
            (FieldType::Multiple, None) => {
                return Err(SpecError::new(
                    "allowed_values",
                    "a multiple field needs allowed_values",
                ))
            }
            (FieldType::Multiple, Some(values))
                if values.is_empty() || values.iter().any(|v| v.trim().is_empty()) =>
            {
                return Err(SpecError::new(
                    "allowed_values",
                    "must be non-blank values, at least one",
                ))
            }
            (FieldType::Multiple, Some(_)) => {}
            (other, Some(_)) => {
                return Err(SpecError::new(
                    "allowed_values",
                    format!(
                        "only multiple fields take allowed_values, not {}",
                        other.as_str()
                    ),
                ))
            }
            (_, None) => {}
        }
        if let Some(when) = &self.when {
            if when.field == self.name || !names.contains(when.field.as_str()) {
                return Err(SpecError::new(
                    "when.field",
                    format!("{:?} is not another field of this schema", when.field),
                ));
            }
            if self.required {
                return Err(SpecError::new(
                    "required",
                    "a conditional field cannot be required",
                ));
            }
        }
        Ok(())
    }
}

/// `[[payers]]` / `PUT /admin/v1/payers/{name}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayerSpec {
    /// Required in config; the admin path gives it otherwise.
    #[serde(default)]
    pub name: Option<String>,
    /// Other names and acronyms.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Number to dial; absent when none is on file.
    pub phone: Option<String>,
    /// Extra inputs the payer demands.
    #[serde(default)]
    pub required_inputs: Vec<String>,
    /// Reachable electronically.
    #[serde(default)]
    pub electronic: bool,
    /// Member-ID prefixes that steer to this regional plan.
    #[serde(default)]
    pub member_id_prefixes: Vec<String>,
    /// When the payer's lines take calls (`"HH:MM-HH:MM"` on business days in the account's zone),
    /// overriding `[dialer] calling_hours`.
    #[serde(default)]
    pub calling_hours: Option<String>,
}

impl PayerSpec {
    /// Checks the payer on its own.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if let Some(hours) = &self.calling_hours {
            super::parse_hours(hours).map_err(|e| SpecError::new("calling_hours", e))?;
        }
        if let Some(phone) = &self.phone {
            if UsPhone::parse(phone).is_none() {
                return Err(SpecError::new(
                    "phone",
                    format!("{phone:?} is not a valid U.S. phone number"),
                ));
            }
        }
        for (i, alias) in self.aliases.iter().enumerate() {
            if alias.trim().is_empty() {
                return Err(SpecError::new(format!("aliases[{i}]"), "must not be blank"));
            }
        }
        for (i, key) in self.required_inputs.iter().enumerate() {
            if key.trim().is_empty() {
                return Err(SpecError::new(
                    format!("required_inputs[{i}]"),
                    "must not be blank",
                ));
            }
        }
        for (i, prefix) in self.member_id_prefixes.iter().enumerate() {
            let b = prefix.as_bytes();
            let valid = b.len() == 3
                && b[0].is_ascii_uppercase()
                && (b[1].is_ascii_uppercase() || (b'2'..=b'9').contains(&b[1]))
                && b[2].is_ascii_uppercase();
            if !valid {
                return Err(SpecError::new(
                    format!("member_id_prefixes[{i}]"),
                    format!("{prefix:?} must match ^[A-Z][A-Z2-9][A-Z]$"),
                ));
            }
        }
        Ok(())
    }
}

/// Ids chosen by operators: letters, digits, `-` and `_`, up to 128 characters.
pub(crate) fn validate_identifier(key: &str, id: &str) -> Result<(), SpecError> {
    let valid = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(SpecError::new(
            key,
            format!("{id:?} must be 1 to 128 letters, digits, '-' or '_'"),
        ))
    }
}

pub(crate) fn validate_http_url(key: &str, raw: &str) -> Result<url::Url, SpecError> {
    let url = url::Url::parse(raw)
        .map_err(|e| SpecError::new(key, format!("{raw:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(SpecError::new(
            key,
            format!("{raw:?} must be an http(s) URL with a host"),
        ));
    }
    Ok(url)
}

fn is_header_token(value: &str) -> bool {
    !value.is_empty() && value.len() <= 200 && value.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(toml_text: &str) -> SchemaSpec {
        toml::from_str(toml_text).unwrap()
    }

    const BASE: &str = r#"
        id = "s"
        request_type = "claim-status"
        required_inputs = ["payerName"]
        [[fields]]
        name = "claimStatus"
        label = "Claim status"
        description = "What is the status?"
        type = "multiple"
        allowed_values = ["PAID", "DENIED"]
        required = true
    "#;

    #[test]
    fn a_well_formed_schema_validates() {
        schema(BASE).validate().unwrap();
    }

    #[test]
    fn schema_rules_name_the_offending_key() {
        let cases = [
            (
                BASE.replace("allowed_values = [\"PAID\", \"DENIED\"]", ""),
                "fields[0].allowed_values",
            ),
            (
                BASE.replace("type = \"multiple\"", "type = \"date\""),
                "fields[0].allowed_values",
            ),
            (BASE.replace("id = \"s\"", "id = \"_s\""), "id"),
            (
                BASE.replace("request_type = \"claim-status\"", "request_type = \" \""),
                "request_type",
            ),
            (
                BASE.replace(
                    "required_inputs = [\"payerName\"]",
                    "required_inputs = [\"payerName\"]\noptional_inputs = [\"payerName\"]",
                ),
                "optional_inputs[0]",
            ),
            (
                format!("{BASE}\nwhen = {{ field = \"nope\", equals = \"x\" }}"),
                "fields[0].when.field",
            ),
            (
                format!("{BASE}\nwhen = {{ field = \"claimStatus\", equals = \"x\" }}"),
                "fields[0].when.field",
            ),
            (
                BASE.replace("id = \"s\"", "id = \"s\"\nfollow_up = \"s\""),
                "follow_up",
            ),
        ];
        for (text, key) in cases {
            let err = schema(&text).validate().unwrap_err();
            assert_eq!(err.key, key, "{text}\n{err}");
        }
    }

    #[test]
    fn a_schema_without_fields_is_refused() {
        let text = "id = \"s\"\nrequest_type = \"x\"";
        assert_eq!(schema(text).validate().unwrap_err().key, "fields");
    }

    #[test]
    fn a_required_conditional_field_is_refused() {
        let text = format!(
            "{BASE}\n[[fields]]\nname = \"denial\"\nlabel = \"D\"\ndescription = \"Why?\"\ntype = \"alphanumeric\"\nrequired = true\nwhen = {{ field = \"claimStatus\", equals = \"DENIED\" }}"
        );
        assert_eq!(
            schema(&text).validate().unwrap_err().key,
            "fields[1].required"
        );
    }

    #[test]
    fn unknown_keys_are_a_parse_error() {
        assert!(toml::from_str::<SchemaSpec>(&format!("{BASE}\nlabell = \"x\"")).is_err());
    }

    fn account(extra: &str) -> AccountSpec {
        toml::from_str(&format!("id = \"acme\"\ndaily_call_capacity = 5\n{extra}")).unwrap()
    }

    #[test]
    fn account_rules_name_the_offending_key() {
        let cases = [
            ("timezone = \"Mars/Olympus\"", "timezone"),
            ("webhook_url = \"ftp://x\"", "webhook_url"),
            ("webhook_url = \"not a url\"", "webhook_url"),
            ("[[credentials]]\nenvironment = \"sandbox\"\nkey = \"has space\"\nsecret = \"s\"", "credentials[0].key"),
            ("[[credentials]]\nenvironment = \"sandbox\"\nkey = \"k\"\nsecret = \"\"", "credentials[0].secret"),
            (
                "[[credentials]]\nenvironment = \"sandbox\"\nkey = \"k\"\nsecret = \"s\"\n[[credentials]]\nenvironment = \"production\"\nkey = \"k\"\nsecret = \"t\"",
                "credentials[1].key",
            ),
            ("[[phone_book]]\npayer = \"Aetna\"\nphone = \"123\"", "phone_book[0].phone"),
        ];
        for (extra, key) in cases {
            assert_eq!(account(extra).validate().unwrap_err().key, key, "{extra}");
        }
        account("timezone = \"America/Chicago\"")
            .validate()
            .unwrap();
    }

    #[test]
    fn unknown_features_do_not_parse() {
        assert!(toml::from_str::<AccountSpec>(
            "daily_call_capacity = 1\nfeatures = [\"teleport\"]"
        )
        .is_err());
    }

    #[test]
    fn payer_rules_name_the_offending_key() {
        let payer = |extra: &str| {
            toml::from_str::<PayerSpec>(&format!("name = \"Aetna\"\n{extra}")).unwrap()
        };
        payer("phone = \"8005550100\"\nmember_id_prefixes = [\"A2B\"]")
            .validate()
            .unwrap();
        assert_eq!(
            payer("phone = \"0005550100\"").validate().unwrap_err().key,
            "phone"
        );
        assert_eq!(
            payer("member_id_prefixes = [\"a1b\"]")
                .validate()
                .unwrap_err()
                .key,
            "member_id_prefixes[0]"
        );
    }
}
