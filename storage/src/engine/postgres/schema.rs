//! The schema of the PostgreSQL engine: what `switchboard migrate` creates, and the check that `serve`
//! makes before it uses a database.

use std::path::Path;

use tokio_postgres::Client;

use super::{describe, wait};
use crate::StorageError;

/// The schema this binary reads and writes; `switchboard migrate` brings a database up to it.
pub const SCHEMA_VERSION: i32 = 4;

/// The statements that create (or upgrade to) [`SCHEMA_VERSION`], each idempotent.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS switchboard_schema (version integer NOT NULL)",
    "CREATE TABLE IF NOT EXISTS switchboard_kv (
        tree text NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (tree, key))",
    "CREATE SEQUENCE IF NOT EXISTS switchboard_ids",
    "CREATE TABLE IF NOT EXISTS switchboard_lease (
        name text PRIMARY KEY,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL)",
    // Version 2: where the holder is reached, for standbys that forward their clients to it.
    "ALTER TABLE switchboard_lease ADD COLUMN IF NOT EXISTS node_url text",
    // Version 3: the audit log as a table of its own, one row per event (see `audit_events`).
    super::audit_events::CREATE,
    // and the requests as a table a DBA reports from (see `requests_table`).
    super::requests_table::CREATE[0],
    super::requests_table::CREATE[1],
    super::requests_table::CREATE[2],
    // Version 4: accounts and their API keys as tables of their own, moved out of `switchboard_kv`.
    super::accounts::CREATE[0],
    super::accounts::CREATE[1],
    super::accounts::CREATE[2],
    super::accounts::MOVE[0],
    super::accounts::MOVE[1],
    super::accounts::MOVE[2],
    // and schemas (heads and versions) and the payer directory.
    super::schemas::CREATE[0],
    super::schemas::CREATE[1],
    super::schemas::MOVE[0],
    super::schemas::MOVE[1],
    super::schemas::MOVE[2],
    super::payers::CREATE[0],
    super::payers::MOVE[0],
    super::payers::MOVE[1],
    // and the webhook attempt log as a table with the API's fields as columns (its rows moved by
    // `webhook_attempts::move_rows`).
    super::webhook_attempts::CREATE,
    // and operators, their token index and the settings.
    super::operators::CREATE[0],
    super::operators::CREATE[1],
    super::operators::CREATE[2],
    super::operators::MOVE[0],
    super::operators::MOVE[1],
    super::operators::MOVE[2],
    super::settings::CREATE,
    super::settings::MOVE[0],
    super::settings::MOVE[1],
];

fn schema_exists(client: &Client) -> Result<bool, StorageError> {
    let row = wait(client.query_one(
        "SELECT to_regclass('switchboard_schema') IS NOT NULL AND to_regclass('switchboard_kv') IS NOT NULL",
        &[],
    ))
    .map_err(|e| StorageError::Database(format!("cannot read the schema: {}", describe(&e))))?;
    Ok(row.get(0))
}

/// The refusal of a database whose schema is not [`SCHEMA_VERSION`]'s.
pub(crate) fn outdated(found: Option<i32>) -> StorageError {
    let found = match found {
        Some(version) => format!("is at version {version}"),
        None => "has no Switchboard schema".to_owned(),
    };
    StorageError::Database(format!(
        "the database {found} and this Switchboard needs version {SCHEMA_VERSION}: \
         run `switchboard migrate --config PATH` first"
    ))
}

/// Refuses a database without this binary's schema, before any statement that needs it is prepared.
pub(super) fn check_schema(client: &Client) -> Result<(), StorageError> {
    if !schema_exists(client)? {
        return Err(outdated(None));
    }
    let row = wait(client.query_opt("SELECT max(version) FROM switchboard_schema", &[])).map_err(
        |e| StorageError::Database(format!("cannot read the schema version: {}", describe(&e))),
    )?;
    let found: Option<i32> = row.and_then(|row| row.get(0));
    match found {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(newer) if newer > SCHEMA_VERSION => Err(StorageError::Database(format!(
            "the database is at schema version {newer}, newer than this Switchboard's \
             {SCHEMA_VERSION}: run the release that migrated it"
        ))),
        older => Err(outdated(older)),
    }
}

/// Creates the schema in the database at `url`, or upgrades it to [`SCHEMA_VERSION`]; answers the version
/// it found (`None`: none).
pub fn migrate(url: &str, ca_file: Option<&Path>) -> Result<Option<i32>, StorageError> {
    // On a thread of its own: a caller inside a runtime could not block on another one.
    let url = url.to_owned();
    let tls = crate::engine::connect::tls(ca_file)?;
    std::thread::spawn(move || migrate_now(&url, tls))
        .join()
        .unwrap_or_else(|_| Err(StorageError::Database("the migration panicked".into())))
}

fn migrate_now(
    url: &str,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
) -> Result<Option<i32>, StorageError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StorageError::Database(format!("cannot start: {e}")))?;
    let failed = |e: tokio_postgres::Error| {
        StorageError::Database(format!("migration failed: {}", describe(&e)))
    };
    runtime.block_on(async {
        let mut client = crate::engine::connect::connect(url, tls)
            .await
            .map_err(|e| StorageError::Database(format!("cannot connect to the database: {e}")))?;
        let transaction = client.transaction().await.map_err(failed)?;
        // One migration at a time, whichever node runs it.
        transaction
            .batch_execute("SELECT pg_advisory_xact_lock(7465737)")
            .await
            .map_err(failed)?;
        transaction
            .batch_execute(MIGRATIONS[0])
            .await
            .map_err(failed)?;
        let found: Option<i32> = transaction
            .query_one("SELECT max(version) FROM switchboard_schema", &[])
            .await
            .map_err(failed)?
            .get(0);
        if let Some(newer) = found.filter(|found| *found > SCHEMA_VERSION) {
            return Err(StorageError::Database(format!(
                "the database is at schema version {newer}, newer than this Switchboard's {SCHEMA_VERSION}"
            )));
        }
        if found.is_some_and(|found| found < MOVES_DATA) {
            refuse_while_served(&transaction).await?;
        }
        for statement in MIGRATIONS {
            transaction.batch_execute(statement).await.map_err(failed)?;
        }
        move_audit_blocks(&transaction).await?;
        super::webhook_attempts::move_rows(&transaction)
            .await
            .map_err(failed)?;
        transaction
            .execute("DELETE FROM switchboard_schema", &[])
            .await
            .map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO switchboard_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .await
            .map_err(failed)?;
        transaction.commit().await.map_err(failed)?;
        Ok(found)
    })
}

/// The first version whose migration moves rows a running node of an earlier release reads and writes.
const MOVES_DATA: i32 = 4;

/// Refuses to move data while a node holds the orchestrator lease: a node of the release before would go
/// on reading and writing the rows being moved.
async fn refuse_while_served(
    transaction: &tokio_postgres::Transaction<'_>,
) -> Result<(), StorageError> {
    let holder = transaction
        .query_opt(
            "SELECT holder FROM switchboard_lease WHERE name = 'orchestrator' AND expires_at >= now()",
            &[],
        )
        .await
        .map_err(|e| StorageError::Database(format!("cannot read the lease: {}", describe(&e))))?;
    match holder {
        Some(row) => Err(StorageError::Database(format!(
            "node {} is serving this database: stop every node before migrating it, as this \
             version moves rows an earlier release still uses",
            row.get::<_, String>(0)
        ))),
        None => Ok(()),
    }
}

/// Version 3: the audit events that earlier versions kept in blocks of `switchboard_kv` become rows of
/// `audit_events`, their lines as they were (so every hash and MAC still holds); the blocks go.
async fn move_audit_blocks(
    transaction: &tokio_postgres::Transaction<'_>,
) -> Result<(), StorageError> {
    let failed = |e: tokio_postgres::Error| {
        StorageError::Database(format!(
            "moving the audit log into audit_events failed: {}",
            describe(&e)
        ))
    };
    let blocks = transaction
        .query(
            "SELECT key, value FROM switchboard_kv WHERE tree = 'audit' AND length(key) = 8 ORDER BY key",
            &[],
        )
        .await
        .map_err(failed)?;
    for block in &blocks {
        let rows = crate::audit::rows_of_block(block.get::<_, &[u8]>(1))?;
        let columns = super::audit_events::Columns::of(&rows);
        transaction
            .execute(super::audit_events::INSERT, &columns.params())
            .await
            .map_err(failed)?;
    }
    transaction
        .execute(
            "DELETE FROM switchboard_kv WHERE tree = 'audit' AND length(key) = 8",
            &[],
        )
        .await
        .map_err(failed)?;
    Ok(())
}
