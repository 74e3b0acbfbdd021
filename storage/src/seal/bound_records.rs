//! Which records are bound to the keys ([`super::binding`]), the store's two doors to them (a value is
//! bound on its way in and checked on its way out), and the one-time binding of a store from an earlier
//! release at its opening.
//!
//! Bound: operators and the token-digest index, accounts (credentials included) and the API-key index,
//! schema heads and versions, payers, and the settings in `meta` (the manual clock, provisioning
//! fingerprints) except the token secret, which is sealed, and sealing binds it already.
//!
//! The binding at opening is safe to run again: a record that verifies already is left as it is. Only once
//! every record and the audit chain's head are bound and flushed does the keyring say so
//! ([`super::Keyring::mark_bound`]); from then on a record without its MAC is refused, and nothing
//! short of the master key can make the store look unbound again.

use crate::engine::Tree;
use crate::{trees, StorageError, Store};

impl Store {
    /// `value` as stored under `key` in the bound tree `tree`.
    pub(crate) fn bound(&self, tree: &'static str, key: &[u8], value: &[u8]) -> Vec<u8> {
        self.sealer.binder.bind(tree, key, value)
    }

    /// The value stored under `key` in the bound tree `tree`, refused (and logged) without its MAC.
    pub(crate) fn unbound<'a>(
        &self,
        tree: &'static str,
        key: &[u8],
        stored: &'a [u8],
    ) -> Result<&'a [u8], StorageError> {
        self.sealer.binder.open(tree, key, stored)
    }

    /// The bound trees, each with its name.
    fn bound_trees(&self) -> [(&'static str, &Tree); 8] {
        [
            (trees::OPERATORS, &self.operators),
            (trees::OPERATOR_TOKENS, &self.operator_tokens),
            (trees::ACCOUNTS, &self.accounts),
            (trees::CREDENTIAL_KEYS, &self.credential_keys),
            (trees::SCHEMA_HEADS, &self.schema_heads),
            (trees::SCHEMA_VERSIONS, &self.schema_versions),
            (trees::PAYERS, &self.payers),
            (trees::META, &self.meta),
        ]
    }

    /// At opening, once: binds every record of a store from before binding, and seals the audit chain's
    /// head with its last event as the anchor. Answers how many records it bound.
    pub(crate) fn bind_records(&self) -> Result<u64, StorageError> {
        if self.sealer.keyring.bound() {
            return Ok(0);
        }
        let mut bound = 0;
        {
            let _open = self.group.gate.read().expect("write gate");
            for (name, tree) in self.bound_trees() {
                for entry in tree.iter() {
                    let (key, stored) = entry?;
                    if !is_bound_in(name, &key)
                        || self.sealer.binder.check(name, &key, &stored).is_some()
                    {
                        continue;
                    }
                    tree.insert(&key, self.bound(name, &key, &stored))?;
                    bound += 1;
                }
            }
            self.group.chain.seal_head(&self.audit)?;
        }
        self.flush_now()?;
        self.sealer.keyring.mark_bound()?;
        if bound > 0 {
            tracing::info!(
                records = bound,
                "security records bound to the master key (a one-time upgrade)"
            );
        }
        Ok(bound)
    }
}

/// Whether the record under `key` in `tree` is bound: every one of a bound tree but the sealed token
/// secret.
fn is_bound_in(tree: &str, key: &[u8]) -> bool {
    !(tree == trees::META && key == crate::meta::TOKEN_SECRET)
}

#[cfg(test)]
mod tests {
    use crate::codec::encode;
    use crate::{trees, AccountRecord, OperatorRecord, Role, StorageError, TestEngine};

    fn operator(name: &str, digest: &str) -> OperatorRecord {
        OperatorRecord {
            name: name.into(),
            role: Role::Admin,
            token_digest: digest.into(),
            created_at: chrono::Utc::now(),
        }
    }

    fn event() -> crate::audit::NewEvent {
        crate::audit::NewEvent {
            at: chrono::Utc::now(),
            actor: crate::audit::Actor::system(),
            action: "operator.create".into(),
            target: None,
            outcome: "ok".into(),
            ip: None,
            count: None,
        }
    }

    async fn an_operator_token_written_without_the_master_key_names_no_one(engine: TestEngine) {
        let (_dir, store) = engine.open_temp();
        store
            .create_operator(&operator("alice", "d1"), event())
            .await
            .unwrap();
        assert!(store.operator_by_token_digest("d1").unwrap().is_some());
        // A digest of a chosen token pointed at a real operator, and a whole operator made up.
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d2", Some(b"alice"))
            .unwrap();
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d3", Some(b"mallory"))
            .unwrap();
        store
            .raw_put_for_tests(
                trees::OPERATORS,
                b"mallory",
                Some(&encode(&operator("mallory", "d3"))),
            )
            .unwrap();
        assert_eq!(store.operator_by_token_digest("d2").unwrap(), None);
        assert_eq!(store.operator_by_token_digest("d3").unwrap(), None);
        // alice's own bound index entry copied under the chosen digest does not verify there either.
        let alices = store
            .raw_get_for_tests(trees::OPERATOR_TOKENS, b"d1")
            .unwrap();
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d2", alices.as_deref())
            .unwrap();
        assert_eq!(store.operator_by_token_digest("d2").unwrap(), None);
        // The forged record names no one in the list either: only alice is listed.
        let listed: Vec<String> = store
            .operators()
            .unwrap()
            .into_iter()
            .map(|operator| operator.name)
            .collect();
        assert_eq!(listed, ["alice"]);
    }

    fn account(id: &str, key: &str) -> AccountRecord {
        AccountRecord {
            id: id.into(),
            name: id.into(),
            daily_call_capacity: 10,
            timezone: "UTC".into(),
            webhook_url: None,
            webhook_secret: None,
            features: vec![],
            schemas: vec![],
            phone_book: vec![],
            credentials: vec![crate::CredentialRecord {
                id: format!("id-{key}"),
                environment: crate::Environment::Production,
                key: key.into(),
                secret_sha256: "00".into(),
                secret_argon2: String::new(),
                issued_at: chrono::Utc::now(),
            }],
            provider_name: None,
            retention_days: None,
            task_timeout_hours: None,
            dialer: None,
        }
    }

    async fn an_account_record_swapped_in_the_store_is_refused(engine: TestEngine) {
        let (_dir, store) = engine.open_temp();
        store.put_account(&account("a", "ka"), &[]).await.unwrap();
        store.put_account(&account("b", "kb"), &[]).await.unwrap();
        // b's record, bound as b's, put where a's was; and a's key index pointed at b.
        let b = store.raw_get_for_tests(trees::ACCOUNTS, b"b").unwrap();
        store
            .raw_put_for_tests(trees::ACCOUNTS, b"a", b.as_deref())
            .unwrap();
        assert!(matches!(
            store.account("a"),
            Err(StorageError::Unbound { tree: "accounts" })
        ));
        assert_eq!(store.account_by_key("ka").unwrap(), None);
        store
            .raw_put_for_tests(trees::CREDENTIAL_KEYS, b"kb", Some(b"a"))
            .unwrap();
        assert_eq!(store.account_by_key("kb").unwrap(), None);
        // A record in the plain form, as the store held it before binding.
        store
            .raw_put_for_tests(trees::ACCOUNTS, b"b", Some(&encode(&account("b", "kb"))))
            .unwrap();
        assert!(store.account("b").is_err());
    }

    crate::on_both_engines!(
        an_operator_token_written_without_the_master_key_names_no_one,
        an_account_record_swapped_in_the_store_is_refused,
    );

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn records_of_an_earlier_release_are_bound_at_the_next_opening_and_never_after() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = crate::Store::open(dir.path()).unwrap();
            store
                .raw_put_for_tests(
                    trees::OPERATORS,
                    b"alice",
                    Some(&encode(&operator("alice", "d1"))),
                )
                .unwrap();
            store
                .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d1", Some(b"alice"))
                .unwrap();
            store.sealer.keyring.as_before_binding_for_tests();
            store.close().unwrap();
        }
        let store = crate::Store::open(dir.path()).unwrap();
        assert_eq!(
            store.operator_by_token_digest("d1").unwrap().unwrap().name,
            "alice"
        );
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d2", Some(b"alice"))
            .unwrap();
        store.close().unwrap();
        drop(store);
        // The next opening binds nothing more: the keyring says the store is bound.
        let store = crate::Store::open(dir.path()).unwrap();
        assert_eq!(store.operator_by_token_digest("d2").unwrap(), None);
        assert!(store.operator_by_token_digest("d1").unwrap().is_some());
    }
}
