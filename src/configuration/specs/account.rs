//! [`AccountSpec`]: an account as an operator declares it, with its credentials and phone overrides, and the
//! checks it can make on its own.

use std::collections::BTreeSet;

use serde::Deserialize;
use switchboard_storage::{Environment, Feature};

use super::{is_header_token, validate_http_url, validate_identifier, SpecError};
use crate::configuration::DialerKind;
use crate::domain::UsPhone;
use crate::secret::Secret;

/// `[[accounts]]` / `PUT /admin/v1/accounts/{id}`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
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
    #[schema(value_type = Option<String>)]
    pub webhook_secret: Option<Secret>,
    /// Opt-in capabilities.
    #[serde(default)]
    #[schema(value_type = Vec<String>)]
    pub features: Vec<Feature>,
    /// Provisioned schema ids.
    #[serde(default)]
    pub schemas: Vec<String>,
    /// Key/secret pairs. When absent from an admin replace, the issued pairs are kept.
    pub credentials: Option<Vec<CredentialSpec>>,
    /// Per-account payer phone overrides.
    #[serde(default)]
    pub phone_book: Vec<PhoneBookSpec>,
    /// Organization name of the provider in clearinghouse inquiries when the inputs carry no
    /// `billingProviderName`.
    pub provider_name: Option<String>,
    /// Days a request is kept once terminal, then purged by the server; absent: kept until purged.
    pub retention_days: Option<u32>,
    /// Hours a task for a person (`human_fallback`) stays open before the request ends as it would have;
    /// absent: 72.
    pub task_timeout_hours: Option<u32>,
    /// The dialer of the account's production requests, overriding `[dialer] kind`; its settings come
    /// from the `[dialer.*]` tables.
    #[schema(value_type = Option<String>, examples("simulated", "http", "retell", "vapi"))]
    pub dialer: Option<DialerKind>,
}

fn utc() -> String {
    "UTC".to_owned()
}

/// One declared key/secret pair.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialSpec {
    /// Production or sandbox.
    #[schema(value_type = String, examples("production", "sandbox"))]
    pub environment: Environment,
    /// The API key.
    pub key: String,
    /// The API secret.
    #[schema(value_type = String)]
    pub secret: Secret,
}

/// One per-account phone override.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
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
        if self
            .retention_days
            .is_some_and(|days| days == 0 || days > 36_500)
        {
            return Err(SpecError::new(
                "retention_days",
                "must be a whole number of days from 1 to 36500; leave it out to keep requests until purged",
            ));
        }
        if self
            .task_timeout_hours
            .is_some_and(|hours| hours == 0 || hours > 8_760)
        {
            return Err(SpecError::new(
                "task_timeout_hours",
                "must be a whole number of hours from 1 to 8760; leave it out for 72",
            ));
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
            .provider_name
            .as_deref()
            .is_some_and(|n| n.trim().is_empty() || n.chars().count() > 60)
        {
            return Err(SpecError::new(
                "provider_name",
                "must be 1 to 60 characters (the clearinghouse's limit)",
            ));
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
