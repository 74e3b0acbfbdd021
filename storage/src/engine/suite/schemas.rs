//! Schemas: heads and their versions.

use super::{audited, change_of};
use crate::codec::encode;
use crate::engine::operations::{SchemaWrite, Schemas, StoredSchema};
use crate::{
    trees, PublishRule, SchemaDefinition, SchemaFlags, SchemaHeadRecord, SchemaVersionRecord,
    StorageError, Store, TestEngine,
};

fn definition(label: &str) -> SchemaDefinition {
    SchemaDefinition {
        name: Some(label.into()),
        request_type: "vob".into(),
        required_inputs: vec![],
        optional_inputs: vec![],
        follow_up: None,
        fields: vec![],
        electronic: Default::default(),
    }
}

fn head(id: &str, latest_version: u32, retired: bool) -> SchemaHeadRecord {
    SchemaHeadRecord {
        id: id.into(),
        latest_version,
        retired,
        hidden: false,
    }
}

fn version(id: &str, version: u32, label: &str) -> SchemaVersionRecord {
    SchemaVersionRecord {
        id: id.into(),
        version,
        // Fixed, so that a version written twice is the same bytes.
        published_at: chrono::DateTime::UNIX_EPOCH,
        definition: definition(label),
    }
}

/// What publishing version `n` of `id` writes.
fn publishing(store: &Store, id: &str, n: u32, label: &str) -> SchemaWrite {
    store.schema_write(&head(id, n, false), Some(&version(id, n, label)))
}

async fn a_change_writes_the_head_and_its_version_together_and_is_audited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let first = publishing(&store, "s", 1, "a");
    let (first_head, first_version) = (first.head.clone(), first.version.clone());
    let new = |stored: Option<StoredSchema<'_>>| {
        assert!(stored.is_none(), "a new schema");
        Ok(("made", Some(publishing(&store, "s", 1, "a"))))
    };
    let answer = engine
        .change_schema("s", &new, &[change_of("s")])
        .await
        .unwrap();
    assert_eq!(answer, "made");
    assert_eq!(
        engine.schema_head("s").await.unwrap(),
        Some(first_head.clone())
    );
    assert_eq!(engine.schema_version("s", 1).await.unwrap(), first_version);
    assert_eq!(engine.schema_version("s", 2).await.unwrap(), None);
    assert_eq!(engine.schema_head("other").await.unwrap(), None);

    // The next change reads the head and its latest version as stored.
    let second = |stored: Option<StoredSchema<'_>>| {
        let stored = stored.expect("the schema");
        assert_eq!(stored.head, first_head.as_slice());
        assert_eq!(stored.latest, first_version.as_deref());
        Ok(((), Some(publishing(&store, "s", 2, "b"))))
    };
    engine
        .change_schema("s", &second, &[change_of("s")])
        .await
        .unwrap();
    let latest = engine.schema_version("s", 2).await.unwrap().unwrap();
    let third = |stored: Option<StoredSchema<'_>>| {
        assert_eq!(stored.unwrap().latest, Some(latest.as_slice()));
        Ok(((), None))
    };
    engine.change_schema("s", &third, &[]).await.unwrap();
    assert_eq!(engine.schema_version("s", 1).await.unwrap(), first_version);
    assert_eq!(
        store
            .schema_head("s")
            .await
            .unwrap()
            .unwrap()
            .latest_version,
        2
    );
    assert_eq!(audited(&store).await, ["account.change", "account.change"]);
}

async fn a_change_of_the_flags_alone_keeps_every_version(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    for n in [1, 2] {
        let publish = |_: Option<StoredSchema<'_>>| {
            Ok(((), Some(publishing(&store, "s", n, &format!("v{n}")))))
        };
        engine.change_schema("s", &publish, &[]).await.unwrap();
    }
    let retire =
        |_: Option<StoredSchema<'_>>| Ok(((), Some(store.schema_write(&head("s", 2, true), None))));
    engine
        .change_schema("s", &retire, &[change_of("s")])
        .await
        .unwrap();
    let read = store.schema_head("s").await.unwrap().unwrap();
    assert_eq!((read.latest_version, read.retired), (2, true));
    for n in [1, 2] {
        let kept = store.schema_version("s", n).await.unwrap().unwrap();
        assert_eq!(kept.definition, definition(&format!("v{n}")));
    }
    assert_eq!(audited(&store).await, ["account.change"]);
}

async fn a_change_that_writes_nothing_or_refuses_is_not_audited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let missing = |stored: Option<StoredSchema<'_>>| Ok((stored.is_none(), None));
    assert!(engine
        .change_schema("s", &missing, &[change_of("s")])
        .await
        .unwrap());
    assert_eq!(engine.schema_head("s").await.unwrap(), None);

    let publish = |_: Option<StoredSchema<'_>>| Ok(((), Some(publishing(&store, "s", 1, "a"))));
    engine.change_schema("s", &publish, &[]).await.unwrap();
    let before = engine.schema_head("s").await.unwrap();
    let refused = |_: Option<StoredSchema<'_>>| {
        Err::<((), Option<SchemaWrite>), _>(StorageError::Corrupt {
            kind: "schema head",
            reason: "refused by the suite".into(),
        })
    };
    let answer = engine.change_schema("s", &refused, &[change_of("s")]).await;
    assert!(matches!(answer, Err(StorageError::Corrupt { .. })));
    assert_eq!(engine.schema_head("s").await.unwrap(), before, "unchanged");
    assert_eq!(engine.schema_version("s", 2).await.unwrap(), None);
    assert!(audited(&store).await.is_empty(), "nothing audited");
}

/// The store reads through the engine: a head or a version written without the master key is refused,
/// and a version's record does not open under another version's number.
async fn a_schema_written_by_hand_is_refused(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let flags = SchemaFlags::default();
    let rule = PublishRule::Always { first_version: 1 };
    let now = chrono::Utc::now();
    for label in ["a", "b"] {
        store
            .publish_schema("s", &definition(label), flags, rule, now, &[])
            .await
            .unwrap();
    }
    let key = trees::schema_version_key("s", 1);
    let second = store
        .raw_get_for_tests(trees::SCHEMA_VERSIONS, &trees::schema_version_key("s", 2))
        .unwrap()
        .expect("version 2 where the engine keeps it");
    store
        .raw_put_for_tests(trees::SCHEMA_VERSIONS, &key, Some(&second))
        .unwrap();
    assert!(store.schema_version("s", 1).await.is_err(), "moved");
    store
        .raw_put_for_tests(
            trees::SCHEMA_VERSIONS,
            &key,
            Some(&encode(&version("s", 1, "forged"))),
        )
        .unwrap();
    assert!(store.schema_version("s", 1).await.is_err(), "unbound");
    store
        .raw_put_for_tests(
            trees::SCHEMA_HEADS,
            b"s",
            Some(&encode(&head("s", 2, false))),
        )
        .unwrap();
    assert!(store.schema_head("s").await.is_err());
    let publish = store
        .publish_schema("s", &definition("c"), flags, rule, now, &[])
        .await;
    assert!(publish.is_err(), "a publish reads the head first");
}

crate::on_both_engines!(
    a_change_writes_the_head_and_its_version_together_and_is_audited,
    a_change_of_the_flags_alone_keeps_every_version,
    a_change_that_writes_nothing_or_refuses_is_not_audited,
    a_schema_written_by_hand_is_refused,
);
