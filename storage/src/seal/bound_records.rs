//! Which records are bound to the keys ([`super::binding`]), the store's two doors to them (a value is
//! bound on its way in and checked on its way out), and the one-time binding of a store from an earlier
//! release, which only `switchboard migrate` runs ([`crate::layout`]).
//!
//! Bound: operators and the token-digest index, accounts (credentials included) and the API-key index,
//! schema heads and versions, payers, and the settings in `meta` (the manual clock, provisioning
//! fingerprints) except the token secret, which is sealed, and sealing binds it already.
//!
//! The binding is safe to run again: a record that verifies already is left as it is. Only once every
//! record and the audit chain's head are bound and flushed does the keyring say so
//! ([`super::Keyring::set_layout`]); from then on a record without its MAC is refused, and nothing short
//! of the master key can make the store look unbound again. The binding cannot tell a record of the
//! earlier release from one added since by whoever could write the store, so it answers what it bound,
//! naming the operators, for the operator who ran it to check.

use crate::engine::operations::{Operators, Settings, TokenEntry};
use crate::engine::Tree;
use crate::{trees, StorageError, Store};

/// What the one-time binding bound.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Bound {
    /// Records bound in each bound tree, by the tree's name, every bound tree listed.
    pub per_kind: Vec<(&'static str, u64)>,
    /// The names of the operators whose records were bound.
    pub operators: Vec<String>,
    /// For each operator token bound, the operator it names (once per token: a name twice is two tokens).
    pub token_holders: Vec<String>,
    /// Events of the audit log that carry no MAC, checked by hash up to the anchor sealed now.
    pub unkeyed_events: u64,
}

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

    /// The bound trees the store still writes itself, each with its name; the operators, their token
    /// index and the settings are the engine's ([`Store::bind_kept_records`]).
    fn bound_trees(&self) -> [(&'static str, &Tree); 5] {
        [
            (trees::ACCOUNTS, &self.accounts),
            (trees::CREDENTIAL_KEYS, &self.credential_keys),
            (trees::SCHEMA_HEADS, &self.schema_heads),
            (trees::SCHEMA_VERSIONS, &self.schema_versions),
            (trees::PAYERS, &self.payers),
        ]
    }

    /// Once, by `switchboard migrate`: binds every record of a store from before binding, and seals the
    /// audit chain's head with its last event as the anchor. Answers what it bound. The caller marks the
    /// keyring once this returns.
    pub(crate) async fn bind_records(&self) -> Result<Bound, StorageError> {
        let mut bound = Bound::default();
        self.bind_operators(&mut bound).await?;
        match &self.db {
            crate::engine::Db::Postgres(pg) => self.bind_tables(pg, &mut bound).await?,
            crate::engine::Db::Sled(_) => self.bind_trees(&mut bound)?,
        }
        self.bind_settings(&mut bound).await?;
        self.seal_bound_head(bound)
    }

    /// [`Store::bind_records`] of a new database, which holds no operator and no setting
    /// ([`crate::store::holds_records`]): what the store writes itself, without waiting on the engine.
    pub(crate) fn bind_new_records(&self) -> Result<Bound, StorageError> {
        let mut bound = Bound::default();
        bound.per_kind.push((trees::OPERATORS, 0));
        bound.per_kind.push((trees::OPERATOR_TOKENS, 0));
        self.bind_trees(&mut bound)?;
        bound.per_kind.push((trees::META, 0));
        self.seal_bound_head(bound)
    }

    /// Binds the operators and the token index, naming every operator bound and every operator a token
    /// bound names.
    async fn bind_operators(&self, bound: &mut Bound) -> Result<(), StorageError> {
        let engine = self.engine();
        let mut count = 0;
        for (name, stored) in engine.operators().await? {
            if self.is_bound(trees::OPERATORS, name.as_bytes(), &stored) {
                continue;
            }
            let record = self.bound(trees::OPERATORS, name.as_bytes(), &stored);
            engine.rewrite_operator(&name, record).await?;
            bound.operators.push(name);
            count += 1;
        }
        bound.per_kind.push((trees::OPERATORS, count));
        let mut count = 0;
        for (digest, stored) in engine.operator_tokens().await? {
            if self.is_bound(trees::OPERATOR_TOKENS, digest.as_bytes(), &stored) {
                continue;
            }
            let operator = String::from_utf8_lossy(&stored).into_owned();
            let token = TokenEntry {
                record: self.bound(trees::OPERATOR_TOKENS, digest.as_bytes(), &stored),
                digest,
                operator: operator.clone(),
            };
            engine.rewrite_operator_token(&token).await?;
            bound.token_holders.push(operator);
            count += 1;
        }
        bound.per_kind.push((trees::OPERATOR_TOKENS, count));
        Ok(())
    }

    /// Binds the settings, but the sealed token secret.
    async fn bind_settings(&self, bound: &mut Bound) -> Result<(), StorageError> {
        let engine = self.engine();
        let mut count = 0;
        for (name, stored) in engine.settings().await? {
            if !is_bound_in(trees::META, name.as_bytes())
                || self.is_bound(trees::META, name.as_bytes(), &stored)
            {
                continue;
            }
            let record = self.bound(trees::META, name.as_bytes(), &stored);
            engine.rewrite_setting(&name, record).await?;
            count += 1;
        }
        bound.per_kind.push((trees::META, count));
        Ok(())
    }

    /// Binds the records of [`Store::bound_trees`].
    fn bind_trees(&self, bound: &mut Bound) -> Result<(), StorageError> {
        let _open = self.group.gate.read().expect("write gate");
        for (name, tree) in self.bound_trees() {
            let mut count = 0;
            for entry in tree.iter() {
                let (key, stored) = entry?;
                if self.is_bound(name, &key, &stored) {
                    continue;
                }
                tree.insert(&key, self.bound(name, &key, &stored))?;
                count += 1;
            }
            bound.per_kind.push((name, count));
        }
        Ok(())
    }

    /// [`Store::bind_trees`] on PostgreSQL, where those families are tables of their own.
    async fn bind_tables(
        &self,
        pg: &crate::engine::postgres::Pg,
        bound: &mut Bound,
    ) -> Result<(), StorageError> {
        for (name, _) in self.bound_trees() {
            let mut count = 0;
            for row in pg.bound_rows(name).await?.unwrap_or_default() {
                if self.is_bound(name, &row.key, &row.record) {
                    continue;
                }
                let record = self.bound(name, &row.key, &row.record);
                pg.rebind(name, &row.key, &row.record, &record).await?;
                count += 1;
            }
            bound.per_kind.push((name, count));
        }
        Ok(())
    }

    /// Whether `stored` under `key` in `tree` verifies already (binding again is safe).
    fn is_bound(&self, tree: &'static str, key: &[u8], stored: &[u8]) -> bool {
        self.sealer.binder.check(tree, key, stored).is_some()
    }

    /// Seals the audit chain's head once every record is bound, and makes it all durable.
    fn seal_bound_head(&self, mut bound: Bound) -> Result<Bound, StorageError> {
        {
            let _open = self.group.gate.read().expect("write gate");
            self.group.chain.seal_head(&self.audit)?;
            bound.unkeyed_events = self.group.chain.head().anchor_seq;
        }
        self.flush_now()?;
        let total: u64 = bound.per_kind.iter().map(|(_, count)| count).sum();
        tracing::info!(
            records = total,
            operators = %bound.operators.join(", "),
            token_holders = %bound.token_holders.join(", "),
            "security records bound to the master key (switchboard migrate)"
        );
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
    use crate::seal::KeySource;
    use crate::{
        trees, AccountRecord, OperatorRecord, Role, StorageError, Store, TestEngine,
        DEFAULT_CACHE_BYTES,
    };

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
        assert!(store
            .operator_by_token_digest("d1")
            .await
            .unwrap()
            .is_some());
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
        assert_eq!(store.operator_by_token_digest("d2").await.unwrap(), None);
        assert_eq!(store.operator_by_token_digest("d3").await.unwrap(), None);
        // alice's own bound index entry copied under the chosen digest does not verify there either.
        let alices = store
            .raw_get_for_tests(trees::OPERATOR_TOKENS, b"d1")
            .unwrap();
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d2", alices.as_deref())
            .unwrap();
        assert_eq!(store.operator_by_token_digest("d2").await.unwrap(), None);
        // The forged record names no one in the list either: only alice is listed.
        let listed: Vec<String> = store
            .operators()
            .await
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
            store.account("a").await,
            Err(StorageError::Unbound { tree: "accounts" })
        ));
        assert_eq!(store.account_by_key("ka").await.unwrap(), None);
        store
            .raw_put_for_tests(trees::CREDENTIAL_KEYS, b"kb", Some(b"a"))
            .unwrap();
        assert_eq!(store.account_by_key("kb").await.unwrap(), None);
        // A record in the plain form, as the store held it before binding.
        store
            .raw_put_for_tests(trees::ACCOUNTS, b"b", Some(&encode(&account("b", "kb"))))
            .unwrap();
        assert!(store.account("b").await.is_err());
    }

    crate::on_both_engines!(
        an_operator_token_written_without_the_master_key_names_no_one,
        an_account_record_swapped_in_the_store_is_refused,
    );

    /// A forged operator `mallory` with the token digest `d3`, written unbound as an earlier release
    /// stored records, and `d4` pointed at the real operator alice.
    fn forge_operator(store: &crate::Store) {
        store
            .raw_put_for_tests(
                trees::OPERATORS,
                b"mallory",
                Some(&encode(&operator("mallory", "d3"))),
            )
            .unwrap();
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d3", Some(b"mallory"))
            .unwrap();
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d4", Some(b"alice"))
            .unwrap();
    }

    fn reopen(dir: &std::path::Path, choice: &crate::EngineChoice) -> Result<Store, StorageError> {
        Store::open(&crate::StorageConfig::embedded(dir).on(choice.clone()))
    }

    async fn migrate(dir: &std::path::Path, choice: &crate::EngineChoice) -> crate::Upgrade {
        Store::migrate(dir, DEFAULT_CACHE_BYTES, &KeySource::BesideData, choice)
            .await
            .unwrap()
            .expect("a store to migrate")
    }

    /// Issue 43, H1: whoever can write the store but lacks the master key puts back a keyring saved before
    /// the binding upgrade (the same keys, the check value of layout 0) and adds an operator token. No
    /// opening binds it: the start is refused, naming `switchboard migrate`, with nothing changed; that
    /// command binds only when an operator runs it, and names the operators it binds.
    async fn an_old_keyring_put_back_beside_a_forged_token_is_refused_and_the_token_names_no_one(
        engine: TestEngine,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let choice = engine.choice();
        let store = reopen(dir.path(), &choice).unwrap();
        store
            .create_operator(&operator("alice", "d1"), event())
            .await
            .unwrap();
        store.keyring_at_layout_for_tests(0).unwrap();
        forge_operator(&store);
        // And an account with its key as an earlier release stored them, unbound.
        store
            .raw_put_for_tests(trees::ACCOUNTS, b"c", Some(&encode(&account("c", "kc"))))
            .unwrap();
        store
            .raw_put_for_tests(trees::CREDENTIAL_KEYS, b"kc", Some(b"c"))
            .unwrap();
        store.close().unwrap();
        drop(store);

        for _ in 0..2 {
            let refused = reopen(dir.path(), &choice).err().expect("refused");
            assert!(matches!(refused, StorageError::Unconverted(_)), "{refused}");
            let message = refused.to_string();
            assert!(
                message.contains("switchboard migrate") && message.contains("not bound"),
                "{message}"
            );
            assert!(
                Store::check_key(dir.path(), &KeySource::BesideData, &choice).is_err(),
                "a node checks it before it serves"
            );
        }

        // The operator who runs migrate is told what it binds, the forgery by name.
        let upgrade = migrate(dir.path(), &choice).await;
        assert_eq!((upgrade.from, upgrade.to), (0, crate::STORE_LAYOUT));
        let bound = upgrade.bound.expect("bound at layout 0");
        assert_eq!(bound.operators, ["mallory"]);
        let mut holders = bound.token_holders.clone();
        holders.sort();
        assert_eq!(holders, ["alice", "mallory"]);
        let counted: std::collections::BTreeMap<_, _> = bound.per_kind.iter().cloned().collect();
        assert_eq!(counted[trees::OPERATORS], 1);
        assert_eq!(counted[trees::OPERATOR_TOKENS], 2);
        assert_eq!(counted[trees::ACCOUNTS], 1);
        assert_eq!(counted[trees::CREDENTIAL_KEYS], 1);
        // Migrated: the next start opens, and a record forged from then on names no one.
        let store = reopen(dir.path(), &choice).unwrap();
        store
            .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d5", Some(b"alice"))
            .unwrap();
        assert_eq!(store.operator_by_token_digest("d5").await.unwrap(), None);
        assert_eq!(store.account_by_key("kc").await.unwrap().unwrap().id, "c");
        assert!(store
            .operator_by_token_digest("d1")
            .await
            .unwrap()
            .is_some());
        assert_eq!(store.account_by_key("kc").await.unwrap().unwrap().id, "c");
        store.close().unwrap();
        drop(store);
        let again = migrate(dir.path(), &choice).await;
        assert_eq!((again.from, again.bound), (crate::STORE_LAYOUT, None));
    }

    /// A store at this release's layout whose keyring is put back at layout 1 (bound, secrets not yet
    /// converted) is refused too: a start converts nothing.
    async fn a_store_of_the_previous_layout_is_refused_until_migrated(engine: TestEngine) {
        let dir = tempfile::tempdir().unwrap();
        let choice = engine.choice();
        let store = reopen(dir.path(), &choice).unwrap();
        store.put_account(&account("a", "ka"), &[]).await.unwrap();
        store.keyring_at_layout_for_tests(1).unwrap();
        store.close().unwrap();
        drop(store);
        let refused = reopen(dir.path(), &choice).err().expect("refused");
        assert!(
            refused.to_string().contains("is at layout 1")
                && refused.to_string().contains("switchboard migrate"),
            "{refused}"
        );
        let upgrade = migrate(dir.path(), &choice).await;
        assert_eq!((upgrade.from, upgrade.bound), (1, None));
        let store = reopen(dir.path(), &choice).unwrap();
        assert!(store.account("a").await.unwrap().is_some());
    }

    /// A new store, and one whose keyring is newer than this release, at the two ends.
    async fn a_new_store_is_made_at_this_layout_and_a_newer_one_is_refused(engine: TestEngine) {
        let dir = tempfile::tempdir().unwrap();
        let choice = engine.choice();
        assert_eq!(
            Store::migrate(
                dir.path(),
                DEFAULT_CACHE_BYTES,
                &KeySource::BesideData,
                &choice
            )
            .await
            .unwrap()
            .map(|upgrade| upgrade.from),
            None,
            "no store: nothing to migrate, nothing made"
        );
        let store = reopen(dir.path(), &choice).unwrap();
        assert_eq!(store.sealer.keyring.layout(), crate::STORE_LAYOUT);
        store.put_account(&account("a", "ka"), &[]).await.unwrap();
        store
            .keyring_at_layout_for_tests(crate::STORE_LAYOUT + 1)
            .unwrap();
        store.close().unwrap();
        drop(store);
        let refused = reopen(dir.path(), &choice).err().expect("refused");
        assert!(refused.to_string().contains("newer"), "{refused}");
    }

    crate::on_both_engines!(
        an_old_keyring_put_back_beside_a_forged_token_is_refused_and_the_token_names_no_one,
        a_store_of_the_previous_layout_is_refused_until_migrated,
        a_new_store_is_made_at_this_layout_and_a_newer_one_is_refused,
    );
}
