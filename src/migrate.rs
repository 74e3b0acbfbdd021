//! `switchboard migrate`: with every server stopped, brings what `[storage]` names to this release: the
//! PostgreSQL schema (`kind = "postgres"`), then the store's layout on either engine (the one-time
//! conversions of an older store, binding its security records to the master key among them). `serve`
//! refuses a store that needs it. What the conversion bound is printed, each operator by name: the binding
//! cannot tell an earlier release's record from one written since by someone without the master key, so
//! the operator who runs it checks the names.

use std::process::ExitCode;

use switchboard_storage::seal::Bound;
use switchboard_storage::{EngineChoice, Store, Upgrade, POSTGRES_SCHEMA_VERSION, STORE_LAYOUT};

use crate::cli::ServeArgs;
use crate::configuration::{self, Settings};

/// Runs the migration; messages go to stderr, the outcome to the exit code (2: the configuration).
pub fn run(args: &ServeArgs) -> ExitCode {
    let settings = match configuration::load(&args.overrides()) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("switchboard migrate: {e}");
            return ExitCode::from(2);
        }
    };
    let key = match crate::encryption::key_source(&settings) {
        Ok(key) => key,
        Err(e) => {
            eprintln!("switchboard migrate: {e:#}");
            return ExitCode::from(2);
        }
    };
    if let EngineChoice::Postgres { url, ca_file } = &settings.storage_engine {
        match switchboard_storage::migrate_postgres(url, ca_file.as_deref()) {
            Ok(Some(found)) if found == POSTGRES_SCHEMA_VERSION => {
                eprintln!("switchboard migrate: the schema is at version {found} already");
            }
            Ok(found) => {
                let from = found.map_or_else(|| "nothing".to_owned(), |v| format!("version {v}"));
                eprintln!(
                    "switchboard migrate: brought the schema from {from} to version \
                     {POSTGRES_SCHEMA_VERSION}"
                );
            }
            Err(e) => {
                eprintln!("switchboard migrate: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let place = place(&settings);
    let data_dir = &settings.server.data_dir;
    let upgraded = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(Store::migrate(
            data_dir,
            settings.storage_cache_bytes,
            &key,
            &settings.storage_engine,
        )),
        Err(e) => {
            eprintln!("switchboard migrate: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    match upgraded {
        Ok(None) => eprintln!(
            "switchboard migrate: no store {place} yet: its first start makes one at layout \
             {STORE_LAYOUT}"
        ),
        Ok(Some(upgrade)) if upgrade.from == STORE_LAYOUT && upgrade.plaintext.is_none() => {
            eprintln!("switchboard migrate: the store {place} is at layout {STORE_LAYOUT} already")
        }
        Ok(Some(upgrade)) => {
            for line in report(&upgrade, &place) {
                eprintln!("switchboard migrate: {line}");
            }
        }
        Err(e) => {
            eprintln!("switchboard migrate: cannot migrate the store {place}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The store the settings name, for messages.
fn place(settings: &Settings) -> String {
    match &settings.storage_engine {
        EngineChoice::Sled => format!("in {}", settings.server.data_dir.display()),
        EngineChoice::Postgres { .. } => "in the database of [storage] url".to_owned(),
    }
}

/// What the conversion did, one line each.
fn report(upgrade: &Upgrade, place: &str) -> Vec<String> {
    let mut lines = vec![format!(
        "brought the store {place} from layout {} to layout {}",
        upgrade.from, upgrade.to
    )];
    if let Some(sealed) = &upgrade.plaintext {
        lines.push(format!(
            "sealed the store of the release before sealing: {} values sealed, {} internal ids \
             hashed, {} entries copied, {} recordings sealed; its plaintext files removed",
            sealed.sealed, sealed.hashed, sealed.copied, sealed.recordings
        ));
    }
    if let Some(bound) = &upgrade.bound {
        lines.extend(bound_lines(bound));
    }
    if upgrade.secrets_sealed > 0 {
        lines.push(format!(
            "sealed the webhook secrets of {} accounts that were in the clear",
            upgrade.secrets_sealed
        ));
    }
    if upgrade.secrets_rehashed > 0 {
        lines.push(format!(
            "rehashed {} API secrets with argon2id (their bare SHA-256 removed)",
            upgrade.secrets_rehashed
        ));
    }
    if upgrade.requests_tabled > 0 {
        lines.push(format!(
            "gave {} requests their row in the requests table",
            upgrade.requests_tabled
        ));
    }
    if upgrade.batches_named > 0 {
        lines.push(format!(
            "named the members of {} batches created before batches were stored whole (their \
             requests keep their ids)",
            upgrade.batches_named
        ));
    }
    if upgrade.stale_entries_removed > 0 {
        lines.push(format!(
            "removed {} index entries that purged requests had left",
            upgrade.stale_entries_removed
        ));
    }
    lines
}

/// What the binding bound: counts per kind, and the operators by name.
fn bound_lines(bound: &Bound) -> Vec<String> {
    let counts: Vec<String> = bound
        .per_kind
        .iter()
        .map(|(kind, count)| format!("{kind} {count}"))
        .collect();
    let names = |names: &[String]| match names {
        [] => "none".to_owned(),
        names => names.join(", "),
    };
    vec![
        format!(
            "bound these security records to the master key: {}",
            counts.join(", ")
        ),
        format!("bound operators: {}", names(&bound.operators)),
        format!(
            "bound operator tokens, by the operator each names: {}",
            names(&bound.token_holders)
        ),
        format!(
            "the audit log's {} events from before binding are checked by hash, anchored in its \
             sealed head",
            bound.unkeyed_events
        ),
        "check that every operator named is one of yours and holds no more tokens than you gave: \
         the binding cannot tell a record of the earlier release from one written into the store \
         since by someone without the master key (delete an unknown one with DELETE \
         /admin/v1/operators/{name})"
            .to_owned(),
    ]
}
