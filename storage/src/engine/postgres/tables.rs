//! The PostgreSQL engine's operations: each family's own tables, and SQL that keeps its invariants (a
//! unique index, not a read before a write). Transactions are [`super::native`]'s.

/// The PostgreSQL engine, with the audit chain its transactions append to.
pub(crate) struct Tables<'a> {
    pub(crate) pg: &'a super::Pg,
    pub(crate) chain: &'a crate::audit::AuditChain,
}

/// Tests write as an attacker who can write the database would: to the table a tree's rows moved to.
#[cfg(any(test, feature = "test-hooks"))]
impl super::Pg {
    /// The table and key column of `tree`, once its rows are a table of their own.
    fn table_of(tree: &str) -> Option<(&'static str, &'static str)> {
        match tree {
            crate::trees::ACCOUNTS => Some(("accounts", "account_id")),
            crate::trees::CREDENTIAL_KEYS => Some(("credential_keys", "api_key")),
            crate::trees::SCHEMA_HEADS => Some(("schema_heads", "schema_id")),
            crate::trees::PAYERS => Some(("payers", "payer_name")),
            _ => None,
        }
    }

    /// The record under `key` of the table `tree` moved to; `None` for a tree still in `switchboard_kv`.
    pub(crate) fn raw_get_for_tests(
        &self,
        tree: &str,
        key: &[u8],
    ) -> Option<Result<Option<Vec<u8>>, crate::StorageError>> {
        if tree == crate::trees::SCHEMA_VERSIONS {
            return Some(self.raw_schema_version_for_tests(key));
        }
        let (table, column) = Self::table_of(tree)?;
        let sql = format!("SELECT record FROM {table} WHERE {column} = $1");
        let key = String::from_utf8_lossy(key).into_owned();
        let conn = self.shared();
        let rows = super::wait(conn.client.query(&sql, &[&key]));
        Some(
            rows.map(|rows| rows.first().map(|row| row.get(0)))
                .map_err(|e| crate::StorageError::Database(super::describe(&e))),
        )
    }

    /// Writes (or with `None` deletes) the record under `key` of the table `tree` moved to; `None` for a
    /// tree still in `switchboard_kv`. A key's account is read from its value, as `migrate` does.
    pub(crate) fn raw_put_for_tests(
        &self,
        tree: &str,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Option<Result<(), crate::StorageError>> {
        if tree == crate::trees::SCHEMA_VERSIONS {
            return Some(self.raw_put_schema_version_for_tests(key, value));
        }
        let (table, column) = Self::table_of(tree)?;
        let key = String::from_utf8_lossy(key).into_owned();
        let conn = self.shared();
        let done = match value {
            None => super::wait(
                conn.client
                    .execute(&format!("DELETE FROM {table} WHERE {column} = $1"), &[&key]),
            ),
            Some(value) if table == "credential_keys" => {
                let tag = crate::seal::binding::TAG;
                let plain = match value.len() > tag {
                    true => &value[..value.len() - tag],
                    false => value,
                };
                let account = String::from_utf8_lossy(plain);
                super::wait(conn.client.execute(
                    "INSERT INTO credential_keys (api_key, account_id, record) VALUES ($1, $2, $3) \
                     ON CONFLICT (api_key) DO UPDATE SET account_id = $2, record = $3",
                    &[&key, &account.as_ref(), &value],
                ))
            }
            Some(value) => super::wait(conn.client.execute(
                &format!(
                    "INSERT INTO {table} ({column}, record) VALUES ($1, $2) \
                     ON CONFLICT ({column}) DO UPDATE SET record = $2"
                ),
                &[&key, &value],
            )),
        };
        Some(
            done.map(drop)
                .map_err(|e| crate::StorageError::Database(super::describe(&e))),
        )
    }
}
