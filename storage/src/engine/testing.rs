//! Stores on either engine for tests: the engine-neutral tests run once on each.

use std::path::Path;

use crate::seal::KeySource;
use crate::{EngineChoice, StorageError, Store, DEFAULT_CACHE_BYTES};

/// The variable naming a PostgreSQL server where tests may create databases (`scripts/test.sh` starts a
/// private one). A test of the PostgreSQL engine fails without it: it is never skipped.
pub const POSTGRES_URL_VARIABLE: &str = "SWITCHBOARD_TEST_POSTGRES_URL";

/// A new, migrated database of its own on the test server, by URL.
pub fn fresh_postgres_database() -> String {
    let url = empty_postgres_database();
    crate::migrate_postgres(&url, None).expect("the test database migrates");
    url
}

/// A new database of its own on the test server, without Switchboard's schema, by URL.
pub fn empty_postgres_database() -> String {
    let admin = std::env::var(POSTGRES_URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{POSTGRES_URL_VARIABLE} is not set: run the tests with scripts/test.sh, which starts \
             PostgreSQL, or point it at a server where this user may create databases"
        )
    });
    let name = format!("switchboard_test_{}", uuid::Uuid::new_v4().simple());
    let create = format!("CREATE DATABASE {name}");
    let server = admin.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&server, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL server: {e}"));
            let connection = tokio::spawn(connection);
            client
                .batch_execute(&create)
                .await
                .expect("a test database");
            drop(client);
            let _ = connection.await;
        })
    })
    .join()
    .expect("the test database is created");
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

    /// A new store in `dir` (the keyring's place, and sled's) on this engine.
    pub fn open(self, dir: &Path) -> Result<Store, StorageError> {
        Store::open_on(
            dir,
            DEFAULT_CACHE_BYTES,
            &KeySource::BesideData,
            &self.choice(),
        )
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
