//! `[dialer]` validated: which dialer places production calls, its platform's keys (`[dialer.retell]`,
//! `[dialer.vapi]`), and the limits of real calls (`max_concurrent_calls`, calling hours, polling).

use std::time::Duration;

use super::raw::{DialerKind, RawDialer};
use super::specs::{validate_http_url, SpecError};
use crate::secret::Secret;

/// `[dialer]`: what places production calls.
#[derive(Clone, Debug)]
pub enum DialerSettings {
    /// The seeded payer simulator.
    Simulated,
    /// A real voice agent.
    Http {
        /// Where call jobs are POSTed.
        url: url::Url,
        /// HMAC key of job bodies and outcome callbacks.
        secret: Secret,
        /// How long an accepted call may go without a report before it counts as a hold timeout.
        call_timeout: Duration,
    },
    /// Retell AI.
    Retell(RetellSettings),
    /// Vapi.
    Vapi(VapiSettings),
}

impl DialerSettings {
    /// Whether the dialer places real calls (and so is held to the calling hours and the slot cap).
    pub fn places_real_calls(&self) -> bool {
        !matches!(self, DialerSettings::Simulated)
    }

    /// Its kind.
    pub fn kind(&self) -> DialerKind {
        match self {
            DialerSettings::Simulated => DialerKind::Simulated,
            DialerSettings::Http { .. } => DialerKind::Http,
            DialerSettings::Retell(_) => DialerKind::Retell,
            DialerSettings::Vapi(_) => DialerKind::Vapi,
        }
    }
}

/// `[dialer.retell]`.
#[derive(Clone, Debug)]
pub struct RetellSettings {
    /// API key; also the key of Retell's webhook signatures.
    pub api_key: Secret,
    /// API base URL (`https://api.retellai.com`).
    pub base_url: url::Url,
    /// The operator's payer-calling agent, sent as `override_agent_id`.
    pub agent_id: String,
    /// E.164 number held in Retell.
    pub from_number: String,
}

/// `[dialer.vapi]`.
#[derive(Clone, Debug)]
pub struct VapiSettings {
    /// Bearer key of Vapi's API.
    pub api_key: Secret,
    /// API base URL (`https://api.vapi.ai`).
    pub base_url: url::Url,
    /// The operator's assistant.
    pub assistant_id: String,
    /// The Vapi phone number calls come from.
    pub phone_number_id: String,
    /// Sent as the `x-vapi-secret` header of each call's server URL; events must carry it.
    pub server_secret: Secret,
}

/// Limits and timing of real calls (`http`, `retell`, `vapi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallSettings {
    /// `max_concurrent_calls`: real calls in progress at once.
    pub max_concurrent_calls: usize,
    /// Default calling hours: `[start, end)` minutes after local midnight on business days.
    pub calling_hours: (u16, u16),
    /// Time between reads of a live platform call while its events are late.
    pub poll_interval: Duration,
    /// Longest wait for a call's end before it counts as a hold timeout.
    pub call_timeout: Duration,
    /// `cost_per_minute`, in millionths of a US dollar: the price of a connected minute, what the payer
    /// statistics' cost per completed request is reckoned at.
    pub cost_per_minute_micros: u64,
}

/// `cost_per_minute` when the file names none, in dollars.
const DEFAULT_COST_PER_MINUTE: f64 = 0.12;
/// The highest price of a minute the file may name, in dollars.
const MAX_COST_PER_MINUTE: f64 = 1_000.0;

/// `[dialer] cost_per_minute` validated: a finite number of dollars from 0 to [`MAX_COST_PER_MINUTE`],
/// kept to a millionth of a dollar.
fn validate_cost_per_minute(value: Option<f64>) -> Result<u64, SpecError> {
    let dollars = value.unwrap_or(DEFAULT_COST_PER_MINUTE);
    if !dollars.is_finite() || !(0.0..=MAX_COST_PER_MINUTE).contains(&dollars) {
        return Err(SpecError::new(
            "dialer.cost_per_minute",
            format!("must be a number of US dollars from 0 to {MAX_COST_PER_MINUTE}, such as 0.12"),
        ));
    }
    Ok((dollars * 1_000_000.0).round() as u64)
}

/// `[dialer]` validated.
pub(super) fn validate_dialer(
    raw: &RawDialer,
) -> Result<(DialerSettings, CallSettings), SpecError> {
    let call_timeout = Duration::from_secs(match raw.call_timeout_s {
        Some(0) => {
            return Err(SpecError::new(
                "dialer.call_timeout_s",
                "must be at least 1",
            ))
        }
        Some(seconds) => seconds,
        None => 3600,
    });
    let calls = CallSettings {
        max_concurrent_calls: match raw.max_concurrent_calls {
            Some(0) => {
                return Err(SpecError::new(
                    "dialer.max_concurrent_calls",
                    "must be at least 1",
                ))
            }
            Some(n) => n,
            None => 20,
        },
        calling_hours: match &raw.calling_hours {
            Some(text) => {
                parse_hours(text).map_err(|e| SpecError::new("dialer.calling_hours", e))?
            }
            None => (8 * 60, 17 * 60),
        },
        poll_interval: Duration::from_secs(match raw.poll_interval_s {
            Some(0) => {
                return Err(SpecError::new(
                    "dialer.poll_interval_s",
                    "must be at least 1",
                ))
            }
            Some(seconds) => seconds,
            None => 30,
        }),
        call_timeout,
        cost_per_minute_micros: validate_cost_per_minute(raw.cost_per_minute)?,
    };
    let dialer = validate_kind(raw, raw.kind, call_timeout)?;
    Ok((dialer, calls))
}

/// The settings of the dialer of `kind`, from its keys of `[dialer]` (`url`, `secret`) or its table
/// (`[dialer.retell]`, `[dialer.vapi]`).
pub(super) fn validate_kind(
    raw: &RawDialer,
    kind: DialerKind,
    call_timeout: Duration,
) -> Result<DialerSettings, SpecError> {
    let dialer = match kind {
        DialerKind::Simulated => DialerSettings::Simulated,
        DialerKind::Http => {
            let url = raw
                .url
                .as_deref()
                .ok_or_else(|| SpecError::new("dialer.url", "is required when kind = \"http\""))?;
            DialerSettings::Http {
                url: validate_http_url("dialer.url", url)?,
                secret: required_secret(&raw.secret, "dialer.secret", HTTP_KEYS)?,
                call_timeout,
            }
        }
        DialerKind::Retell => {
            let retell = raw.retell.as_ref().ok_or_else(|| {
                SpecError::new("dialer.retell", "is required when kind = \"retell\"")
            })?;
            DialerSettings::Retell(RetellSettings {
                api_key: required_secret(&retell.api_key, "dialer.retell.api_key", RETELL_TABLE)?,
                base_url: base_url(
                    &retell.base_url,
                    "dialer.retell.base_url",
                    "https://api.retellai.com",
                )?,
                agent_id: required(&retell.agent_id, "dialer.retell.agent_id", RETELL_TABLE)?,
                from_number: e164(required(
                    &retell.from_number,
                    "dialer.retell.from_number",
                    RETELL_TABLE,
                )?)
                .map_err(|e| SpecError::new("dialer.retell.from_number", e))?,
            })
        }
        DialerKind::Vapi => {
            let vapi = raw
                .vapi
                .as_ref()
                .ok_or_else(|| SpecError::new("dialer.vapi", "is required when kind = \"vapi\""))?;
            DialerSettings::Vapi(VapiSettings {
                api_key: required_secret(&vapi.api_key, "dialer.vapi.api_key", VAPI_TABLE)?,
                base_url: base_url(
                    &vapi.base_url,
                    "dialer.vapi.base_url",
                    "https://api.vapi.ai",
                )?,
                assistant_id: required(&vapi.assistant_id, "dialer.vapi.assistant_id", VAPI_TABLE)?,
                phone_number_id: required(
                    &vapi.phone_number_id,
                    "dialer.vapi.phone_number_id",
                    VAPI_TABLE,
                )?,
                server_secret: required_secret(
                    &vapi.server_secret,
                    "dialer.vapi.server_secret",
                    VAPI_TABLE,
                )?,
            })
        }
    };
    Ok(dialer)
}

/// Whether `[dialer]` holds what the dialer of `kind` needs at all (its table, or `url` for `http`).
pub(super) fn is_declared(raw: &RawDialer, kind: DialerKind) -> bool {
    match kind {
        DialerKind::Simulated => true,
        DialerKind::Http => raw.url.is_some(),
        DialerKind::Retell => raw.retell.is_some(),
        DialerKind::Vapi => raw.vapi.is_some(),
    }
}

// Why a key of a dialer's settings is required. A declared dialer is checked whole whatever
// `[dialer] kind` says, since an account may name it: "when kind = ..." would be untrue for the table of
// a dialer only an account uses, or none yet.
const HTTP_KEYS: &str = "is required with dialer.url (the http dialer)";
const RETELL_TABLE: &str = "is required when a [dialer.retell] table is present";
const VAPI_TABLE: &str = "is required when a [dialer.vapi] table is present";

fn required(value: &Option<String>, key: &str, why: &str) -> Result<String, SpecError> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| SpecError::new(key, why))
}

fn required_secret(value: &Option<Secret>, key: &str, why: &str) -> Result<Secret, SpecError> {
    value
        .clone()
        .filter(|s| !s.expose().trim().is_empty())
        .ok_or_else(|| SpecError::new(key, why))
}

fn base_url(value: &Option<String>, key: &str, default: &str) -> Result<url::Url, SpecError> {
    validate_http_url(key, value.as_deref().unwrap_or(default))
}

fn e164(number: String) -> Result<String, String> {
    let digits = number.strip_prefix('+').unwrap_or_default();
    if (8..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        Ok(number)
    } else {
        Err(format!(
            "{number:?} is not an E.164 number such as +14155550100"
        ))
    }
}

/// `"HH:MM-HH:MM"` as minutes after midnight, start before end.
pub fn parse_hours(text: &str) -> Result<(u16, u16), String> {
    let problem = || format!("{text:?} is not a daily window such as \"08:00-17:00\"");
    let (start, end) = text.split_once('-').ok_or_else(problem)?;
    let minute = |part: &str| -> Option<u16> {
        let (h, m) = part.trim().split_once(':')?;
        let (h, m) = (h.parse::<u16>().ok()?, m.parse::<u16>().ok()?);
        (h <= 24 && m < 60 && h * 60 + m <= 24 * 60).then_some(h * 60 + m)
    };
    let (start, end) = (
        minute(start).ok_or_else(problem)?,
        minute(end).ok_or_else(problem)?,
    );
    if start >= end {
        return Err(format!("{text:?} must start before it ends"));
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calling_hours_parse_as_minutes() {
        assert_eq!(parse_hours("08:00-17:00"), Ok((480, 1020)));
        assert_eq!(parse_hours(" 7:30 - 19:15 "), Ok((450, 1155)));
        assert_eq!(parse_hours("00:00-24:00"), Ok((0, 1440)));
        for bad in ["8-17", "17:00-08:00", "08:00", "25:00-26:00", "08:60-09:00"] {
            assert!(parse_hours(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_price_of_a_minute_defaults_reads_exactly_and_refuses_what_is_not_a_price() {
        assert_eq!(validate_cost_per_minute(None), Ok(120_000));
        assert_eq!(validate_cost_per_minute(Some(0.0)), Ok(0));
        assert_eq!(validate_cost_per_minute(Some(0.075)), Ok(75_000));
        for bad in [-0.12, f64::NAN, f64::INFINITY, 1_000.01] {
            let err = validate_cost_per_minute(Some(bad)).unwrap_err();
            assert_eq!(err.key, "dialer.cost_per_minute", "{bad}");
        }
    }
}
