//! Accounts and their API keys.

use super::{audited, change_of};
use crate::engine::operations::{AccountEntry, Accounts};
use crate::{AccountRecord, CredentialRecord, Environment, StorageError, Store, TestEngine};

/// An account holding the API keys `keys`.
pub(crate) fn account(id: &str, keys: &[&str]) -> AccountRecord {
    AccountRecord {
        id: id.into(),
        name: format!("{id} clinic"),
        daily_call_capacity: 10,
        timezone: "UTC".into(),
        webhook_url: None,
        webhook_secret: None,
        features: vec![],
        schemas: vec![],
        phone_book: vec![],
        credentials: keys
            .iter()
            .map(|key| CredentialRecord {
                id: format!("id-{key}"),
                environment: Environment::Production,
                key: (*key).into(),
                secret_sha256: String::new(),
                secret_argon2: "argon".into(),
                issued_at: chrono::Utc::now(),
            })
            .collect(),
        provider_name: None,
        retention_days: None,
        task_timeout_hours: None,
        dialer: None,
    }
}

fn entry(store: &Store, account: &AccountRecord) -> AccountEntry {
    store.account_entry(account, crate::codec::encode(account))
}

/// The account id a key's bound entry names.
async fn owner(store: &Store, key: &str) -> Option<String> {
    let stored = store.engine().account_key(key).await.unwrap()?;
    let id = store
        .unbound(crate::trees::CREDENTIAL_KEYS, key.as_bytes(), &stored)
        .unwrap();
    Some(String::from_utf8(id.to_vec()).unwrap())
}

async fn a_put_account_is_read_back_with_its_keys_and_audited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let a = entry(&store, &account("a", &["k1", "k2"]));
    engine.put_account(&a, &[change_of("a")]).await.unwrap();
    engine
        .put_account(&entry(&store, &account("b", &[])), &[change_of("b")])
        .await
        .unwrap();
    assert_eq!(engine.account("a").await.unwrap(), Some(a.record.clone()));
    assert_eq!(engine.account("missing").await.unwrap(), None);
    let ids: Vec<String> = engine
        .accounts()
        .await
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["a", "b"], "in id order");
    assert_eq!(owner(&store, "k2").await.as_deref(), Some("a"));
    assert_eq!(audited(&store).await, ["account.change", "account.change"]);

    // Replacing it releases the keys it no longer holds.
    engine
        .put_account(&entry(&store, &account("a", &["k2", "k3"])), &[])
        .await
        .unwrap();
    assert_eq!(owner(&store, "k1").await, None);
    assert_eq!(owner(&store, "k3").await.as_deref(), Some("a"));
}

async fn a_key_another_account_holds_fails_the_whole_put(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    engine
        .put_account(
            &entry(&store, &account("a", &["shared"])),
            &[change_of("a")],
        )
        .await
        .unwrap();
    let taken = engine
        .put_account(
            &entry(&store, &account("b", &["fresh", "shared"])),
            &[change_of("b")],
        )
        .await;
    assert!(matches!(taken, Err(StorageError::CredentialKeyTaken)));
    assert_eq!(
        engine.account("b").await.unwrap(),
        None,
        "no half-made account"
    );
    assert_eq!(owner(&store, "fresh").await, None, "no half-written index");
    assert_eq!(owner(&store, "shared").await.as_deref(), Some("a"));
    assert_eq!(audited(&store).await, ["account.change"], "nothing audited");
    // The same key twice in one account is that account's.
    engine
        .put_account(&entry(&store, &account("c", &["twice", "twice"])), &[])
        .await
        .unwrap();
    assert_eq!(owner(&store, "twice").await.as_deref(), Some("c"));
}

async fn a_change_reads_the_record_it_replaces(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let unchanged = |_: &[u8]| -> Result<AccountEntry, StorageError> { unreachable!() };
    let missing = engine
        .change_account("a", &unchanged, &[change_of("a")])
        .await;
    assert!(matches!(missing, Err(StorageError::AccountMissing(id)) if id == "a"));
    assert!(audited(&store).await.is_empty());

    engine
        .put_account(&entry(&store, &account("a", &["k1"])), &[])
        .await
        .unwrap();
    let add_key = |current: &[u8]| {
        let mut record = store.stored_account("a", current)?;
        assert_eq!(record.credentials.len(), 1, "the record as stored");
        record
            .credentials
            .push(account("a", &["k2"]).credentials.remove(0));
        Ok(entry(&store, &record))
    };
    engine
        .change_account("a", &add_key, &[change_of("a")])
        .await
        .unwrap();
    assert_eq!(owner(&store, "k1").await.as_deref(), Some("a"));
    assert_eq!(owner(&store, "k2").await.as_deref(), Some("a"));
    assert_eq!(
        store.account("a").await.unwrap().unwrap().credentials.len(),
        2
    );
    assert_eq!(audited(&store).await, ["account.change"]);
}

async fn a_delete_takes_the_keys_and_is_audited_only_when_it_deleted(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    engine
        .put_account(&entry(&store, &account("a", &["k"])), &[])
        .await
        .unwrap();
    assert!(engine.delete_account("a", &[change_of("a")]).await.unwrap());
    assert_eq!(engine.account("a").await.unwrap(), None);
    assert_eq!(owner(&store, "k").await, None);
    assert!(!engine.delete_account("a", &[change_of("a")]).await.unwrap());
    assert_eq!(audited(&store).await, ["account.change"]);
}

async fn a_rewrite_replaces_the_record_alone_unaudited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    engine
        .put_account(&entry(&store, &account("a", &["k"])), &[])
        .await
        .unwrap();
    let mut renamed = account("a", &["k"]);
    renamed.name = "renamed".into();
    let record = entry(&store, &renamed).record;
    engine.rewrite_account("a", record.clone()).await.unwrap();
    assert_eq!(engine.account("a").await.unwrap(), Some(record));
    assert_eq!(owner(&store, "k").await.as_deref(), Some("a"));
    assert!(audited(&store).await.is_empty());
}

crate::on_both_engines!(
    a_put_account_is_read_back_with_its_keys_and_audited,
    a_key_another_account_holds_fails_the_whole_put,
    a_change_reads_the_record_it_replaces,
    a_delete_takes_the_keys_and_is_audited_only_when_it_deleted,
    a_rewrite_replaces_the_record_alone_unaudited,
);

/// A database of schema version 3 kept accounts as rows of `switchboard_kv`: `migrate` moves them into
/// their tables, and the store reads them there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_the_accounts_of_a_version_3_database_into_their_tables() {
    use crate::engine::testing::admin_query;
    let (url, config, _dir) = version_3_database_with_an_account().await;
    super::refused_until_migrated(&url, &config);
    let store = Store::open(&config).unwrap();
    assert_eq!(store.account("a").await.unwrap().unwrap().name, "a clinic");
    assert_eq!(store.account_by_key("k1").await.unwrap().unwrap().id, "a");
    assert_eq!(
        super::kv_rows_left(&url, &["accounts", "credential_keys"]),
        0
    );
    let moved = admin_query(Some(&url), "SELECT account_id FROM credential_keys", &[]);
    assert_eq!(
        moved[0].get::<_, String>(0),
        "a",
        "a key's account read from its entry"
    );
    store.close().unwrap();
}

/// A database of schema version 3 holding account `a` with the key `k1`, and the configuration of a store
/// on it.
async fn version_3_database_with_an_account() -> (String, crate::StorageConfig, tempfile::TempDir) {
    let (url, config, dir) = super::on_a_fresh_database();
    let store = Store::open(&config).unwrap();
    store
        .put_account(&account("a", &["k1"]), &[])
        .await
        .unwrap();
    store.close().unwrap();
    drop(store);
    as_version_3(&url);
    (url, config, dir)
}

/// Puts the accounts of the database at `url` back where version 3 kept them.
fn as_version_3(url: &str) {
    for statement in [
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'accounts', convert_to(account_id, 'UTF8'), record FROM accounts",
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'credential_keys', convert_to(api_key, 'UTF8'), record FROM credential_keys",
        "DELETE FROM credential_keys",
        "DELETE FROM accounts",
        "UPDATE switchboard_schema SET version = 3",
    ] {
        crate::engine::testing::admin_query(Some(url), statement, &[]);
    }
}

/// Moving rows out of `switchboard_kv` under a node of the release before, which still reads and writes
/// them there, would lose what it writes: `migrate` refuses while a node holds the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_nothing_while_a_node_serves_the_database() {
    use crate::engine::testing::admin_query;
    let (url, _config, _dir) = version_3_database_with_an_account().await;
    admin_query(
        Some(&url),
        "INSERT INTO switchboard_lease (name, holder, expires_at) \
         VALUES ('orchestrator', 'node-a', now() + interval '1 minute') \
         ON CONFLICT (name) DO UPDATE SET holder = 'node-a', expires_at = EXCLUDED.expires_at",
        &[],
    );
    let refused = crate::migrate_postgres(&url, None).unwrap_err().to_string();
    assert!(
        refused.contains("node-a") && refused.contains("stop every node"),
        "{refused}"
    );
    assert_eq!(super::kv_rows_left(&url, &["accounts"]), 1, "nothing moved");

    admin_query(
        Some(&url),
        "UPDATE switchboard_lease SET expires_at = now() - interval '1 second'",
        &[],
    );
    assert_eq!(crate::migrate_postgres(&url, None).unwrap(), Some(3));
}
