//! Stores on either engine for tests: the engine-neutral tests run once on each.

use std::path::Path;

use crate::{EngineChoice, StorageError, Store};

/// The variable naming a PostgreSQL server where tests may create databases (`scripts/test.sh` starts a
/// private one). A test of the PostgreSQL engine fails without it: it is never skipped.
pub const POSTGRES_URL_VARIABLE: &str = "SWITCHBOARD_TEST_POSTGRES_URL";

/// The test server's URL, or a panic that says how to get one.
fn test_server_url() -> String {
    std::env::var(POSTGRES_URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{POSTGRES_URL_VARIABLE} is not set: run the tests with scripts/test.sh, which starts \
             PostgreSQL, or point it at a server where this user may create databases"
        )
    })
}

/// Runs `sql` with text parameters `params` as the test server's administrator, on the database `url`
/// names (the server's own when `None`), from a thread of its own so any caller may block on it; answers
/// the rows. What a database restart, another node or an operator does under a running Switchboard.
pub fn admin_query(url: Option<&str>, sql: &str, params: &[&str]) -> Vec<tokio_postgres::Row> {
    let url = url.map_or_else(test_server_url, str::to_owned);
    let sql = sql.to_owned();
    let params: Vec<String> = params.iter().map(|p| (*p).to_owned()).collect();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL server: {e}"));
            tokio::spawn(connection);
            let params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                .iter()
                .map(|p| p as &(dyn tokio_postgres::types::ToSql + Sync))
                .collect();
            client
                .query(sql.as_str(), &params)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
        })
    })
    .join()
    .expect("the statement ran")
}

/// A new, migrated database of its own on the test server, by URL.
pub fn fresh_postgres_database() -> String {
    let url = empty_postgres_database();
    crate::migrate_postgres(&url, None).expect("the test database migrates");
    url
}

/// A new database of its own on the test server, without Switchboard's schema, by URL.
pub fn empty_postgres_database() -> String {
    let admin = test_server_url();
    let name = format!("switchboard_test_{}", uuid::Uuid::new_v4().simple());
    admin_query(None, &format!("CREATE DATABASE {name}"), &[]);
    let (base, options) = admin.split_once('?').unwrap_or((&admin, ""));
    let (server, _) = base.rsplit_once('/').expect("a URL that names a database");
    match options {
        "" => format!("{server}/{name}"),
        options => format!("{server}/{name}?{options}"),
    }
}

/// The engine a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestEngine {
    /// sled in the test's directory.
    Sled,
    /// A fresh database on the test server.
    Postgres,
}

impl TestEngine {
    /// The choice to open a store with: a fresh database each time for PostgreSQL.
    pub fn choice(self) -> EngineChoice {
        match self {
            TestEngine::Sled => EngineChoice::Sled,
            TestEngine::Postgres => EngineChoice::Postgres {
                url: fresh_postgres_database(),
                ca_file: None,
            },
        }
    }

    /// A store on this engine in a new temporary directory, kept while the directory is.
    #[cfg(test)]
    pub(crate) fn open_temp(self) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = self.open(dir.path()).unwrap();
        (dir, store)
    }

    /// A new store in `dir` (the keyring's place, and sled's) on this engine.
    pub fn open(self, dir: &Path) -> Result<Store, StorageError> {
        Store::open(&crate::StorageConfig::embedded(dir).on(self.choice()))
    }
}

/// Runs each listed `async fn(TestEngine)` as two tests, `sled` and `postgres`, in a module of its name.
#[macro_export]
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sled() {
                    super::$name($crate::TestEngine::Sled).await
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::$name($crate::TestEngine::Postgres).await
                }
            }
        )*
    };
}
