//! The checks of the file's tables that span entries: webhook limits, schema, account and payer ids
//! declared once, the dialer each account names.

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use super::dialer::DialerSettings;
use super::raw::DialerKind;
use super::settings::WebhookSettings;
use super::specs::{AccountSpec, PayerSpec, SchemaSpec, SpecError};

/// The longest delay a webhook round may be scheduled after the one before.
const SEVEN_DAYS_S: u64 = 7 * 24 * 3600;

pub(super) fn validate_webhooks(
    raw: &super::raw::RawWebhooks,
) -> Result<WebhookSettings, SpecError> {
    if raw.attempt_timeout_ms == 0 || raw.attempt_timeout_ms > 60_000 {
        return Err(SpecError::new(
            "webhooks.attempt_timeout_ms",
            "must be between 1 and 60000",
        ));
    }
    if raw.inline_backoff_ms.len() > 10 {
        return Err(SpecError::new(
            "webhooks.inline_backoff_ms",
            "at most 10 inline retries",
        ));
    }
    if raw.round_delays_s.len() > 3 {
        return Err(SpecError::new(
            "webhooks.round_delays_s",
            "at most 3 delayed rounds",
        ));
    }
    if raw
        .round_delays_s
        .iter()
        .any(|&d| d == 0 || d > SEVEN_DAYS_S)
    {
        return Err(SpecError::new(
            "webhooks.round_delays_s",
            "each round must fall within 7 days (1 to 604800 seconds) of the terminal state",
        ));
    }
    if raw.round_delays_s.windows(2).any(|w| w[0] >= w[1]) {
        return Err(SpecError::new(
            "webhooks.round_delays_s",
            "rounds must be in increasing order",
        ));
    }
    if raw.per_destination_concurrency == 0 || raw.per_destination_concurrency > 256 {
        return Err(SpecError::new(
            "webhooks.per_destination_concurrency",
            "must be between 1 and 256",
        ));
    }
    Ok(WebhookSettings {
        allow_private_targets: raw.allow_private_targets,
        attempt_timeout: Duration::from_millis(raw.attempt_timeout_ms),
        inline_backoff: raw
            .inline_backoff_ms
            .iter()
            .map(|&ms| Duration::from_millis(ms))
            .collect(),
        round_delays: raw
            .round_delays_s
            .iter()
            .map(|&s| Duration::from_secs(s))
            .collect(),
        per_destination_concurrency: raw.per_destination_concurrency,
    })
}

pub(super) fn validate_schemas(schemas: Vec<SchemaSpec>) -> Result<Vec<SchemaSpec>, SpecError> {
    let mut ids = HashSet::new();
    for (i, schema) in schemas.iter().enumerate() {
        let at = format!("schemas[{i}]");
        let id = schema
            .id
            .as_deref()
            .ok_or_else(|| SpecError::new(format!("{at}.id"), "is required"))?;
        schema.validate().map_err(|e| e.within(&at))?;
        if !ids.insert(id) {
            return Err(SpecError::new(
                format!("{at}.id"),
                format!("{id:?} is declared twice"),
            ));
        }
    }
    for (i, schema) in schemas.iter().enumerate() {
        if let Some(follow_up) = &schema.follow_up {
            if !ids.contains(follow_up.as_str()) {
                return Err(SpecError::new(
                    format!("schemas[{i}].follow_up"),
                    format!("{follow_up:?} is not a schema declared in this file"),
                ));
            }
        }
    }
    Ok(schemas)
}

pub(super) fn validate_accounts(
    accounts: Vec<AccountSpec>,
    schemas: &[SchemaSpec],
) -> Result<Vec<AccountSpec>, SpecError> {
    let known: BTreeSet<&str> = schemas.iter().filter_map(|s| s.id.as_deref()).collect();
    let mut ids = HashSet::new();
    let mut keys = HashSet::new();
    for (i, account) in accounts.iter().enumerate() {
        let at = format!("accounts[{i}]");
        let id = account
            .id
            .as_deref()
            .ok_or_else(|| SpecError::new(format!("{at}.id"), "is required"))?;
        account.validate().map_err(|e| e.within(&at))?;
        if !ids.insert(id) {
            return Err(SpecError::new(
                format!("{at}.id"),
                format!("{id:?} is declared twice"),
            ));
        }
        for (j, schema) in account.schemas.iter().enumerate() {
            if !known.contains(schema.as_str()) {
                return Err(SpecError::new(
                    format!("{at}.schemas[{j}]"),
                    format!("{schema:?} is not a schema declared in this file"),
                ));
            }
        }
        for (j, credential) in account.credentials.iter().flatten().enumerate() {
            if !keys.insert(credential.key.as_str()) {
                return Err(SpecError::new(
                    format!("{at}.credentials[{j}].key"),
                    "is already issued to another account",
                ));
            }
        }
    }
    Ok(accounts)
}

/// The dialers production requests may use: the default, then each other kind whose settings are declared
/// (an account may name it, in the file or through the admin API). A kind an account names must be
/// declared and valid; a declared table no account names yet is checked the same way.
pub(super) fn account_dialers(
    raw: &super::raw::RawDialer,
    default: &DialerSettings,
    accounts: &[AccountSpec],
    call_timeout: Duration,
) -> Result<Vec<DialerSettings>, SpecError> {
    for (i, account) in accounts.iter().enumerate() {
        let Some(kind) = account.dialer else {
            continue;
        };
        if !super::dialer::is_declared(raw, kind) {
            let missing = match kind {
                DialerKind::Http => "[dialer] url and secret",
                DialerKind::Retell => "[dialer.retell] table",
                _ => "[dialer.vapi] table",
            };
            return Err(SpecError::new(
                format!("accounts[{i}].dialer"),
                format!(
                    "names the {:?} dialer, but the configuration has no {missing} to place its calls",
                    kind.as_str()
                ),
            ));
        }
    }
    let mut dialers = vec![default.clone()];
    for kind in [
        DialerKind::Simulated,
        DialerKind::Http,
        DialerKind::Retell,
        DialerKind::Vapi,
    ] {
        if kind != default.kind() && super::dialer::is_declared(raw, kind) {
            dialers.push(super::dialer::validate_kind(raw, kind, call_timeout)?);
        }
    }
    Ok(dialers)
}

pub(super) fn validate_payers(payers: Vec<PayerSpec>) -> Result<Vec<PayerSpec>, SpecError> {
    let mut names = HashSet::new();
    for (i, payer) in payers.iter().enumerate() {
        let at = format!("payers[{i}]");
        let name = payer
            .name
            .as_deref()
            .ok_or_else(|| SpecError::new(format!("{at}.name"), "is required"))?;
        payer.validate().map_err(|e| e.within(&at))?;
        if !names.insert(name.to_lowercase()) {
            return Err(SpecError::new(
                format!("{at}.name"),
                format!("{name:?} is declared twice"),
            ));
        }
    }
    Ok(payers)
}
