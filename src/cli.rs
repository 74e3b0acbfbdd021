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
}

impl ServeArgs {
    /// The configuration overrides these options carry.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config_path: self.config.clone().filter(|p| !p.as_os_str().is_empty()),
            bind: self.bind.clone().filter(|b| !b.is_empty()),
            data_dir: self.data_dir.clone().filter(|d| !d.as_os_str().is_empty()),
        }
    }
}
