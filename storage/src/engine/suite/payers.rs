//! The payer directory.

use super::{audited, change_of};
use crate::codec::encode;
use crate::engine::operations::Payers;
use crate::{trees, PayerRecord, TestEngine};

fn payer(name: &str, phone: &str) -> PayerRecord {
    PayerRecord {
        name: name.into(),
        aliases: vec![],
        phone: Some(phone.into()),
        required_inputs: vec![],
        electronic: false,
        electronic_payer_id: None,
        member_id_prefixes: vec![],
        calling_hours: None,
        timezone: None,
    }
}

async fn a_put_payer_is_read_back_listed_in_name_order_and_audited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let bound =
        |record: &PayerRecord| store.bound(trees::PAYERS, record.name.as_bytes(), &encode(record));
    for name in ["Zeta", "aetna", "Aetna"] {
        let record = bound(&payer(name, "8005550100"));
        engine
            .put_payer(name, &record, &[change_of(name)])
            .await
            .unwrap();
    }
    let replaced = bound(&payer("Aetna", "8005550199"));
    engine.put_payer("Aetna", &replaced, &[]).await.unwrap();
    assert_eq!(engine.payer("Aetna").await.unwrap(), Some(replaced));
    assert_eq!(engine.payer("Cigna").await.unwrap(), None);
    let names: Vec<String> = engine
        .payers()
        .await
        .unwrap()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(names, ["Aetna", "Zeta", "aetna"], "in byte order");
    assert_eq!(
        audited(&store).await,
        ["account.change", "account.change", "account.change"]
    );
    assert_eq!(
        store
            .payer("Aetna")
            .await
            .unwrap()
            .unwrap()
            .phone
            .as_deref(),
        Some("8005550199")
    );
}

/// The store reads through the engine: an entry written without the master key is refused, alone and in
/// the directory.
async fn a_payer_written_by_hand_is_refused(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    store
        .put_payer(&payer("Aetna", "8005550100"), &[])
        .await
        .unwrap();
    assert_eq!(store.payers().await.unwrap().len(), 1);
    let forged = encode(&payer("Aetna", "9005550100"));
    store
        .raw_put_for_tests(trees::PAYERS, b"Aetna", Some(&forged))
        .unwrap();
    assert!(store.payer("Aetna").await.is_err());
    assert!(store.payers().await.is_err());
}

crate::on_both_engines!(
    a_put_payer_is_read_back_listed_in_name_order_and_audited,
    a_payer_written_by_hand_is_refused,
);

/// A database of schema version 3 kept schemas and payers as rows of `switchboard_kv`: `migrate` moves
/// them into their tables, a version's number read from its key, and the store reads and writes them there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_the_schemas_and_payers_of_a_version_3_database_into_their_tables() {
    use crate::engine::testing::admin_query;
    use crate::{PublishRule, SchemaDefinition, SchemaFlags, Store};
    let (url, config, _dir) = super::on_a_fresh_database();
    let store = Store::open(&config).unwrap();
    let definition = |label: &str| SchemaDefinition {
        name: Some(label.into()),
        request_type: "vob".into(),
        required_inputs: vec![],
        optional_inputs: vec![],
        follow_up: None,
        fields: vec![],
        electronic: Default::default(),
    };
    let now = chrono::Utc::now();
    let flags = SchemaFlags::default();
    for (id, first_version, label) in [("s", 1, "a"), ("s", 1, "b"), ("big", 70_000, "c")] {
        store
            .publish_schema(
                id,
                &definition(label),
                flags,
                PublishRule::Always { first_version },
                now,
                &[],
            )
            .await
            .unwrap();
    }
    store.retire_schema("s", &[]).await.unwrap();
    store
        .put_payer(&payer("Aetna", "8005550100"), &[])
        .await
        .unwrap();
    store.close().unwrap();
    drop(store);
    // As the trees kept them: a version's key is its schema's id, a zero byte, its number (u32 BE).
    for statement in [
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'schema_heads', convert_to(schema_id, 'UTF8'), record FROM schema_heads",
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'schema_versions',
                convert_to(schema_id, 'UTF8') || '\\x00'::bytea || int4send(version::integer), record
            FROM schema_versions",
        "INSERT INTO switchboard_kv (tree, key, value)
            SELECT 'payers', convert_to(payer_name, 'UTF8'), record FROM payers",
        "DELETE FROM schema_versions",
        "DELETE FROM schema_heads",
        "DELETE FROM payers",
        "UPDATE switchboard_schema SET version = 3",
    ] {
        admin_query(Some(&url), statement, &[]);
    }
    assert!(
        Store::open(&config).is_err(),
        "a version 3 database is refused"
    );

    assert_eq!(crate::migrate_postgres(&url, None).unwrap(), Some(3));
    let store = Store::open(&config).unwrap();
    let head = store.schema_head("s").await.unwrap().unwrap();
    assert_eq!((head.latest_version, head.retired), (2, true));
    let first = store.schema_version("s", 1).await.unwrap().unwrap();
    assert_eq!(first.definition, definition("a"));
    let big = store.schema_version("big", 70_000).await.unwrap().unwrap();
    assert_eq!(big.definition, definition("c"));
    assert_eq!(
        store
            .payer("Aetna")
            .await
            .unwrap()
            .unwrap()
            .phone
            .as_deref(),
        Some("8005550100")
    );
    let moved = ["schema_heads", "schema_versions", "payers"];
    assert_eq!(super::kv_rows_left(&url, &moved), 0);
    let versions: Vec<(String, i64)> = admin_query(
        Some(&url),
        "SELECT schema_id, version FROM schema_versions ORDER BY 1, 2",
        &[],
    )
    .iter()
    .map(|row| (row.get(0), row.get(1)))
    .collect();
    let expected = [("big", 70_000), ("s", 1), ("s", 2)].map(|(id, n)| (id.to_owned(), n));
    assert_eq!(versions, expected, "a DBA reads each version's number");
    // The next publish follows the moved head.
    let next = store
        .publish_schema(
            "s",
            &definition("d"),
            flags,
            PublishRule::Always { first_version: 1 },
            now,
            &[],
        )
        .await
        .unwrap();
    assert_eq!(next.latest_version, 3);
    store.close().unwrap();
}
