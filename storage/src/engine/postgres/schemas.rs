//! Schemas as two tables: `schema_heads`, one row per schema, and `schema_versions`, one row per
//! published version, keyed by schema and version number. A change reads the head and its latest version
//! in one statement and writes both in the same transaction, with its audit events.

use std::sync::Arc;

use tokio_postgres::types::{ToSql, Type};

use super::tables::Tables;
use super::Conn;
use crate::audit::NewEvent;
use crate::engine::operations::{SchemaChange, Schemas, StoredSchema};
use crate::StorageError;

/// The tables, created by `switchboard migrate` (schema version 4). `version` is a `bigint` so that every
/// version number the server accepts is kept as it is.
pub(super) const CREATE: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS schema_heads (
        schema_id text PRIMARY KEY,
        record bytea NOT NULL)",
    "CREATE TABLE IF NOT EXISTS schema_versions (
        schema_id text NOT NULL,
        version bigint NOT NULL,
        record bytea NOT NULL,
        PRIMARY KEY (schema_id, version))",
];

/// Version 4 moves the rows earlier versions kept in `switchboard_kv`: a version's key is the schema's
/// id, a zero byte, then the version number as four bytes, most significant first.
pub(super) const MOVE: [&str; 3] = [
    "INSERT INTO schema_heads (schema_id, record)
        SELECT convert_from(key, 'UTF8'), value FROM switchboard_kv WHERE tree = 'schema_heads'
        ON CONFLICT DO NOTHING",
    "INSERT INTO schema_versions (schema_id, version, record)
        SELECT convert_from(substring(key FROM 1 FOR length(key) - 5), 'UTF8'),
            (get_byte(key, length(key) - 4)::bigint << 24) + (get_byte(key, length(key) - 3) << 16)
                + (get_byte(key, length(key) - 2) << 8) + get_byte(key, length(key) - 1),
            value
        FROM switchboard_kv WHERE tree = 'schema_versions'
        ON CONFLICT DO NOTHING",
    "DELETE FROM switchboard_kv WHERE tree IN ('schema_heads', 'schema_versions')",
];

impl Schemas for Tables<'_> {
    async fn schema_head(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT record FROM schema_heads WHERE schema_id = $1";
                let row = conn.client.query_typed(sql, &[(&id, Type::TEXT)]).await?;
                Ok(row.first().map(|row| row.get(0)))
            })
            .await
    }

    async fn schema_version(
        &self,
        id: &str,
        version: u32,
    ) -> Result<Option<Vec<u8>>, StorageError> {
        let version = i64::from(version);
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql =
                    "SELECT record FROM schema_versions WHERE schema_id = $1 AND version = $2";
                let params: [(&(dyn ToSql + Sync), Type); 2] =
                    [(&id, Type::TEXT), (&version, Type::INT8)];
                let row = conn.client.query_typed(sql, &params).await?;
                Ok(row.first().map(|row| row.get(0)))
            })
            .await
    }

    async fn change_schema<T>(
        &self,
        id: &str,
        change: SchemaChange<'_, T>,
        events: &[NewEvent],
    ) -> Result<T, StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                // The latest version is the highest: versions only count up. The store checks it is the
                // one the head names (a version's record is bound to its number).
                let read = "SELECT h.record, (SELECT v.record FROM schema_versions v
                        WHERE v.schema_id = h.schema_id ORDER BY v.version DESC LIMIT 1)
                    FROM schema_heads h WHERE h.schema_id = $1";
                let rows = conn.client.query_typed(read, &[(&id, Type::TEXT)]).await?;
                let stored: Option<(Vec<u8>, Option<Vec<u8>>)> =
                    rows.first().map(|row| (row.get(0), row.get(1)));
                let (value, write) = change(stored.as_ref().map(|(head, latest)| StoredSchema {
                    head,
                    latest: latest.as_deref(),
                }))?;
                let Some(write) = write else {
                    // Nothing changed, so nothing is audited either.
                    return Ok((value, false));
                };
                let head = "INSERT INTO schema_heads (schema_id, record) VALUES ($1, $2)
                    ON CONFLICT (schema_id) DO UPDATE SET record = EXCLUDED.record";
                let head_params: [(&(dyn ToSql + Sync), Type); 2] =
                    [(&id, Type::TEXT), (&write.head, Type::BYTEA)];
                match &write.version {
                    None => drop(conn.client.execute_typed(head, &head_params).await?),
                    Some(record) => {
                        let version = "INSERT INTO schema_versions (schema_id, version, record)
                            VALUES ($1, $2, $3)
                            ON CONFLICT (schema_id, version) DO UPDATE SET record = EXCLUDED.record";
                        let number = i64::from(write.latest_version);
                        let version_params: [(&(dyn ToSql + Sync), Type); 3] = [
                            (&id, Type::TEXT),
                            (&number, Type::INT8),
                            (record, Type::BYTEA),
                        ];
                        let (head, version) = futures::join!(
                            conn.client.execute_typed(head, &head_params),
                            conn.client.execute_typed(version, &version_params),
                        );
                        // In the order sent: a conflict on the first fails the second as well.
                        head?;
                        version?;
                    }
                }
                Ok((value, true))
            })
            .await
    }
}

/// Tests write as an attacker who can write the database would: a version's row by the tree's key.
#[cfg(any(test, feature = "test-hooks"))]
impl super::Pg {
    /// The schema id and version number of a key of the `schema_versions` tree.
    fn version_key(key: &[u8]) -> (String, i64) {
        let (id, number) = key.split_at(key.len() - 5);
        let number = u32::from_be_bytes(number[1..].try_into().expect("four bytes"));
        (String::from_utf8_lossy(id).into_owned(), i64::from(number))
    }

    /// The record of the version `key` names.
    pub(super) fn raw_schema_version_for_tests(
        &self,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>, StorageError> {
        let (id, version) = Self::version_key(key);
        let sql = "SELECT record FROM schema_versions WHERE schema_id = $1 AND version = $2";
        let rows = super::wait(self.shared().client.query(sql, &[&id, &version]));
        rows.map(|rows| rows.first().map(|row| row.get(0)))
            .map_err(|e| StorageError::Database(super::describe(&e)))
    }

    /// Writes (or with `None` deletes) the record of the version `key` names.
    pub(super) fn raw_put_schema_version_for_tests(
        &self,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), StorageError> {
        let (id, version) = Self::version_key(key);
        let conn = self.shared();
        let done = match value {
            None => super::wait(conn.client.execute(
                "DELETE FROM schema_versions WHERE schema_id = $1 AND version = $2",
                &[&id, &version],
            )),
            Some(value) => super::wait(conn.client.execute(
                "INSERT INTO schema_versions (schema_id, version, record) VALUES ($1, $2, $3) \
                 ON CONFLICT (schema_id, version) DO UPDATE SET record = $3",
                &[&id, &version, &value],
            )),
        };
        done.map(drop)
            .map_err(|e| StorageError::Database(super::describe(&e)))
    }
}
