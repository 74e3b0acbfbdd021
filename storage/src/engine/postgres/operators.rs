//! Operators and their token index as two tables. A unique index on `lower(name)` is what makes a name
//! one operator's in any case (names are ASCII letters, digits, `-` and `_`): a creation whose name is
//! taken inserts nothing (`ON CONFLICT DO NOTHING`) and fails whole. `operator` beside each token is the
//! name its bound entry carries, for a DBA and for the join of a sign-in; the store checks the entry's
//! MAC before it believes it.

use std::sync::Arc;

use tokio_postgres::types::{ToSql, Type};

use super::tables::Tables;
use super::Conn;
use crate::audit::NewEvent;
use crate::engine::operations::{OperatorEntry, Operators, TokenEntry, TokenHolder, TokenOf};
use crate::StorageError;

/// The tables, created by `switchboard migrate` (schema version 4).
pub(super) const CREATE: [&str; 3] = [
    "CREATE TABLE IF NOT EXISTS operators (
        name text PRIMARY KEY,
        record bytea NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS operators_name_any_case ON operators (lower(name))",
    "CREATE TABLE IF NOT EXISTS operator_tokens (
        token_digest text PRIMARY KEY,
        operator text NOT NULL,
        record bytea NOT NULL)",
];

/// Version 4 moves the rows earlier versions kept in `switchboard_kv`: a token's operator is the value of
/// its bound entry (the value, then a 32-byte tag).
pub(super) const MOVE: [&str; 3] = [
    "INSERT INTO operators (name, record)
        SELECT convert_from(key, 'UTF8'), value FROM switchboard_kv WHERE tree = 'operators'
        ON CONFLICT DO NOTHING",
    "INSERT INTO operator_tokens (token_digest, operator, record)
        SELECT convert_from(key, 'UTF8'),
            convert_from(CASE WHEN length(value) > 32
                THEN substring(value FROM 1 FOR length(value) - 32) ELSE value END, 'UTF8'),
            value
        FROM switchboard_kv WHERE tree = 'operator_tokens'
        ON CONFLICT DO NOTHING",
    "DELETE FROM switchboard_kv WHERE tree IN ('operators', 'operator_tokens')",
];

impl Operators for Tables<'_> {
    async fn operators(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT name, record FROM operators ORDER BY name COLLATE \"C\"";
                let rows = conn.client.query_typed(sql, &[]).await?;
                Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
            })
            .await
    }

    async fn operator_by_token(&self, digest: &str) -> Result<Option<TokenHolder>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT t.record, o.record FROM operator_tokens t
                    LEFT JOIN operators o ON o.name = t.operator WHERE t.token_digest = $1";
                let rows = conn
                    .client
                    .query_typed(sql, &[(&digest, Type::TEXT)])
                    .await?;
                Ok(rows.first().map(|row| TokenHolder {
                    token: row.get(0),
                    operator: row.get(1),
                }))
            })
            .await
    }

    async fn create_operator(
        &self,
        operator: &OperatorEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                let name = operator.name.as_str();
                let token = &operator.token;
                let insert =
                    "INSERT INTO operators (name, record) VALUES ($1, $2) ON CONFLICT DO NOTHING";
                let index = "INSERT INTO operator_tokens (token_digest, operator, record)
                    VALUES ($1, $2, $3)
                    ON CONFLICT (token_digest) DO UPDATE SET operator = $2, record = $3";
                let insert_params: [(&(dyn ToSql + Sync), Type); 2] =
                    [(&name, Type::TEXT), (&operator.record, Type::BYTEA)];
                let index_params: [(&(dyn ToSql + Sync), Type); 3] = [
                    (&token.digest, Type::TEXT),
                    (&token.operator, Type::TEXT),
                    (&token.record, Type::BYTEA),
                ];
                let (inserted, indexed) = futures::join!(
                    conn.client.execute_typed(insert, &insert_params),
                    conn.client.execute_typed(index, &index_params),
                );
                // In the order sent: after a failure, the statements behind it fail only because it did.
                let inserted = inserted?;
                indexed?;
                if inserted == 0 {
                    let sql = "SELECT name FROM operators WHERE lower(name) = lower($1)";
                    let rows = conn.client.query_typed(sql, &[(&name, Type::TEXT)]).await?;
                    let taken = rows.first().map_or(name.to_owned(), |row| row.get(0));
                    return Err(StorageError::OperatorExists(taken).into());
                }
                Ok(((), true))
            })
            .await
    }

    async fn delete_operator(
        &self,
        name: &str,
        token_of: TokenOf<'_>,
        events: &[NewEvent],
    ) -> Result<bool, StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                let sql = "DELETE FROM operators WHERE name = $1 RETURNING record";
                let rows = conn.client.query_typed(sql, &[(&name, Type::TEXT)]).await?;
                let Some(row) = rows.first() else {
                    // Nothing changed: the event is not kept either.
                    return Ok((false, false));
                };
                let digest = token_of(row.get(0))?;
                let sql = "DELETE FROM operator_tokens WHERE token_digest = $1";
                conn.client
                    .execute_typed(sql, &[(&digest, Type::TEXT)])
                    .await?;
                Ok((true, true))
            })
            .await
    }

    async fn operator_tokens(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT token_digest, record FROM operator_tokens
                    ORDER BY token_digest COLLATE \"C\"";
                let rows = conn.client.query_typed(sql, &[]).await?;
                Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
            })
            .await
    }

    async fn rewrite_operator(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, &[], |conn| {
                let record = &record;
                async move {
                    let sql = "UPDATE operators SET record = $2 WHERE name = $1";
                    conn.client
                        .execute_typed(sql, &[(&name, Type::TEXT), (record, Type::BYTEA)])
                        .await?;
                    Ok(((), false))
                }
            })
            .await
    }

    async fn rewrite_operator_token(&self, token: &TokenEntry) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, &[], |conn| async move {
                let sql =
                    "UPDATE operator_tokens SET operator = $2, record = $3 WHERE token_digest = $1";
                let params: [(&(dyn ToSql + Sync), Type); 3] = [
                    (&token.digest, Type::TEXT),
                    (&token.operator, Type::TEXT),
                    (&token.record, Type::BYTEA),
                ];
                conn.client.execute_typed(sql, &params).await?;
                Ok(((), false))
            })
            .await
    }
}
