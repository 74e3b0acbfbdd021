//! The config file as written: serde types with the fixed key names of the operator contract.
//! `deny_unknown_fields` everywhere, so a typo stops start-up instead of being ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::specs::{AccountSpec, PayerSpec, SchemaSpec};
use crate::secret::Secret;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    pub server: RawServer,
    pub clock: RawClock,
    pub simulation: RawSimulation,
    pub dialer: RawDialer,
    pub webhooks: RawWebhooks,
    #[serde(default)]
    pub electronic: RawElectronic,
    pub storage: RawStorage,
    #[serde(default)]
    pub encryption: RawEncryption,
    #[serde(default)]
    pub telemetry: RawTelemetry,
    #[serde(default)]
    pub throttle: super::throttle::RawThrottle,
    #[serde(default)]
    pub accounts: Vec<AccountSpec>,
    #[serde(default)]
    pub schemas: Vec<SchemaSpec>,
    #[serde(default)]
    pub input_types: BTreeMap<String, InputType>,
    #[serde(default)]
    pub payers: Vec<PayerSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawServer {
    pub bind: String,
    pub data_dir: String,
    pub public_url: Option<String>,
    pub node_url: Option<String>,
    pub product_word: String,
    pub auth_header_word: Option<String>,
    pub lookup_source_word: Option<String>,
    pub admin_token: Option<Secret>,
    pub token_secret: Option<Secret>,
    #[serde(default)]
    pub fault_injection: bool,
    #[serde(default)]
    pub trusted_proxies: Vec<String>,
    pub backup_root: Option<String>,
    pub tls: Option<RawTls>,
}

/// `[server.tls]`: both keys are required once the table is present, checked in validation so the
/// message names the missing key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTls {
    pub cert_file: Option<String>,
    pub key_file: Option<String>,
}

/// `[encryption]`: optional; without a key file the key is `SWITCHBOARD_MASTER_KEY`, or kept beside the
/// data.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEncryption {
    pub key_file: Option<String>,
}

/// `[telemetry]`: optional; no endpoint, no traces.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTelemetry {
    pub otlp_endpoint: Option<String>,
    pub ca_file: Option<String>,
    pub service_name: Option<String>,
}

/// `[storage]`: optional; every key has a default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStorage {
    pub cache_capacity_mb: Option<u64>,
    pub kind: Option<StorageKind>,
    /// The database's URL, password included: kept out of logs like every secret.
    pub url: Option<Secret>,
    /// A CA certificate (PEM) the database's TLS certificate is signed by.
    pub ca_file: Option<String>,
}

/// `[storage] kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StorageKind {
    Sled,
    Postgres,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClock {
    pub mode: ClockMode,
    pub start: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ClockMode {
    System,
    Manual,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSimulation {
    pub time_scale: f64,
    pub seed: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawDialer {
    pub kind: DialerKind,
    pub url: Option<String>,
    pub secret: Option<Secret>,
    #[serde(default)]
    pub paused: bool,
    pub call_timeout_s: Option<u64>,
    pub max_concurrent_calls: Option<usize>,
    pub poll_interval_s: Option<u64>,
    pub calling_hours: Option<String>,
    pub cost_per_minute: Option<f64>,
    pub retell: Option<RawRetell>,
    pub vapi: Option<RawVapi>,
}

/// `[dialer.retell]` (operator contract §5, fixed key names).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRetell {
    pub api_key: Option<Secret>,
    pub base_url: Option<String>,
    pub agent_id: Option<String>,
    pub from_number: Option<String>,
}

/// `[dialer.vapi]` (operator contract §5, fixed key names).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVapi {
    pub api_key: Option<Secret>,
    pub base_url: Option<String>,
    pub assistant_id: Option<String>,
    pub phone_number_id: Option<String>,
    pub server_secret: Option<Secret>,
}

/// Which dialer production requests go to (`[dialer] kind`, `[[accounts]] dialer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DialerKind {
    /// The seeded payer simulator.
    Simulated,
    /// A real voice agent reached over HTTP.
    Http,
    /// Retell AI places the calls.
    Retell,
    /// Vapi places the calls.
    Vapi,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawWebhooks {
    pub allow_private_targets: bool,
    pub attempt_timeout_ms: u64,
    pub inline_backoff_ms: Vec<u64>,
    pub round_delays_s: Vec<u64>,
    #[serde(default = "default_per_destination_concurrency")]
    pub per_destination_concurrency: usize,
}

fn default_per_destination_concurrency() -> usize {
    16
}

/// How an input key's value is validated (service-interface 7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputType {
    /// A U.S. phone number.
    Phone,
    /// A calendar date.
    Date,
    /// A dollar amount.
    Dollar,
    /// A boolean flag.
    Boolean,
    /// Free text, possibly with a custom pattern.
    String,
}

/// `[electronic]`: the channel tried before any call on accounts with electronic channels.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawElectronic {
    #[serde(default)]
    pub kind: ElectronicKind,
    pub stedi: Option<RawStedi>,
}

/// Which electronic channel production requests use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElectronicKind {
    /// The seeded simulator.
    #[default]
    Simulated,
    /// Stedi's eligibility and claim status APIs.
    Stedi,
    /// No electronic channel: every request goes to the phone.
    None,
}

/// `[electronic.stedi]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStedi {
    pub api_key: Option<Secret>,
    pub base_url: Option<String>,
    pub timeout_ms: Option<u64>,
    pub retry_backoff_ms: Option<Vec<u64>>,
}

impl DialerKind {
    /// The kind as the configuration writes it; also the platform name a handed-over call records.
    pub fn as_str(self) -> &'static str {
        match self {
            DialerKind::Simulated => "simulated",
            DialerKind::Http => "http",
            DialerKind::Retell => "retell",
            DialerKind::Vapi => "vapi",
        }
    }
}
