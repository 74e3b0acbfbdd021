//! The PostgreSQL engine's operations: each family's own tables, and SQL that keeps its invariants (a
//! unique index, not a read before a write). Transactions are [`super::native`]'s.

/// The PostgreSQL engine, with the audit chain its transactions append to.
pub(crate) struct Tables<'a> {
    pub(crate) pg: &'a super::Pg,
    pub(crate) chain: &'a crate::audit::AuditChain,
}

/// The tables whose rows a keyring vouches for: a database that holds one of them holds records.
const HOLDING_RECORDS: &[&str] = &[
    "accounts",
    "credential_keys",
    "operators",
    "operator_tokens",
    "payers",
    "schema_heads",
    "settings",
];

impl super::Pg {
    /// Whether a table of [`HOLDING_RECORDS`] holds a row ([`crate::store::holds_records`]): asked by an
    /// opening, which waits for its statements.
    pub(crate) fn tables_hold_records(&self) -> Result<bool, crate::StorageError> {
        let any: Vec<String> = HOLDING_RECORDS
            .iter()
            .map(|table| format!("EXISTS (SELECT 1 FROM {table})"))
            .collect();
        let sql = format!("SELECT {}", any.join(" OR "));
        let row = super::wait(self.shared().client.query_one(&sql, &[]))
            .map_err(|e| crate::StorageError::Database(super::describe(&e)))?;
        Ok(row.get(0))
    }
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
            crate::trees::OPERATORS => Some(("operators", "name")),
            crate::trees::OPERATOR_TOKENS => Some(("operator_tokens", "token_digest")),
            crate::trees::META => Some(("settings", "name")),
            _ => None,
        }
    }

    /// The column of an index table that names the record an entry points to.
    fn named_by(table: &str) -> Option<&'static str> {
        match table {
            "credential_keys" => Some("account_id"),
            "operator_tokens" => Some("operator"),
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
    /// tree still in `switchboard_kv`. An index entry's account or operator is read from its value, as
    /// `migrate` does.
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
            Some(value) => match Self::named_by(table) {
                // An index entry: the record it names, in the clear before its MAC, beside it.
                Some(named) => super::wait(
                    conn.client.execute(
                        &format!(
                            "INSERT INTO {table} ({column}, {named}, record) VALUES ($1, $2, $3) \
                         ON CONFLICT ({column}) DO UPDATE SET {named} = $2, record = $3"
                        ),
                        &[
                            &key,
                            &String::from_utf8_lossy(crate::engine::operations::named_in(value))
                                .into_owned(),
                            &value,
                        ],
                    ),
                ),
                None => super::wait(conn.client.execute(
                    &format!(
                        "INSERT INTO {table} ({column}, record) VALUES ($1, $2) \
                         ON CONFLICT ({column}) DO UPDATE SET record = $2"
                    ),
                    &[&key, &value],
                )),
            },
        };
        Some(
            done.map(drop)
                .map_err(|e| crate::StorageError::Database(super::describe(&e))),
        )
    }
}
