//! Fingerprints of configuration entries: a digest of everything an entry declares, stored with what it
//! was applied as, so that a start applies only the entries the file changed since (and an admin-API change
//! to an entry the file did not change stands).

use sha2::{Digest, Sha256};
use switchboard_storage::AccountRecord;

use crate::auth::secret_digest;
use crate::configuration::specs::AccountSpec;

pub(super) fn fingerprint(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

/// Which settings of an account declaration a fingerprint covers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Covered {
    /// Every one.
    All,
    /// Those of the releases before `provider_name` and `retention_days` were covered: their
    /// fingerprints are recognized so that an upgrade re-applies no account (see [`provision`]).
    BeforeRetention,
}

/// `stored` with the settings the declaration gives that earlier fingerprints left out.
pub(super) fn with_later_settings(mut stored: AccountRecord, spec: &AccountSpec) -> AccountRecord {
    stored.provider_name = spec.provider_name.as_ref().map(|n| n.trim().to_owned());
    stored.retention_days = spec.retention_days;
    stored
}

/// Everything an account declaration says (or, for `covered`, what earlier releases covered), secrets
/// as digests.
pub(super) fn account_fingerprint(spec: &AccountSpec, covered: Covered) -> String {
    // Named one by one, so a field added to declarations cannot be left out of the fingerprint unnoticed:
    // an edit to it would be kept out of the store, logged as unchanged.
    let AccountSpec {
        id: _,
        name,
        daily_call_capacity,
        timezone,
        webhook_url,
        webhook_secret,
        features,
        schemas,
        credentials,
        phone_book,
        provider_name,
        retention_days,
        task_timeout_hours,
        dialer,
    } = spec;
    let declared_none = matches!(credentials, Some(list) if list.is_empty());
    let credentials: Vec<String> = credentials
        .iter()
        .flatten()
        .map(|c| {
            format!(
                "{}|{}|{}",
                c.environment.as_str(),
                c.key,
                secret_digest(c.secret.expose())
            )
        })
        .collect();
    let phone_book: Vec<String> = phone_book
        .iter()
        .map(|e| format!("{}|{}", e.payer, e.phone))
        .collect();
    let features: Vec<&str> = features.iter().map(|f| f.as_str()).collect();
    let webhook_secret = webhook_secret
        .as_ref()
        .map(|s| secret_digest(s.expose()))
        .unwrap_or_default();
    let capacity = daily_call_capacity.to_string();
    let lists = [
        features.join(","),
        schemas.join(","),
        phone_book.join(","),
        credentials.join(","),
    ];
    let mut parts = vec![
        name.as_deref().unwrap_or_default(),
        &capacity,
        timezone,
        webhook_url.as_deref().unwrap_or_default(),
        &webhook_secret,
    ];
    parts.extend(lists.iter().map(String::as_str));
    // Each only when declared, so accounts without one keep the fingerprint they were provisioned under.
    let later = covered == Covered::All;
    let optional = [
        dialer.map(|kind| format!("dialer={}", kind.as_str())),
        provider_name
            .as_ref()
            .filter(|_| later)
            .map(|n| format!("provider_name={n}")),
        retention_days
            .filter(|_| later)
            .map(|days| format!("retention_days={days}")),
        task_timeout_hours.map(|hours| format!("task_timeout_hours={hours}")),
        // No pairs declared (all issued ones go) is not the same as `credentials` left out (kept).
        (declared_none && later).then(|| "credentials=[]".to_owned()),
    ];
    parts.extend(optional.iter().flatten().map(String::as_str));
    fingerprint(&parts)
}
