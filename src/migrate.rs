//! `switchboard migrate`: creates or upgrades the PostgreSQL schema named by `[storage]`.

use std::process::ExitCode;

use switchboard_storage::{EngineChoice, POSTGRES_SCHEMA_VERSION};

use crate::cli::ServeArgs;
use crate::configuration;

/// Runs the migration; messages go to stderr, the outcome to the exit code (2: the configuration).
pub fn run(args: &ServeArgs) -> ExitCode {
    let settings = match configuration::load(&args.overrides()) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("switchboard migrate: {e}");
            return ExitCode::from(2);
        }
    };
    let EngineChoice::Postgres { url, ca_file } = &settings.storage_engine else {
        eprintln!(
            "switchboard migrate: [storage] kind is \"sled\", which needs no migration: the embedded \
             store upgrades itself when it opens"
        );
        return ExitCode::from(2);
    };
    match switchboard_storage::migrate_postgres(url, ca_file.as_deref()) {
        Ok(Some(found)) if found == POSTGRES_SCHEMA_VERSION => {
            eprintln!("switchboard migrate: the schema is at version {found} already");
            ExitCode::SUCCESS
        }
        Ok(found) => {
            let from = found.map_or_else(|| "nothing".to_owned(), |v| format!("version {v}"));
            eprintln!(
                "switchboard migrate: brought the schema from {from} to version {POSTGRES_SCHEMA_VERSION}"
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("switchboard migrate: {e}");
            ExitCode::FAILURE
        }
    }
}
