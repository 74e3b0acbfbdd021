//! Settings as the table `settings`: a row per setting, its name and its value as stored (the token
//! secret sealed, the others bound to the master key), so a DBA sees which are set and changes none.

use std::sync::Arc;

use tokio_postgres::types::Type;

use super::tables::Tables;
use super::Conn;
use crate::engine::operations::{ClockMove, Settings, MANUAL_CLOCK, PROVISIONED, TOKEN_SECRET};
use crate::StorageError;

/// The table, created by `switchboard migrate` (schema version 4).
pub(super) const CREATE: &str = "CREATE TABLE IF NOT EXISTS settings (
    name text PRIMARY KEY,
    record bytea NOT NULL)";

/// Version 4 moves the rows earlier versions kept in `switchboard_kv`, under the same names.
pub(super) const MOVE: [&str; 2] = [
    "INSERT INTO settings (name, record)
        SELECT convert_from(key, 'UTF8'), value FROM switchboard_kv WHERE tree = 'meta'
        ON CONFLICT DO NOTHING",
    "DELETE FROM switchboard_kv WHERE tree = 'meta'",
];

/// Writes a setting, or replaces it.
const UPSERT: &str = "INSERT INTO settings (name, record) VALUES ($1, $2)
    ON CONFLICT (name) DO UPDATE SET record = EXCLUDED.record";

impl Settings for Tables<'_> {
    async fn token_secret(&self) -> Result<Option<Vec<u8>>, StorageError> {
        self.setting(TOKEN_SECRET).await
    }

    async fn keep_token_secret(&self, sealed: Vec<u8>) -> Result<Vec<u8>, StorageError> {
        self.pg
            .audited(self.chain, &[], |conn| {
                let sealed = &sealed;
                async move {
                    // The row inserted, or the one that was there (the statement's snapshot does not see
                    // its own insert, so exactly one of the two answers).
                    let sql = "WITH kept AS (
                            INSERT INTO settings (name, record) VALUES ($1, $2)
                            ON CONFLICT (name) DO NOTHING RETURNING record)
                        SELECT record FROM kept UNION ALL SELECT record FROM settings WHERE name = $1";
                    let rows = conn
                        .client
                        .query_typed(sql, &[(&TOKEN_SECRET, Type::TEXT), (sealed, Type::BYTEA)])
                        .await?;
                    let kept = rows.first().map_or_else(|| sealed.clone(), |row| row.get(0));
                    Ok((kept, false))
                }
            })
            .await
    }

    async fn manual_clock(&self) -> Result<Option<Vec<u8>>, StorageError> {
        self.setting(MANUAL_CLOCK).await
    }

    async fn move_manual_clock(&self, moved: ClockMove<'_>) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, &[], |conn| async move {
                let sql = "SELECT record FROM settings WHERE name = $1";
                let rows = conn
                    .client
                    .query_typed(sql, &[(&MANUAL_CLOCK, Type::TEXT)])
                    .await?;
                let stored: Option<Vec<u8>> = rows.first().map(|row| row.get(0));
                let record = moved(stored.as_deref());
                conn.client
                    .execute_typed(
                        UPSERT,
                        &[(&MANUAL_CLOCK, Type::TEXT), (&record, Type::BYTEA)],
                    )
                    .await?;
                Ok(((), false))
            })
            .await
    }

    async fn provisioned(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.setting(&format!("{PROVISIONED}{key}")).await
    }

    async fn set_provisioned(&self, key: &str, record: Vec<u8>) -> Result<(), StorageError> {
        self.rewrite_setting(&format!("{PROVISIONED}{key}"), record)
            .await
    }

    async fn settings(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT name, record FROM settings ORDER BY name COLLATE \"C\"";
                let rows = conn.client.query_typed(sql, &[]).await?;
                Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
            })
            .await
    }

    async fn rewrite_setting(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, &[], |conn| {
                let record = &record;
                async move {
                    conn.client
                        .execute_typed(UPSERT, &[(&name, Type::TEXT), (record, Type::BYTEA)])
                        .await?;
                    Ok(((), false))
                }
            })
            .await
    }
}

impl Tables<'_> {
    async fn setting(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT record FROM settings WHERE name = $1";
                let rows = conn.client.query_typed(sql, &[(&name, Type::TEXT)]).await?;
                Ok(rows.first().map(|row| row.get(0)))
            })
            .await
    }
}
