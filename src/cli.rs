//! Command line: `switchboard [serve] [--config PATH] [--bind ADDR] [--data-dir DIR]`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::configuration::Overrides;

/// Switchboard: a self-hostable request-extraction server for US health-insurance payers.
#[derive(Debug, Parser)]
#[command(
    name = "switchboard",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; `serve` when omitted.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// `serve` options, also accepted without the subcommand.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (the default).
    Serve(ServeArgs),
    /// Print the call-flow tree of one request: steps, calls, and where each answer came from.
    Trace(TraceArgs),
    /// Ask a running server for a consistent copy of its store (`POST /admin/v1/backups`).
    Backup(BackupArgs),
    /// Manage the master key that seals the store.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// With every server stopped: create or upgrade the PostgreSQL schema (`kind = "postgres"`), then
    /// convert a store of an earlier release to this release's layout (either engine), printing what it
    /// bound to the master key. Safe to run again.
    Migrate(ServeArgs),
    /// Exit 0 when the server on this machine answers `GET /readyz` with 200 (a container's HEALTHCHECK).
    Healthcheck(HealthcheckArgs),
}

/// Options of `healthcheck`.
#[derive(Debug, clap::Args)]
pub struct HealthcheckArgs {
    /// The address the server listens on (plain HTTP); a wildcard address is asked on loopback.
    #[arg(long, env = "SWITCHBOARD_BIND", default_value = "127.0.0.1:8080")]
    pub address: String,
}

/// Options of `backup`.
#[derive(Debug, clap::Args)]
pub struct BackupArgs {
    /// The new directory to write the copy into: absolute, outside data_dir, on the server's machine.
    #[arg(long)]
    pub to: String,
    /// Base URL of the running Switchboard.
    #[arg(long, env = "SWITCHBOARD_URL", default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
    /// An admin operator's token (or `server.admin_token`).
    #[arg(long, env = "SWITCHBOARD_ADMIN_TOKEN")]
    pub admin_token: String,
}

/// `keys` subcommands.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Write a new random master key (32 bytes, base64) to a new file readable by its owner only.
    Generate {
        /// The file to create; an existing file is never replaced.
        #[arg(long)]
        out: PathBuf,
    },
    /// Re-wrap every data key under a new master key, with the server stopped. Afterwards the new key
    /// opens the store and the old one is refused.
    Rotate(RotateArgs),
}

/// Options of `keys rotate`: the server's own options, to find the store and its current key, and the
/// new key.
#[derive(Debug, clap::Args)]
pub struct RotateArgs {
    /// The server's options (config file, data directory).
    #[command(flatten)]
    pub serve: ServeArgs,
    /// The new master key's file (as `keys generate` writes it).
    #[arg(long)]
    pub new_key_file: PathBuf,
}

/// Options of `trace`.
#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    /// The request to trace.
    pub request_id: String,
    /// Base URL of the Switchboard to ask.
    #[arg(long, env = "SWITCHBOARD_URL", default_value = "http://127.0.0.1:8080")]
    pub base_url: String,
    /// A bearer token (otherwise key and secret are exchanged for one).
    #[arg(long, env = "SWITCHBOARD_TOKEN")]
    pub token: Option<String>,
    /// API key.
    #[arg(long, env = "SWITCHBOARD_API_KEY")]
    pub key: Option<String>,
    /// API secret.
    #[arg(long, env = "SWITCHBOARD_API_SECRET")]
    pub secret: Option<String>,
    /// Word of the credential headers (`{word}-API-Key`): the server's `auth_header_word`, which is its
    /// product word unless set apart.
    #[arg(long, env = "SWITCHBOARD_PRODUCT_WORD", default_value = "Switchboard")]
    pub product_word: String,
}

/// Options of `serve`.
#[derive(Debug, Default, clap::Args)]
pub struct ServeArgs {
    /// Config file, merged over the embedded defaults.
    #[arg(long, env = "SWITCHBOARD_CONFIG")]
    pub config: Option<PathBuf>,
    /// Listen address, overriding `server.bind`.
    #[arg(long, env = "SWITCHBOARD_BIND")]
    pub bind: Option<String>,
    /// Data directory, overriding `server.data_dir`.
    #[arg(long, env = "SWITCHBOARD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where the other nodes on the same PostgreSQL database reach this one, overriding
    /// `server.node_url`.
    #[arg(long, env = "SWITCHBOARD_NODE_URL")]
    pub node_url: Option<String>,
}

impl ServeArgs {
    /// The configuration overrides these options carry.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config_path: self.config.clone().filter(|p| !p.as_os_str().is_empty()),
            bind: self.bind.clone().filter(|b| !b.is_empty()),
            data_dir: self.data_dir.clone().filter(|d| !d.as_os_str().is_empty()),
            node_url: self.node_url.clone().filter(|u| !u.is_empty()),
        }
    }
}
