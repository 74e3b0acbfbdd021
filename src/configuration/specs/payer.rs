//! [`PayerSpec`]: a payer of the directory as an operator declares it, and the checks it can make on its own.

use serde::Deserialize;

use super::SpecError;
use crate::domain::UsPhone;

/// `[[payers]]` / `PUT /admin/v1/payers/{name}`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
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
    /// The clearinghouse payer id (`tradingPartnerServiceId`).
    pub electronic_payer_id: Option<String>,
    /// Member-ID prefixes that steer to this regional plan.
    #[serde(default)]
    pub member_id_prefixes: Vec<String>,
    /// When the payer's lines take calls (`"HH:MM-HH:MM"` on business days in the payer's zone, else the
    /// account's), overriding `[dialer] calling_hours`.
    #[serde(default)]
    pub calling_hours: Option<String>,
    /// IANA zone of the payer's lines: its calling hours (its own or the default) are judged there
    /// instead of in the calling account's zone.
    #[serde(default)]
    pub timezone: Option<String>,
}

impl PayerSpec {
    /// Checks the payer on its own.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if let Some(hours) = &self.calling_hours {
            super::super::parse_hours(hours).map_err(|e| SpecError::new("calling_hours", e))?;
        }
        if let Some(zone) = &self.timezone {
            if zone.trim().parse::<chrono_tz::Tz>().is_err() {
                return Err(SpecError::new(
                    "timezone",
                    format!("{zone:?} is not an IANA time zone such as \"America/Los_Angeles\""),
                ));
            }
        }
        if let Some(phone) = &self.phone {
            if UsPhone::parse(phone).is_none() {
                return Err(SpecError::new(
                    "phone",
                    format!("{phone:?} is not a valid U.S. phone number"),
                ));
            }
        }
        if let Some(id) = &self.electronic_payer_id {
            let valid = (2..=80).contains(&id.len())
                && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
            if !valid {
                return Err(SpecError::new(
                    "electronic_payer_id",
                    format!("{id:?} must be 2 to 80 letters, digits or '-' (keep leading zeros)"),
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
