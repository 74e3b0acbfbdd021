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
mod costs;
mod dialer;
mod electronic;
pub mod electronic_mapping;
mod plain_http;
mod public_url;
mod raw;
mod settings;
pub mod specs;
mod storage_engine;
mod telemetry;
mod throttle;
mod tls;
mod words;

use std::fmt;
use std::path::{Path, PathBuf};

pub use dialer::{parse_hours, CallSettings, DialerSettings, RetellSettings, VapiSettings};
pub use electronic::{ElectronicSettings, StediSettings, STEDI_BASE_URL};
pub use public_url::host_name;
pub use raw::{DialerKind, ElectronicKind, InputType};
pub use settings::{ClockSettings, ServerSettings, Settings, SimulationSettings, WebhookSettings};
pub use telemetry::{read_ca_file, TelemetrySettings};
pub use throttle::ThrottleSettings;
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
mod tests;
