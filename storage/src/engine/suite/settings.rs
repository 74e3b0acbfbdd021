//! Settings: the token secret, the manual clock and the provisioned fingerprints.

use super::audited;
use crate::engine::operations::Settings;
use crate::{Store, TestEngine};

async fn the_first_token_secret_kept_stays(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    assert_eq!(engine.token_secret().await.unwrap(), None);
    let first = engine.keep_token_secret(b"first".to_vec()).await.unwrap();
    assert_eq!(first, b"first");
    let second = engine.keep_token_secret(b"second".to_vec()).await.unwrap();
    assert_eq!(second, b"first", "the one stored answers");
    assert_eq!(engine.token_secret().await.unwrap().unwrap(), b"first");
    assert!(audited(&store).await.is_empty());
}

async fn the_manual_clock_stores_what_the_store_makes_of_it(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    assert_eq!(engine.manual_clock().await.unwrap(), None);
    let first = |stored: Option<&[u8]>| {
        assert_eq!(stored, None);
        b"one".to_vec()
    };
    engine.move_manual_clock(&first).await.unwrap();
    let second = |stored: Option<&[u8]>| {
        assert_eq!(stored, Some(b"one".as_slice()), "the instant as stored");
        b"two".to_vec()
    };
    engine.move_manual_clock(&second).await.unwrap();
    assert_eq!(engine.manual_clock().await.unwrap().unwrap(), b"two");
    assert!(audited(&store).await.is_empty());
}

/// Moves that arrive together, in any order, leave the latest instant: each sees the others'.
async fn concurrent_moves_of_the_manual_clock_keep_the_latest(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let start = "2026-11-25T10:00:00Z"
        .parse::<chrono::DateTime<chrono::Utc>>()
        .unwrap();
    let instants: Vec<_> = [3, 7, 1, 6, 2, 5, 4, 0]
        .iter()
        .map(|hours| start + chrono::Duration::hours(*hours))
        .collect();
    let moves = instants.iter().map(|at| store.record_manual_clock(*at));
    for moved in futures::future::join_all(moves).await {
        moved.unwrap();
    }
    assert_eq!(
        store.manual_clock().await.unwrap(),
        Some(start + chrono::Duration::hours(7))
    );
}

async fn provisioned_fingerprints_are_kept_by_declaration(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    assert_eq!(engine.provisioned("account:a").await.unwrap(), None);
    engine
        .set_provisioned("account:a", b"print-1".to_vec())
        .await
        .unwrap();
    engine
        .set_provisioned("account:a", b"print-2".to_vec())
        .await
        .unwrap();
    engine
        .set_provisioned("schema:s", b"print-s".to_vec())
        .await
        .unwrap();
    assert_eq!(
        engine.provisioned("account:a").await.unwrap().unwrap(),
        b"print-2"
    );
    assert_eq!(engine.provisioned("account:b").await.unwrap(), None);
    engine.keep_token_secret(b"secret".to_vec()).await.unwrap();
    let names: Vec<String> = engine
        .settings()
        .await
        .unwrap()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        names,
        [
            "provisioned:account:a",
            "provisioned:schema:s",
            "token_secret"
        ],
        "every setting by its name, in order"
    );
    engine
        .rewrite_setting("provisioned:schema:s", b"rebound".to_vec())
        .await
        .unwrap();
    assert_eq!(
        engine.provisioned("schema:s").await.unwrap().unwrap(),
        b"rebound"
    );
    assert!(audited(&store).await.is_empty());
}

crate::on_both_engines!(
    the_first_token_secret_kept_stays,
    the_manual_clock_stores_what_the_store_makes_of_it,
    concurrent_moves_of_the_manual_clock_keep_the_latest,
    provisioned_fingerprints_are_kept_by_declaration,
);

/// A database of schema version 3 kept operators, their tokens and the settings as rows of
/// `switchboard_kv`: `migrate` moves them into their tables, and the store reads them there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_the_operators_and_settings_of_a_version_3_database_into_their_tables() {
    use crate::engine::testing::admin_query;
    let (url, config, _dir) = super::on_a_fresh_database();
    let store = Store::open(&config).unwrap();
    let alice = crate::OperatorRecord {
        name: "alice".into(),
        role: crate::Role::Auditor,
        token_digest: "d1".into(),
        created_at: chrono::Utc::now(),
    };
    let created = crate::audit::NewEvent {
        at: chrono::Utc::now(),
        actor: crate::audit::Actor::system(),
        action: "operator.create".into(),
        target: None,
        outcome: "ok".into(),
        ip: None,
        count: None,
    };
    store.create_operator(&alice, created).await.unwrap();
    let secret = store.token_secret_or_init(|| vec![7; 32]).await.unwrap();
    let at = "2026-11-25T10:00:00Z".parse().unwrap();
    store.record_manual_clock(at).await.unwrap();
    store
        .set_provisioned_fingerprint("account:a", "print")
        .await
        .unwrap();
    store.close().unwrap();
    drop(store);
    for statement in [
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'operators', convert_to(name, 'UTF8'), record FROM operators",
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'operator_tokens', convert_to(token_digest, 'UTF8'), record FROM operator_tokens",
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'meta', convert_to(name, 'UTF8'), record FROM settings",
        "DELETE FROM operator_tokens",
        "DELETE FROM operators",
        "DELETE FROM settings",
        "UPDATE switchboard_schema SET version = 3",
    ] {
        admin_query(Some(&url), statement, &[]);
    }
    super::refused_until_migrated(&url, &config);
    let store = Store::open(&config).unwrap();
    assert_eq!(
        store.operator_by_token_digest("d1").await.unwrap(),
        Some(alice)
    );
    assert_eq!(store.token_secret().await.unwrap(), Some(secret));
    assert_eq!(store.manual_clock().await.unwrap(), Some(at));
    assert_eq!(
        store
            .provisioned_fingerprint("account:a")
            .await
            .unwrap()
            .as_deref(),
        Some("print")
    );
    let moved = ["operators", "operator_tokens", "meta"];
    assert_eq!(super::kv_rows_left(&url, &moved), 0);
    let moved = admin_query(Some(&url), "SELECT operator FROM operator_tokens", &[]);
    assert_eq!(
        moved[0].get::<_, String>(0),
        "alice",
        "a token's operator read from its entry"
    );
    store.close().unwrap();
}

/// A database whose only records are settings (or operators) in their tables holds records: with its
/// keyring gone, it is refused rather than given a new keyring that would vouch for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_whose_settings_outlive_its_keyring_is_refused() {
    use crate::engine::testing::admin_query;
    for table in ["settings", "operators"] {
        let (url, config, _dir) = super::on_a_fresh_database();
        Store::open(&config).unwrap().close().unwrap();
        admin_query(Some(&url), "DELETE FROM switchboard_kv", &[]);
        admin_query(Some(&url), "DELETE FROM audit_events", &[]);
        let key = match table {
            "settings" => "manual_clock",
            _ => "mallory",
        };
        admin_query(
            Some(&url),
            &format!("INSERT INTO {table} (name, record) VALUES ($1, 'x')"),
            &[key],
        );
        let refused = Store::open(&config).err().expect("refused");
        assert!(
            refused.to_string().contains("keyring is missing"),
            "{table}: {refused}"
        );
    }
}
