//! `[electronic]` validated: which channel production requests try before a call, and Stedi's key,
//! address, timeout and retry bound.

use std::time::Duration;

use super::raw::{ElectronicKind, RawElectronic};
use super::specs::{validate_http_url, SpecError};
use crate::secret::Secret;

/// Stedi's production address (its OpenAPI's server).
pub const STEDI_BASE_URL: &str = "https://healthcare.us.stedi.com/2024-04-01";
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
const DEFAULT_BACKOFF_MS: [u64; 3] = [500, 2_000, 5_000];

/// `[electronic]`.
#[derive(Clone, Debug)]
pub enum ElectronicSettings {
    /// The seeded simulator.
    Simulated,
    /// Stedi.
    Stedi(StediSettings),
    /// None: every request goes to the phone.
    None,
}

/// `[electronic.stedi]`.
#[derive(Clone, Debug)]
pub struct StediSettings {
    /// The API key, sent as `Authorization`.
    pub api_key: Secret,
    /// Base of the API paths.
    pub base_url: url::Url,
    /// Longest wait for one answer; a timeout gives the request to the phone.
    pub timeout: Duration,
    /// Waits before each retry of a 429 or 5xx.
    pub retry_backoff: Vec<Duration>,
}

pub(super) fn validate_electronic(raw: RawElectronic) -> Result<ElectronicSettings, SpecError> {
    match raw.kind {
        ElectronicKind::Simulated => Ok(ElectronicSettings::Simulated),
        ElectronicKind::None => Ok(ElectronicSettings::None),
        ElectronicKind::Stedi => {
            let stedi = raw.stedi.ok_or_else(|| {
                SpecError::new("electronic.stedi", "is required when kind = \"stedi\"")
            })?;
            let api_key = stedi
                .api_key
                .filter(|k| !k.expose().trim().is_empty())
                .ok_or_else(|| {
                    SpecError::new(
                        "electronic.stedi.api_key",
                        "is required when kind = \"stedi\"",
                    )
                })?;
            if !api_key.expose().bytes().all(|b| b.is_ascii_graphic()) {
                return Err(SpecError::new(
                    "electronic.stedi.api_key",
                    "must be visible ASCII characters without spaces",
                ));
            }
            let base_url = validate_http_url(
                "electronic.stedi.base_url",
                stedi.base_url.as_deref().unwrap_or(STEDI_BASE_URL),
            )?;
            let timeout_ms = stedi.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
            if !(1..=120_000).contains(&timeout_ms) {
                return Err(SpecError::new(
                    "electronic.stedi.timeout_ms",
                    "must be between 1 and 120000",
                ));
            }
            let backoff = stedi
                .retry_backoff_ms
                .unwrap_or_else(|| DEFAULT_BACKOFF_MS.to_vec());
            if backoff.len() > 5 || backoff.iter().any(|&ms| ms > 60_000) {
                return Err(SpecError::new(
                    "electronic.stedi.retry_backoff_ms",
                    "at most 5 retries, each waiting at most 60000 ms",
                ));
            }
            Ok(ElectronicSettings::Stedi(StediSettings {
                api_key,
                base_url,
                timeout: Duration::from_millis(timeout_ms),
                retry_backoff: backoff.into_iter().map(Duration::from_millis).collect(),
            }))
        }
    }
}
