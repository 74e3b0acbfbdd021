//! The engine the suite's servers store on. By default every server keeps sled in its data directory;
//! with `SWITCHBOARD_TEST_ENGINE=postgres` each server gets a fresh, migrated database of its own on the
//! test PostgreSQL server (`SWITCHBOARD_TEST_POSTGRES_URL`, which `scripts/postgres.sh` starts), so the
//! same black-box tests check the PostgreSQL engine. A test that names `[storage] kind` or `url` itself
//! chose its engine and keeps it on both runs.
//!
//! A binary on PostgreSQL prints its address as soon as it serves, while it still stands by for the
//! orchestrator lease (at once on a fresh database; once the lease of a holder killed with `kill -9` has
//! run out, on a restart), where on sled it prints it once it runs requests. So a binary the switch put on
//! PostgreSQL is waited for until it runs requests: the tests written for one node see the same server on
//! both engines.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use switchboard_storage::{EngineChoice, Store};

use super::TestConfig;

/// The first line of a config file the switch put on PostgreSQL.
const SWITCHED: &str = "# On PostgreSQL by SWITCHBOARD_TEST_ENGINE (tests/api/helpers/engine.rs)\n";

/// How long a binary the switch put on PostgreSQL may take to run requests: a restart after a `kill -9`
/// waits for the killed holder's lease to run out (`LEASE_TTL`), then recovers.
const TAKEOVER_LIMIT: Duration = Duration::from_secs(30);

/// The variable that switches the suite's servers to PostgreSQL: `postgres`, or `sled` (the default).
pub const ENGINE_VARIABLE: &str = "SWITCHBOARD_TEST_ENGINE";

/// Whether this run stores on PostgreSQL. Any other value than `sled` or `postgres` stops the test, so a
/// misspelt switch never passes as a sled run.
pub fn on_postgres() -> bool {
    match std::env::var(ENGINE_VARIABLE) {
        Err(std::env::VarError::NotPresent) => false,
        Ok(value) if value == "sled" || value.is_empty() => false,
        Ok(value) if value == "postgres" => true,
        Ok(value) => panic!("{ENGINE_VARIABLE}={value:?}: expected \"sled\" or \"postgres\""),
        Err(e) => panic!("{ENGINE_VARIABLE}: {e}"),
    }
}

/// Whether the calling test skips what is sled's on this run, saying so with `why` on the run's stderr
/// (written past the test harness's capture, so every run shows it): for the few tests, or last steps,
/// that look inside sled's own files or are about sled itself. A whole test uses [`sled_only!`].
pub fn skip_on_postgres(why: &str) -> bool {
    let skip = on_postgres();
    if skip {
        let thread = std::thread::current();
        let test = thread.name().unwrap_or("a test");
        let _ = writeln!(std::io::stderr(), "{test}: skipped on PostgreSQL: {why}");
    }
    skip
}

/// Returns from the calling test on the PostgreSQL run, printing the reason given.
macro_rules! sled_only {
    ($why:expr) => {
        if $crate::helpers::skip_on_postgres($why) {
            return;
        }
    };
}
pub(crate) use sled_only;

/// Whether `config` names its engine (`[storage] kind` or `url`): then the test's choice stands.
fn chooses_engine(config: &TestConfig) -> bool {
    config
        .table
        .get("storage")
        .and_then(toml::Value::as_table)
        .is_some_and(|storage| storage.contains_key("kind") || storage.contains_key("url"))
}

/// Whether this run moves a server started with `config` to PostgreSQL: it does unless the test chose.
fn switches(config: &TestConfig) -> bool {
    on_postgres() && !chooses_engine(config)
}

/// `config` as a server of this run starts with it: unchanged on sled or when the test chose its engine,
/// else on the PostgreSQL database `database` answers.
pub fn on_test_engine(config: &TestConfig, database: impl FnOnce() -> String) -> TestConfig {
    let mut config = config.clone();
    if switches(&config) {
        config
            .set("storage.kind", "postgres")
            .set("storage.url", database());
    }
    config
}

/// `config` as an in-process server of this run starts with it, and the database the switch made for it,
/// which is the app's alone.
pub fn for_app(config: &TestConfig) -> (TestConfig, Option<String>) {
    let database = switches(config).then(switchboard_storage::fresh_postgres_database);
    let config = match &database {
        Some(url) => on_test_engine(config, || url.clone()),
        None => config.clone(),
    };
    (config, database)
}

/// How long a dropped app's server gets to stop (its runtime ends with the test) before its database is
/// dropped under it.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Drops the database at `url` once a stopped app's server has let go of it, from a thread of its own, so
/// the cluster's disk does not grow by a database per test (about 8 MB each) over the run. Quiet on
/// failure: a database left over goes with the cluster at the end of the run.
pub fn drop_database_later(url: String) {
    std::thread::spawn(move || {
        std::thread::sleep(STOP_GRACE);
        let name = super::database_name(&url);
        let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        let admin = match std::env::var(switchboard_storage::POSTGRES_URL_VARIABLE) {
            Ok(admin) => admin,
            Err(_) => return,
        };
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async {
            if let Ok((client, connection)) =
                tokio_postgres::connect(&admin, tokio_postgres::NoTls).await
            {
                tokio::spawn(connection);
                let _ = client.batch_execute(&sql).await;
            }
        });
    });
}

/// The text of a config file for `config`, written into `dir`: on this run's engine, the switch's first
/// line on top when it moved the server to PostgreSQL.
pub fn config_file_text(dir: &Path, config: &TestConfig) -> String {
    if switches(config) {
        let moved = on_test_engine(config, || database_for(dir));
        format!("{SWITCHED}{}", moved.to_toml())
    } else {
        config.to_toml()
    }
}

/// Whether the config file at `path` is one the switch put on PostgreSQL.
pub fn switched(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.starts_with(SWITCHED))
}

/// The database of each data directory a binary of this run started on: on sled the store lives in the
/// data directory, so a test that restarts a server on the same directory, even with a config written
/// elsewhere, finds its data again, and a server on another directory starts empty.
static DATABASES: Mutex<BTreeMap<PathBuf, String>> = Mutex::new(BTreeMap::new());

/// Points the config file at `config`, when the switch wrote it, at the database of `data_dir`: the one
/// a binary on that directory used before, else the file's own, else (the file's is another directory's)
/// a fresh one.
pub fn database_of_data_dir(config: &Path, data_dir: &Path) {
    if !switched(config) {
        return;
    }
    let text = std::fs::read_to_string(config).unwrap();
    let named = url_in(&text).expect("a switched config names a database");
    let mut databases = DATABASES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let kept = match databases.get(data_dir) {
        Some(kept) => kept.clone(),
        None if databases.values().any(|url| *url == named) => {
            switchboard_storage::fresh_postgres_database()
        }
        None => named.clone(),
    };
    databases.insert(data_dir.to_owned(), kept.clone());
    if kept != named {
        std::fs::write(config, text.replace(&named, &kept)).unwrap();
    }
}

/// The `[storage] url` of a config file's text.
fn url_in(text: &str) -> Option<String> {
    let table: toml::Table = text.parse().ok()?;
    let url = table.get("storage")?.get("url")?.as_str()?;
    Some(url.to_owned())
}

/// Waits until the server at `address` runs requests (`/readyz` says `ready`, not `standby`), from a thread
/// of its own: callers may be inside a runtime, where a blocking client cannot run.
pub fn wait_runs_requests(address: &str) {
    let readyz = format!("{address}/readyz");
    let waited = std::thread::spawn(move || {
        // Only readiness is asked: a TLS test's own certificate needs no check here.
        let client = reqwest::blocking::Client::builder()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        let deadline = Instant::now() + TAKEOVER_LIMIT;
        loop {
            let status = client
                .get(&readyz)
                .send()
                .and_then(|r| r.json::<serde_json::Value>())
                .map(|body| body["status"].clone());
            if status.as_ref().is_ok_and(|s| s == "ready") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the server on PostgreSQL did not run requests within {TAKEOVER_LIMIT:?}: {status:?}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    });
    if let Err(panic) = waited.join() {
        std::panic::resume_unwind(panic);
    }
}

/// The store a stopped server kept with the config file at `config` and `data_dir` (its keyring beside the
/// data), opened directly: sled in `data_dir`, or the database the config names.
pub fn open_store(config: &Path, data_dir: &Path) -> Store {
    let engine = match url_in(&std::fs::read_to_string(config).unwrap()) {
        Some(url) => EngineChoice::Postgres { url, ca_file: None },
        None => EngineChoice::Sled,
    };
    Store::open(&switchboard_storage::StorageConfig::embedded(data_dir).on(engine)).unwrap()
}

/// The database a config written into `dir` stores on this run: the one a config already written there
/// names, so a test that rewrites its config between two starts of one server keeps its data as sled keeps
/// it in the data directory; a fresh one otherwise.
fn database_for(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("switchboard.toml"))
        .ok()
        .and_then(|text| url_in(&text))
        .unwrap_or_else(switchboard_storage::fresh_postgres_database)
}
