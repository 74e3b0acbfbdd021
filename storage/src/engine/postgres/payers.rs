//! The payer directory as a table, one row per payer by its canonical name. An entry and its audit events
//! are written in one transaction.

use std::sync::Arc;

use tokio_postgres::types::{ToSql, Type};

use super::tables::Tables;
use super::Conn;
use crate::audit::NewEvent;
use crate::engine::operations::Payers;
use crate::StorageError;

/// The table, created by `switchboard migrate` (schema version 4).
pub(super) const CREATE: [&str; 1] = ["CREATE TABLE IF NOT EXISTS payers (
        payer_name text PRIMARY KEY,
        record bytea NOT NULL)"];

/// Version 4 moves the rows earlier versions kept in `switchboard_kv`.
pub(super) const MOVE: [&str; 2] = [
    "INSERT INTO payers (payer_name, record)
        SELECT convert_from(key, 'UTF8'), value FROM switchboard_kv WHERE tree = 'payers'
        ON CONFLICT DO NOTHING",
    "DELETE FROM switchboard_kv WHERE tree = 'payers'",
];

impl Payers for Tables<'_> {
    async fn payer(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT record FROM payers WHERE payer_name = $1";
                let row = conn.client.query_typed(sql, &[(&name, Type::TEXT)]).await?;
                Ok(row.first().map(|row| row.get(0)))
            })
            .await
    }

    async fn payers(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                // Byte order, as sled's tree kept them.
                let sql = "SELECT payer_name, record FROM payers ORDER BY payer_name COLLATE \"C\"";
                let rows = conn.client.query_typed(sql, &[]).await?;
                Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
            })
            .await
    }

    async fn put_payer(
        &self,
        name: &str,
        record: &[u8],
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                let sql = "INSERT INTO payers (payer_name, record) VALUES ($1, $2)
                    ON CONFLICT (payer_name) DO UPDATE SET record = EXCLUDED.record";
                let params: [(&(dyn ToSql + Sync), Type); 2] =
                    [(&name, Type::TEXT), (&record, Type::BYTEA)];
                conn.client.execute_typed(sql, &params).await?;
                Ok(((), true))
            })
            .await
    }
}
