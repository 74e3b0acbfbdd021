//! `[throttle]`: how many failed sign-ins a key or an address may make before its calls are refused
//! with 429 for the rest of the window (operator contract section 12 fixes the defaults). The counting
//! itself is `crate::throttle`'s.

use std::time::Duration;

use serde::Deserialize;

use super::specs::SpecError;

/// `[throttle]` as written; every key is optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawThrottle {
    pub window_s: u64,
    pub auth_failures_per_key: u32,
    pub auth_failures_per_address: u32,
    pub admin_failures_per_address: u32,
    pub max_tracked: usize,
}

impl Default for RawThrottle {
    fn default() -> RawThrottle {
        let defaults = ThrottleSettings::default();
        RawThrottle {
            window_s: defaults.window.as_secs(),
            auth_failures_per_key: defaults.auth_failures_per_key,
            auth_failures_per_address: defaults.auth_failures_per_address,
            admin_failures_per_address: defaults.admin_failures_per_address,
            max_tracked: defaults.max_tracked,
        }
    }
}

/// `[throttle]` validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThrottleSettings {
    /// `window_s`: how long failures are counted from the first, and how long a throttle then lasts.
    pub window: Duration,
    /// `auth_failures_per_key`: failed `GET /v1/auth` exchanges for one API key per window.
    pub auth_failures_per_key: u32,
    /// `auth_failures_per_address`: failed `GET /v1/auth` exchanges from one client address per window.
    pub auth_failures_per_address: u32,
    /// `admin_failures_per_address`: admin API and console calls with an unknown token from one client
    /// address per window.
    pub admin_failures_per_address: u32,
    /// `max_tracked`: the most windows kept for each of the three counts, so a flood of distinct keys or
    /// addresses cannot grow memory without bound.
    pub max_tracked: usize,
}

impl Default for ThrottleSettings {
    fn default() -> ThrottleSettings {
        ThrottleSettings {
            window: Duration::from_secs(60),
            auth_failures_per_key: 10,
            auth_failures_per_address: 50,
            admin_failures_per_address: 20,
            max_tracked: 100_000,
        }
    }
}

/// The longest window: a day. Longer would lock a mistyped key out for longer than anyone would notice why.
const MAX_WINDOW_S: u64 = 86_400;

pub(super) fn validate_throttle(raw: &RawThrottle) -> Result<ThrottleSettings, SpecError> {
    if !(1..=MAX_WINDOW_S).contains(&raw.window_s) {
        return Err(SpecError::new(
            "throttle.window_s",
            format!("must be from 1 to {MAX_WINDOW_S} seconds"),
        ));
    }
    for (key, limit) in [
        ("throttle.auth_failures_per_key", raw.auth_failures_per_key),
        (
            "throttle.auth_failures_per_address",
            raw.auth_failures_per_address,
        ),
        (
            "throttle.admin_failures_per_address",
            raw.admin_failures_per_address,
        ),
    ] {
        if limit == 0 {
            return Err(SpecError::new(key, "must be at least 1"));
        }
    }
    if raw.max_tracked == 0 {
        return Err(SpecError::new("throttle.max_tracked", "must be at least 1"));
    }
    Ok(ThrottleSettings {
        window: Duration::from_secs(raw.window_s),
        auth_failures_per_key: raw.auth_failures_per_key,
        auth_failures_per_address: raw.auth_failures_per_address,
        admin_failures_per_address: raw.admin_failures_per_address,
        max_tracked: raw.max_tracked,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{from_toml_str, Overrides};
    use super::*;

    fn load(text: &str) -> Result<ThrottleSettings, String> {
        from_toml_str(text, "test.toml", &Overrides::default())
            .map(|settings| settings.throttle)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn without_the_section_the_contract_defaults_apply() {
        let settings = load("").unwrap();
        assert_eq!(settings, ThrottleSettings::default());
        assert_eq!(settings.window, Duration::from_secs(60));
        assert_eq!(
            (
                settings.auth_failures_per_key,
                settings.auth_failures_per_address,
                settings.admin_failures_per_address
            ),
            (10, 50, 20)
        );
    }

    #[test]
    fn each_key_can_be_set_alone() {
        let settings = load("[throttle]\nwindow_s = 2\nadmin_failures_per_address = 3").unwrap();
        assert_eq!(settings.window, Duration::from_secs(2));
        assert_eq!(settings.admin_failures_per_address, 3);
        assert_eq!(settings.auth_failures_per_key, 10);
    }

    #[test]
    fn zero_limits_windows_out_of_range_and_unknown_keys_are_refused_by_name() {
        for (text, key) in [
            ("window_s = 0", "throttle.window_s"),
            ("window_s = 86401", "throttle.window_s"),
            (
                "auth_failures_per_key = 0",
                "throttle.auth_failures_per_key",
            ),
            (
                "auth_failures_per_address = 0",
                "throttle.auth_failures_per_address",
            ),
            (
                "admin_failures_per_address = 0",
                "throttle.admin_failures_per_address",
            ),
            ("max_tracked = 0", "throttle.max_tracked"),
            ("failures = 3", "throttle"),
        ] {
            let error = load(&format!("[throttle]\n{text}")).unwrap_err();
            assert!(error.contains(key), "{text}: {error}");
        }
    }
}
