//! Accounts and their API keys as two tables. The key index's primary key is what makes an API key one
//! account's: a key another account holds is not inserted (`ON CONFLICT DO NOTHING`), and the write
//! fails whole. `account_id` beside each key is for deleting an account's keys with it; the account a key
//! names is read from its bound record.

use std::sync::Arc;

use tokio_postgres::types::{ToSql, Type};

use super::native::Attempt;
use super::tables::Tables;
use super::Conn;
use crate::audit::NewEvent;
use crate::engine::operations::{AccountChange, AccountEntry, Accounts};
use crate::StorageError;

/// The tables, created by `switchboard migrate` (schema version 4).
pub(super) const CREATE: [&str; 3] = [
    "CREATE TABLE IF NOT EXISTS accounts (
        account_id text PRIMARY KEY,
        record bytea NOT NULL)",
    "CREATE TABLE IF NOT EXISTS credential_keys (
        api_key text PRIMARY KEY,
        account_id text NOT NULL,
        record bytea NOT NULL)",
    "CREATE INDEX IF NOT EXISTS credential_keys_account ON credential_keys (account_id)",
];

/// Version 4 moves the rows earlier versions kept in `switchboard_kv`: a key's account is the value of
/// its bound entry (the value, then a 32-byte tag).
pub(super) const MOVE: [&str; 3] = [
    "INSERT INTO accounts (account_id, record)
        SELECT convert_from(key, 'UTF8'), value FROM switchboard_kv WHERE tree = 'accounts'
        ON CONFLICT DO NOTHING",
    "INSERT INTO credential_keys (api_key, account_id, record)
        SELECT convert_from(key, 'UTF8'),
            convert_from(CASE WHEN length(value) > 32 THEN substring(value FROM 1 FOR length(value) - 32)
                ELSE value END, 'UTF8'), value
        FROM switchboard_kv WHERE tree = 'credential_keys'
        ON CONFLICT DO NOTHING",
    "DELETE FROM switchboard_kv WHERE tree IN ('accounts', 'credential_keys')",
];

impl Accounts for Tables<'_> {
    async fn account(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT record FROM accounts WHERE account_id = $1";
                let row = conn.client.query_typed(sql, &[(&id, Type::TEXT)]).await?;
                Ok(row.first().map(|row| row.get(0)))
            })
            .await
    }

    async fn accounts(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT account_id, record FROM accounts ORDER BY account_id";
                let rows = conn.client.query_typed(sql, &[]).await?;
                Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
            })
            .await
    }

    async fn account_key(&self, api_key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.pg
            .read(async |conn: Arc<Conn>| {
                let sql = "SELECT record FROM credential_keys WHERE api_key = $1";
                let row = conn
                    .client
                    .query_typed(sql, &[(&api_key, Type::TEXT)])
                    .await?;
                Ok(row.first().map(|row| row.get(0)))
            })
            .await
    }

    async fn put_account(
        &self,
        account: &AccountEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                put(&conn, account).await?;
                Ok(((), true))
            })
            .await
    }

    async fn change_account(
        &self,
        id: &str,
        change: AccountChange<'_>,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                let sql = "SELECT record FROM accounts WHERE account_id = $1";
                let rows = conn.client.query_typed(sql, &[(&id, Type::TEXT)]).await?;
                let Some(row) = rows.first() else {
                    return Err(StorageError::AccountMissing(id.to_owned()).into());
                };
                put(&conn, &change(row.get(0))?).await?;
                Ok(((), true))
            })
            .await
    }

    async fn delete_account(&self, id: &str, events: &[NewEvent]) -> Result<bool, StorageError> {
        self.pg
            .audited(self.chain, events, |conn| async move {
                let keys = "DELETE FROM credential_keys WHERE account_id = $1";
                let account = "DELETE FROM accounts WHERE account_id = $1";
                let by_id = [(&id as &(dyn ToSql + Sync), Type::TEXT)];
                let (keys, account) = futures::join!(
                    conn.client.execute_typed(keys, &by_id),
                    conn.client.execute_typed(account, &by_id),
                );
                keys?;
                let existed = account? > 0;
                // Nothing changed, so nothing is audited either.
                Ok((existed, existed))
            })
            .await
    }

    async fn rewrite_account(&self, id: &str, record: Vec<u8>) -> Result<(), StorageError> {
        self.pg
            .audited(self.chain, &[], |conn| {
                let record = &record;
                async move {
                    let sql = "UPDATE accounts SET record = $2 WHERE account_id = $1";
                    conn.client
                        .execute_typed(sql, &[(&id, Type::TEXT), (record, Type::BYTEA)])
                        .await?;
                    Ok(((), false))
                }
            })
            .await
    }
}

/// Writes `account` in place of whatever its id held: its previous keys go, its keys are claimed, and a
/// key another account holds fails the attempt. The three statements leave together.
async fn put(conn: &Conn, account: &AccountEntry) -> Attempt<()> {
    let id = account.id.as_str();
    let mut keys: Vec<&str> = Vec::with_capacity(account.keys.len());
    let mut records: Vec<&[u8]> = Vec::with_capacity(account.keys.len());
    for key in &account.keys {
        if !keys.contains(&key.api_key.as_str()) {
            keys.push(&key.api_key);
            records.push(&key.record);
        }
    }
    let upsert = "INSERT INTO accounts (account_id, record) VALUES ($1, $2)
        ON CONFLICT (account_id) DO UPDATE SET record = EXCLUDED.record";
    let release = "DELETE FROM credential_keys WHERE account_id = $1";
    let claim = "INSERT INTO credential_keys (api_key, account_id, record)
        SELECT key, $2, record FROM unnest($1::text[], $3::bytea[]) AS k(key, record)
        ON CONFLICT (api_key) DO NOTHING";
    let upsert_params: [(&(dyn ToSql + Sync), Type); 2] =
        [(&id, Type::TEXT), (&account.record, Type::BYTEA)];
    let release_params: [(&(dyn ToSql + Sync), Type); 1] = [(&id, Type::TEXT)];
    let claim_params: [(&(dyn ToSql + Sync), Type); 3] = [
        (&keys, Type::TEXT_ARRAY),
        (&id, Type::TEXT),
        (&records, Type::BYTEA_ARRAY),
    ];
    let (upserted, released, claimed) = futures::join!(
        conn.client.execute_typed(upsert, &upsert_params),
        conn.client.execute_typed(release, &release_params),
        conn.client.execute_typed(claim, &claim_params),
    );
    upserted?;
    released?;
    if claimed? < keys.len() as u64 {
        return Err(StorageError::CredentialKeyTaken.into());
    }
    Ok(())
}
