//! Validated, typed settings: what the rest of the program reads.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::checks::{
    account_dialers, validate_accounts, validate_payers, validate_schemas, validate_webhooks,
};
use super::dialer::{CallSettings, DialerSettings};
use super::raw::{ClockMode, DialerKind, InputType, RawConfig};
use super::specs::{validate_http_url, AccountSpec, PayerSpec, SchemaSpec, SpecError};
use super::telemetry::{TelemetryEnv, TelemetrySettings};
use super::{ConfigSource, Overrides};
use crate::secret::Secret;

/// Everything the server runs with.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Where these settings came from.
    pub source: ConfigSource,
    /// `[server]`.
    pub server: ServerSettings,
    /// `[clock]`.
    pub clock: ClockSettings,
    /// `[simulation]`.
    pub simulation: SimulationSettings,
    /// `[dialer]`.
    pub dialer: DialerSettings,
    /// Every dialer production requests may go to: `[dialer] kind` first, then each other kind an
    /// account names (`[[accounts]] dialer`), one per kind.
    pub dialers: Vec<DialerSettings>,
    /// `[dialer]` limits of real calls: concurrency, calling hours, polling.
    pub calls: CallSettings,
    /// `[dialer] paused`: requests are accepted and booked, but none is dispatched (maintenance, tests of
    /// intake alone). Requests already running carry on.
    pub dispatch_paused: bool,
    /// `[webhooks]`.
    pub webhooks: WebhookSettings,
    /// `[electronic]`.
    pub electronic: super::ElectronicSettings,
    /// `[dialer] cost_per_minute` and `[electronic] cost_per_transaction`: what requests are priced at.
    pub prices: switchboard_actors::cost::Prices,
    /// `[storage] cache_capacity_mb`, in bytes: the store's page cache. Bounds resident memory whatever
    /// the number of stored requests.
    pub storage_cache_bytes: u64,
    /// `[storage] kind` and `url`: the engine the store runs on.
    pub storage_engine: switchboard_storage::EngineChoice,
    /// `[encryption] key_file`: the master key's file, unless `SWITCHBOARD_MASTER_KEY` gives the key
    /// itself; with neither, the key is kept beside the data.
    pub master_key_file: Option<PathBuf>,
    /// `[telemetry]`.
    pub telemetry: TelemetrySettings,
    /// `[throttle]`: failed sign-ins before 429.
    pub throttle: super::ThrottleSettings,
    /// `[[accounts]]`, each with its id set.
    pub accounts: Vec<AccountSpec>,
    /// `[[schemas]]`, each with its id set.
    pub schemas: Vec<SchemaSpec>,
    /// `[input_types]`.
    pub input_types: BTreeMap<String, InputType>,
    /// `[[payers]]`, each with its name set.
    pub payers: Vec<PayerSpec>,
}

/// `[server]`.
#[derive(Clone, Debug)]
pub struct ServerSettings {
    /// Listen address.
    pub bind: SocketAddr,
    /// Store directory.
    pub data_dir: PathBuf,
    /// Base of links Switchboard hands out: the declared `public_url`, else the address of `bind`, made
    /// the address actually bound by [`ServerSettings::settle_public_url`] once the listener is up.
    pub public_url: url::Url,
    /// Whether `public_url` is the operator's own (set in the file), rather than derived from `bind`.
    pub public_url_declared: bool,
    /// Where the other nodes on a shared PostgreSQL database reach this one (they forward their clients to
    /// the node that runs requests): declared, else derived once the listener is bound
    /// ([`ServerSettings::node_url_of`]).
    pub node_url: Option<url::Url>,
    /// Replaces "Service" in the product's names: the token realm, and by default the two words below.
    pub product_word: String,
    /// Names the `/v1/auth` headers (`{word}-API-Key`, `{word}-API-Secret`); `product_word` unless set.
    pub auth_header_word: String,
    /// `payerLookup.phoneNumberSource` of the built-in directory, lowercased; `product_word` unless set.
    pub lookup_source_word: String,
    /// Bearer token of `/admin/v1`; no admin API when `None`.
    pub admin_token: Option<Secret>,
    /// HS256 key of bearer tokens; generated and kept in the store when `None`.
    pub token_secret: Option<Secret>,
    /// Registers `/admin/v1/faults/*`, which make parts of the server fail on purpose (tests, drills).
    pub fault_injection: bool,
    /// `[server.tls]`: HTTPS on `bind` when set, plain HTTP otherwise.
    pub tls: Option<super::TlsSettings>,
    /// Addresses of the operator's own proxies: a call from one of them is audited at the address its
    /// `X-Forwarded-For` names ([`crate::client_ip`]).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// `backup_root`: the directory under which `POST /admin/v1/backups` may write; anywhere the service
    /// can write when `None`.
    pub backup_root: Option<PathBuf>,
}

/// `[clock]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockSettings {
    /// Wall time.
    System,
    /// Moves only through the admin API.
    Manual {
        /// The first instant.
        start: DateTime<Utc>,
    },
}

/// `[simulation]`.
#[derive(Clone, Copy, Debug)]
pub struct SimulationSettings {
    /// Simulated call time runs this many times faster than wall time.
    pub time_scale: f64,
    /// Seed of every simulated outcome.
    pub seed: u64,
}

/// `[webhooks]`.
#[derive(Clone, Debug)]
pub struct WebhookSettings {
    /// Loopback and private-range targets allowed.
    pub allow_private_targets: bool,
    /// Per-attempt timeout.
    pub attempt_timeout: Duration,
    /// Waits before each inline retry.
    pub inline_backoff: Vec<Duration>,
    /// Delayed rounds, counted from the terminal state.
    pub round_delays: Vec<Duration>,
    /// Attempts in flight at once to one destination (host and port).
    pub per_destination_concurrency: usize,
}

impl Settings {
    pub(super) fn validate(
        raw: RawConfig,
        source: ConfigSource,
        overrides: &Overrides,
    ) -> Result<Settings, SpecError> {
        let env_note = |var: &str, set: bool| {
            if set {
                format!(" (set by {var})")
            } else {
                String::new()
            }
        };
        let bind = raw.server.bind.parse::<SocketAddr>().map_err(|_| {
            SpecError::new(
                "server.bind",
                format!(
                    "{:?} is not an address such as 127.0.0.1:8080{}",
                    raw.server.bind,
                    env_note("SWITCHBOARD_BIND", overrides.bind.is_some())
                ),
            )
        })?;
        if raw.server.data_dir.trim().is_empty() {
            return Err(SpecError::new(
                "server.data_dir",
                format!(
                    "must not be empty{}",
                    env_note("SWITCHBOARD_DATA_DIR", overrides.data_dir.is_some())
                ),
            ));
        }
        let words = super::words::resolve(&raw.server)?;
        let tls = super::tls::validate_tls(raw.server.tls.as_ref())?;
        let public_url = match &raw.server.public_url {
            Some(declared) => validate_http_url("server.public_url", declared)?,
            None => super::public_url::of_address(bind, tls.is_some()),
        };
        let trusted_proxies = trusted_proxies(&raw.server.trusted_proxies)?;
        let backup_root = backup_root(raw.server.backup_root.as_deref())?;
        let node_url = match &raw.server.node_url {
            Some(declared) => Some(validate_http_url("server.node_url", declared)?),
            None => None,
        };
        if raw
            .server
            .admin_token
            .as_ref()
            .is_some_and(|t| t.expose().trim().is_empty())
        {
            return Err(SpecError::new(
                "server.admin_token",
                "must not be blank; remove the key to disable the admin API",
            ));
        }
        if raw
            .server
            .token_secret
            .as_ref()
            .is_some_and(|t| t.expose().len() < 16)
        {
            return Err(SpecError::new(
                "server.token_secret",
                "must be at least 16 characters",
            ));
        }
        let clock = match (raw.clock.mode, &raw.clock.start) {
            (ClockMode::System, _) => ClockSettings::System,
            (ClockMode::Manual, None) => {
                return Err(SpecError::new(
                    "clock.start",
                    "is required when mode = \"manual\"",
                ));
            }
            (ClockMode::Manual, Some(start)) => ClockSettings::Manual {
                start: DateTime::parse_from_rfc3339(start)
                    .map_err(|e| {
                        SpecError::new(
                            "clock.start",
                            format!("{start:?} is not an RFC 3339 instant: {e}"),
                        )
                    })?
                    .with_timezone(&Utc),
            },
        };
        let time_scale = raw.simulation.time_scale;
        if !(time_scale.is_finite() && time_scale > 0.0) {
            return Err(SpecError::new(
                "simulation.time_scale",
                "must be a positive number",
            ));
        }
        let (dialer, calls) = super::dialer::validate_dialer(&raw.dialer)?;
        let webhooks = validate_webhooks(&raw.webhooks)?;
        let prices = super::costs::validate_prices(
            raw.dialer.cost_per_minute,
            raw.electronic.cost_per_transaction,
        )?;
        let electronic = super::electronic::validate_electronic(raw.electronic)?;
        let storage_cache_bytes = match raw.storage.cache_capacity_mb {
            Some(0) => {
                return Err(SpecError::new(
                    "storage.cache_capacity_mb",
                    "must be at least 1",
                ))
            }
            Some(mb) => mb.saturating_mul(1 << 20),
            None => switchboard_storage::DEFAULT_CACHE_BYTES,
        };
        let storage_engine = super::storage_engine::validate_engine(&raw.storage)?;
        let master_key_file = match raw.encryption.key_file {
            Some(path) if path.trim().is_empty() => {
                return Err(SpecError::new(
                    "encryption.key_file",
                    "must not be empty; remove the key to keep the master key beside the data",
                ))
            }
            path => path.map(PathBuf::from),
        };
        let telemetry = TelemetrySettings::validate(raw.telemetry, &TelemetryEnv::read())?;
        let throttle = super::throttle::validate_throttle(&raw.throttle)?;
        let schemas = validate_schemas(raw.schemas)?;
        let accounts = validate_accounts(raw.accounts, &schemas)?;
        let dialers = account_dialers(&raw.dialer, &dialer, &accounts, calls.call_timeout)?;
        for key in raw.input_types.keys() {
            if key.trim().is_empty() {
                return Err(SpecError::new("input_types", "keys must not be blank"));
            }
        }
        let payers = validate_payers(raw.payers)?;
        Ok(Settings {
            source,
            server: ServerSettings {
                bind,
                data_dir: PathBuf::from(&raw.server.data_dir),
                public_url,
                public_url_declared: raw.server.public_url.is_some(),
                node_url,
                product_word: words.product,
                auth_header_word: words.auth_header,
                lookup_source_word: words.lookup_source,
                admin_token: raw.server.admin_token,
                token_secret: raw.server.token_secret,
                fault_injection: raw.server.fault_injection,
                tls,
                trusted_proxies,
                backup_root,
            },
            clock,
            simulation: SimulationSettings {
                time_scale,
                seed: raw.simulation.seed,
            },
            dialer,
            dialers,
            calls,
            dispatch_paused: raw.dialer.paused,
            webhooks,
            electronic,
            prices,
            storage_cache_bytes,
            storage_engine,
            master_key_file,
            telemetry,
            throttle,
            accounts,
            schemas,
            input_types: raw.input_types,
            payers,
        })
    }
}

impl Settings {
    /// The settings of the dialer of `kind`, when production requests may go to it.
    pub fn dialer_of(&self, kind: DialerKind) -> Option<&DialerSettings> {
        self.dialers.iter().find(|d| d.kind() == kind)
    }
}

/// `server.backup_root`: an absolute path. Whether it exists is checked by each backup, so a volume mounted
/// after start-up serves.
fn backup_root(raw: Option<&str>) -> Result<Option<PathBuf>, SpecError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let root = PathBuf::from(raw.trim());
    if raw.chars().any(char::is_control) || !root.is_absolute() {
        return Err(SpecError::new(
            "server.backup_root",
            format!("{raw:?} must be an absolute path, such as /var/backups/switchboard"),
        ));
    }
    Ok(Some(root))
}

/// `server.trusted_proxies`: each entry an address or a range in CIDR notation.
fn trusted_proxies(entries: &[String]) -> Result<Vec<ipnet::IpNet>, SpecError> {
    entries
        .iter()
        .map(|entry| {
            let entry = entry.trim();
            entry
                .parse::<ipnet::IpNet>()
                .or_else(|_| entry.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| {
                    SpecError::new(
                        "server.trusted_proxies",
                        format!("{entry:?} is not an address or a range such as 10.0.0.0/8"),
                    )
                })
        })
        .collect()
}
