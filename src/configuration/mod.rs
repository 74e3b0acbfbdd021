//! Configuration: where it comes from and how it becomes [`Settings`].
//!
//! Layers, lowest first: the embedded `config/default.toml`; the file named by `--config` or
//! `SWITCHBOARD_CONFIG` (merged over the embedded one table by table, arrays replaced whole); then
//! `SWITCHBOARD_BIND` / `SWITCHBOARD_DATA_DIR` and the matching CLI flags. One exception to the merge: an
//! operator's file never inherits the demo `[[accounts]]` or `server.admin_token`, so the published demo
//! credentials cannot leak into a real deployment, and a file without an admin token has no admin API.
//! The merged TOML is parsed strictly (`deny_unknown_fields`), then validated into typed settings; any
//! failure names the file, the key and the problem.

mod checks;
mod dialer;
mod electronic;
pub mod electronic_mapping;
mod plain_http;
mod public_url;
mod raw;
mod settings;
pub mod specs;
mod tls;
mod words;

use std::fmt;
use std::path::{Path, PathBuf};

pub use dialer::{parse_hours, CallSettings, DialerSettings, RetellSettings, VapiSettings};
pub use electronic::{ElectronicSettings, StediSettings, STEDI_BASE_URL};
pub use public_url::host_name;
pub use raw::{DialerKind, ElectronicKind, InputType};
pub use settings::{
    ClockSettings, ServerSettings, Settings, SimulationSettings, TelemetrySettings, WebhookSettings,
};
pub use tls::TlsSettings;

/// The embedded demo configuration served by `cargo run --release`.
pub const DEFAULT_CONFIG: &str = include_str!("../../config/default.toml");

/// Where the settings came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// The embedded demo configuration alone.
    Embedded,
    /// An operator's file, merged over the embedded defaults.
    File(PathBuf),
    /// Text handed in directly (tests, tools), labelled for messages.
    Text(String),
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::Embedded => f.write_str("embedded config/default.toml"),
            ConfigSource::File(path) => write!(f, "{}", path.display()),
            ConfigSource::Text(label) => f.write_str(label),
        }
    }
}

/// Values that override the file: environment variables and CLI flags.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--config` / `SWITCHBOARD_CONFIG`.
    pub config_path: Option<PathBuf>,
    /// `--bind` / `SWITCHBOARD_BIND`.
    pub bind: Option<String>,
    /// `--data-dir` / `SWITCHBOARD_DATA_DIR`.
    pub data_dir: Option<PathBuf>,
    /// `--node-url` / `SWITCHBOARD_NODE_URL`.
    pub node_url: Option<String>,
}

/// A configuration that cannot be served: which source, which key, what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or other source) being read.
    pub source: String,
    /// Dotted key at fault, when one is.
    pub key: Option<String>,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(
                f,
                "invalid configuration in {}: {key}: {}",
                self.source, self.problem
            ),
            None => write!(
                f,
                "invalid configuration in {}: {}",
                self.source, self.problem
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Loads the settings the server should run with.
pub fn load(overrides: &Overrides) -> Result<Settings, ConfigError> {
    match &overrides.config_path {
        None => from_layers(ConfigSource::Embedded, None, overrides),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
                source: path.display().to_string(),
                key: None,
                problem: format!("cannot read the file: {e}"),
            })?;
            from_layers(ConfigSource::File(path.to_owned()), Some(&text), overrides)
        }
    }
}

/// Loads settings from TOML text merged over the embedded defaults, as if it were a config file.
pub fn from_toml_str(
    text: &str,
    label: &str,
    overrides: &Overrides,
) -> Result<Settings, ConfigError> {
    from_layers(ConfigSource::Text(label.to_owned()), Some(text), overrides)
}

fn from_layers(
    source: ConfigSource,
    text: Option<&str>,
    overrides: &Overrides,
) -> Result<Settings, ConfigError> {
    let error = |key: Option<String>, problem: String| ConfigError {
        source: source.to_string(),
        key,
        problem,
    };
    let mut table: toml::Table = DEFAULT_CONFIG
        .parse()
        .expect("embedded default config is valid TOML");
    if let Some(text) = text {
        let file: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| error(None, e.to_string().trim().to_owned()))?;
        table.remove("accounts");
        if let Some(toml::Value::Table(server)) = table.get_mut("server") {
            server.remove("admin_token");
        }
        merge(&mut table, file);
    }
    let server = table
        .entry("server")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| error(Some("server".into()), "must be a table".into()))?;
    if let Some(bind) = &overrides.bind {
        server.insert("bind".into(), toml::Value::String(bind.clone()));
    }
    if let Some(dir) = &overrides.data_dir {
        server.insert(
            "data_dir".into(),
            toml::Value::String(dir.display().to_string()),
        );
    }
    if let Some(url) = &overrides.node_url {
        server.insert("node_url".into(), toml::Value::String(url.clone()));
    }
    let raw: raw::RawConfig =
        serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let path = e.path().to_string();
            let problem = e.into_inner().to_string();
            error(
                (path != ".").then_some(path),
                problem.lines().next().unwrap_or_default().trim().to_owned(),
            )
        })?;
    Settings::validate(raw, source.clone(), overrides).map_err(|e| error(Some(e.key), e.problem))
}

/// Overlays `over` on `base`: tables merge key by key, anything else (arrays included) is replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base_table)), toml::Value::Table(over_table)) => {
                merge(base_table, over_table)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The config path from the environment, for `Overrides`.
pub fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// Whether `path` names the repository's default config file.
pub fn is_default_file(path: &Path) -> bool {
    path.ends_with("config/default.toml")
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_otlp_endpoint_env_variable_wins_over_the_file_and_either_must_be_http() {
        use super::raw::RawTelemetry;
        use super::settings::TelemetrySettings;
        let file = || RawTelemetry {
            otlp_endpoint: Some("http://collector.internal:4318/".into()),
            service_name: Some("sb".into()),
        };
        let from_file = TelemetrySettings::validate(file(), None).unwrap();
        assert_eq!(
            from_file.traces_url().as_deref(),
            Some("http://collector.internal:4318/v1/traces")
        );
        assert_eq!(from_file.service_name, "sb");
        let from_env =
            TelemetrySettings::validate(file(), Some("http://127.0.0.1:4318".into())).unwrap();
        assert_eq!(
            from_env.traces_url().as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
        let off = TelemetrySettings::validate(RawTelemetry::default(), None).unwrap();
        assert_eq!(off.traces_url(), None, "no endpoint, no traces");
        assert_eq!(off.service_name, "switchboard");
        let refused = RawTelemetry {
            otlp_endpoint: Some("grpc://x:4317".into()),
            service_name: None,
        };
        let error = TelemetrySettings::validate(refused, None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("telemetry.otlp_endpoint"), "{error}");
        let error = TelemetrySettings::validate(RawTelemetry::default(), Some("not a url".into()))
            .unwrap_err()
            .to_string();
        assert!(error.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{error}");
    }

    use super::*;

    fn load_text(text: &str) -> Result<Settings, ConfigError> {
        from_toml_str(text, "test.toml", &Overrides::default())
    }

    #[test]
    fn the_embedded_default_is_valid() {
        let settings = from_layers(ConfigSource::Embedded, None, &Overrides::default()).unwrap();
        assert_eq!(settings.server.bind.to_string(), "127.0.0.1:8080");
        assert!(!settings.accounts.is_empty());
        assert!(settings.schemas.len() >= 3);
        assert!(settings.payers.len() >= 40);
    }

    #[test]
    fn a_file_merges_over_the_defaults_but_never_inherits_demo_accounts() {
        let settings = load_text("[server]\nbind = \"127.0.0.1:9999\"").unwrap();
        assert_eq!(settings.server.bind.port(), 9999);
        assert_eq!(settings.server.product_word, "Switchboard");
        assert!(settings.accounts.is_empty());
        assert!(
            settings.server.admin_token.is_none(),
            "the demo admin token is not inherited"
        );
        assert!(!settings.schemas.is_empty());
    }

    #[test]
    fn the_header_and_lookup_words_default_to_the_product_word_and_can_be_set_apart() {
        let settings = load_text("[server]\nproduct_word = \"Acme\"").unwrap();
        assert_eq!(settings.server.auth_header_word, "Acme");
        assert_eq!(settings.server.lookup_source_word, "acme");
        let settings = load_text(
            "[server]\nauth_header_word = \"Robodialer\"\nlookup_source_word = \"SuperDial\"",
        )
        .unwrap();
        assert_eq!(settings.server.product_word, "Switchboard");
        assert_eq!(settings.server.auth_header_word, "Robodialer");
        assert_eq!(settings.server.lookup_source_word, "superdial");
        let error = load_text("[server]\nauth_header_word = \"Robo Dialer\"").unwrap_err();
        assert!(
            error.to_string().contains("server.auth_header_word"),
            "{error}"
        );
    }

    #[test]
    fn overrides_beat_the_file() {
        let overrides = Overrides {
            bind: Some("127.0.0.1:0".into()),
            data_dir: Some("/tmp/x".into()),
            ..Overrides::default()
        };
        let settings =
            from_toml_str("[server]\nbind = \"127.0.0.1:9999\"", "t", &overrides).unwrap();
        assert_eq!(settings.server.bind.port(), 0);
        assert_eq!(settings.server.data_dir, PathBuf::from("/tmp/x"));
    }

    #[test]
    fn the_going_live_example_config_loads() {
        let page = include_str!("../../docs/going-live.md");
        let example = page
            .split("<!-- going-live example config -->")
            .nth(1)
            .and_then(|rest| rest.split("```toml\n").nth(1))
            .and_then(|block| block.split("\n```").next())
            .expect("docs/going-live.md keeps its example config after the marker");
        let settings = load_text(example).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(settings.dialer.kind(), DialerKind::Simulated);
        assert!(settings.dialer_of(DialerKind::Retell).is_some());
        let dialers: Vec<_> = settings.accounts.iter().map(|a| a.dialer).collect();
        assert_eq!(dialers, [Some(DialerKind::Retell), None]);
        assert!(matches!(settings.electronic, ElectronicSettings::Stedi(_)));
        assert!(settings.payers.iter().all(|p| p.timezone.is_some()));
    }

    #[test]
    fn an_account_dialer_needs_its_settings_and_a_payer_zone_must_be_iana() {
        let account = "[[accounts]]\nid = \"a\"\ndaily_call_capacity = 1\ndialer = \"retell\"\n";
        let err = load_text(account).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("accounts[0].dialer"), "{err}");
        assert_eq!(
            err.problem,
            "names the \"retell\" dialer, but the configuration has no [dialer.retell] table to place \
             its calls"
        );
        let with_table = format!(
            "{account}[dialer.retell]\napi_key = \"k\"\nagent_id = \"agent_1\"\nfrom_number = \"+14155550100\"\n"
        );
        let settings = load_text(&with_table).unwrap();
        assert_eq!(settings.dialer.kind(), DialerKind::Simulated);
        let kinds: Vec<_> = settings.dialers.iter().map(|d| d.kind()).collect();
        assert_eq!(kinds, [DialerKind::Simulated, DialerKind::Retell]);

        let payer = "[[payers]]\nname = \"West Plan\"\ntimezone = \"Pacific Time\"";
        let err = load_text(payer).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("payers[0].timezone"), "{err}");
        let payer = "[[payers]]\nname = \"West Plan\"\ntimezone = \"America/Los_Angeles\"";
        assert!(load_text(payer).is_ok());
        let proxies = "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \" 127.0.0.1 \", \"fd00::/8\"]";
        let ranges: Vec<String> = load_text(proxies)
            .unwrap()
            .server
            .trusted_proxies
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(ranges, ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
        assert!(load_text("").unwrap().server.trusted_proxies.is_empty());
    }

    #[test]
    fn errors_name_the_source_the_key_and_the_problem() {
        let cases = [
            ("[server]\nbind = \"nowhere\"", "server.bind"),
            ("[server]\nbindd = \"x\"", "server.bindd"),
            ("[clock]\nmode = \"sundial\"", "clock.mode"),
            ("[clock]\nmode = \"manual\"", "clock.start"),
            ("[simulation]\ntime_scale = 0.0", "simulation.time_scale"),
            ("[dialer]\nkind = \"http\"", "dialer.url"),
            (
                "[webhooks]\nround_delays_s = [1, 2, 3, 4]",
                "webhooks.round_delays_s",
            ),
            (
                "[webhooks]\nround_delays_s = [900, 700000]",
                "webhooks.round_delays_s",
            ),
            (
                "[[accounts]]\nid = \"a\"\ndaily_call_capacity = 1\nschemas = [\"nope\"]",
                "accounts[0].schemas[0]",
            ),
            ("[[accounts]]\ndaily_call_capacity = 1", "accounts[0].id"),
            (
                "[[accounts]]\nid = \"a\"\ndaily_call_capacity = -1",
                "accounts[0].daily_call_capacity",
            ),
            ("[input_types]\nfoo = \"colour\"", "input_types.foo"),
            (
                "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"proxy.internal\"]",
                "server.trusted_proxies",
            ),
        ];
        for (text, key) in cases {
            let err = load_text(text).unwrap_err();
            assert_eq!(err.key.as_deref(), Some(key), "{text}: {err}");
            assert!(
                err.to_string()
                    .starts_with("invalid configuration in test.toml: "),
                "{err}"
            );
        }
    }

    #[test]
    fn a_toml_syntax_error_names_the_line() {
        let err = load_text("[server\nbind = 1").unwrap_err();
        assert!(err.problem.contains("line 1"), "{err}");
    }
}
