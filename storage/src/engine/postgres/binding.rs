//! Binding, at layout 0 (`switchboard migrate`), the records of the families that are tables of their
//! own: each row is read with the key its tree had, which its MAC covers, and written back bound.

use tokio_postgres::types::{ToSql, Type};

use super::{describe, Pg};
use crate::{trees, StorageError};

/// A row of a bound family: the tree's key it stands under, and its record as stored.
pub(crate) struct BoundRow {
    pub(crate) key: Vec<u8>,
    pub(crate) record: Vec<u8>,
}

/// The rows of `tree`'s table, each with its tree key; `None` for a tree that is not a table.
fn select(tree: &str) -> Option<&'static str> {
    Some(match tree {
        trees::ACCOUNTS => "SELECT convert_to(account_id, 'UTF8'), record FROM accounts",
        trees::CREDENTIAL_KEYS => "SELECT convert_to(api_key, 'UTF8'), record FROM credential_keys",
        trees::SCHEMA_HEADS => "SELECT convert_to(schema_id, 'UTF8'), record FROM schema_heads",
        trees::SCHEMA_VERSIONS => {
            "SELECT convert_to(schema_id, 'UTF8') || '\\x00'::bytea || \
             substring(int8send(version) FROM 5 FOR 4), record FROM schema_versions"
        }
        trees::PAYERS => "SELECT convert_to(payer_name, 'UTF8'), record FROM payers",
        _ => return None,
    })
}

fn failed(e: tokio_postgres::Error) -> StorageError {
    StorageError::Database(format!("binding the records failed: {}", describe(&e)))
}

impl Pg {
    /// Every row of the table `tree`'s records are kept in, in no order; `None` when they are not.
    pub(crate) async fn bound_rows(
        &self,
        tree: &str,
    ) -> Result<Option<Vec<BoundRow>>, StorageError> {
        let Some(sql) = select(tree) else {
            return Ok(None);
        };
        let rows = self.shared().client.query(sql, &[]).await.map_err(failed)?;
        Ok(Some(
            rows.iter()
                .map(|row| BoundRow {
                    key: row.get(0),
                    record: row.get(1),
                })
                .collect(),
        ))
    }

    /// Writes `record` in place of the row under `key` in the table of `tree`. A key entry's account is
    /// `plain`, the value the record binds.
    pub(crate) async fn rebind(
        &self,
        tree: &str,
        key: &[u8],
        plain: &[u8],
        record: &[u8],
    ) -> Result<(), StorageError> {
        let text = String::from_utf8_lossy(key).into_owned();
        let client = &self.shared().client;
        let done = match tree {
            trees::SCHEMA_VERSIONS if key.len() > 5 => {
                let (id, number) = key.split_at(key.len() - 5);
                let number = u32::from_be_bytes(number[1..].try_into().expect("four bytes"));
                let (id, number) = (String::from_utf8_lossy(id).into_owned(), i64::from(number));
                let params: [(&(dyn ToSql + Sync), Type); 3] = [
                    (&id, Type::TEXT),
                    (&number, Type::INT8),
                    (&record, Type::BYTEA),
                ];
                client
                    .execute_typed(
                        "UPDATE schema_versions SET record = $3 WHERE schema_id = $1 AND version = $2",
                        &params,
                    )
                    .await
            }
            trees::CREDENTIAL_KEYS => {
                let owner = String::from_utf8_lossy(plain).into_owned();
                let params: [(&(dyn ToSql + Sync), Type); 3] = [
                    (&text, Type::TEXT),
                    (&record, Type::BYTEA),
                    (&owner, Type::TEXT),
                ];
                client
                    .execute_typed(
                        "UPDATE credential_keys SET record = $2, account_id = $3 WHERE api_key = $1",
                        &params,
                    )
                    .await
            }
            _ => {
                let (table, column) = match tree {
                    trees::ACCOUNTS => ("accounts", "account_id"),
                    trees::SCHEMA_HEADS => ("schema_heads", "schema_id"),
                    trees::PAYERS => ("payers", "payer_name"),
                    _ => return Ok(()),
                };
                let params: [(&(dyn ToSql + Sync), Type); 2] =
                    [(&text, Type::TEXT), (&record, Type::BYTEA)];
                client
                    .execute_typed(
                        &format!("UPDATE {table} SET record = $2 WHERE {column} = $1"),
                        &params,
                    )
                    .await
            }
        };
        done.map(drop).map_err(failed)
    }
}
