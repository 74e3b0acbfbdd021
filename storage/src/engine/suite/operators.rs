//! Operators and their token index.

use super::audited;
use crate::audit::{Actor, NewEvent, Target};
use crate::codec::decode;
use crate::engine::operations::{Operators, TokenEntry, TokenHolder};
use crate::{trees, OperatorRecord, Role, StorageError, Store, TestEngine};

fn operator(name: &str, digest: &str) -> OperatorRecord {
    OperatorRecord {
        name: name.into(),
        role: Role::Support,
        token_digest: digest.into(),
        created_at: chrono::Utc::now(),
    }
}

fn event(action: &'static str, name: &str) -> NewEvent {
    NewEvent {
        at: chrono::Utc::now(),
        actor: Actor::operator("suite"),
        action: action.into(),
        target: Some(Target::new("operator", name)),
        outcome: "ok".into(),
        ip: None,
        count: None,
    }
}

/// Creates `name` with the token digest `digest` through the engine, audited.
async fn create(store: &Store, name: &str, digest: &str) -> Result<(), StorageError> {
    let entry = store.operator_entry(&operator(name, digest));
    store
        .engine()
        .create_operator(&entry, &[event("operator.create", name)])
        .await
}

/// The token digest of `name`'s record as stored, checked as the store checks it.
fn token_of(store: &Store, name: &str) -> impl Fn(&[u8]) -> Result<String, StorageError> + Sync {
    let store = store.clone();
    let name = name.to_owned();
    move |stored: &[u8]| {
        let record: OperatorRecord =
            decode(store.unbound(trees::OPERATORS, name.as_bytes(), stored)?)?;
        Ok(record.token_digest)
    }
}

async fn names(store: &Store) -> Vec<String> {
    let listed = store.engine().operators().await.unwrap();
    listed.into_iter().map(|(name, _)| name).collect()
}

async fn a_created_operator_is_listed_found_by_its_token_and_audited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let bob = store.operator_entry(&operator("bob", "d2"));
    store
        .engine()
        .create_operator(&bob, &[event("operator.create", "bob")])
        .await
        .unwrap();
    create(&store, "alice", "d1").await.unwrap();
    create(&store, "Zed", "d3").await.unwrap();
    assert_eq!(
        names(&store).await,
        ["Zed", "alice", "bob"],
        "in byte order"
    );
    let found = store.engine().operator_by_token("d2").await.unwrap();
    assert_eq!(
        found,
        Some(TokenHolder {
            token: bob.token.record.clone(),
            operator: Some(bob.record.clone()),
        })
    );
    assert_eq!(store.engine().operator_by_token("d9").await.unwrap(), None);
    assert_eq!(
        store
            .operator_by_token_digest("d2")
            .await
            .unwrap()
            .unwrap()
            .name,
        "bob"
    );
    assert_eq!(audited(&store).await, ["operator.create"; 3]);
}

async fn a_name_taken_in_any_case_fails_the_create_whole(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    create(&store, "alice", "d1").await.unwrap();
    for taken in ["Alice", "ALICE", "alice"] {
        let refused = create(&store, taken, "d2").await;
        assert!(
            matches!(&refused, Err(StorageError::OperatorExists(name)) if name == "alice"),
            "{taken}: {refused:?}"
        );
    }
    assert_eq!(names(&store).await, ["alice"], "no half-made operator");
    assert_eq!(
        store.engine().operator_by_token("d2").await.unwrap(),
        None,
        "no token indexed"
    );
    assert_eq!(
        audited(&store).await,
        ["operator.create"],
        "nothing audited"
    );
    create(&store, "alice-2", "d2").await.unwrap();
}

async fn of_two_creations_of_one_name_at_once_one_wins(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let (lower, upper) =
        futures::join!(create(&store, "carol", "d1"), create(&store, "CAROL", "d2"));
    let refused = match (lower, upper) {
        (Ok(()), refused) | (refused, Ok(())) => refused,
        both => panic!("neither was created: {both:?}"),
    };
    assert!(
        matches!(refused, Err(StorageError::OperatorExists(_))),
        "{refused:?}"
    );
    assert_eq!(names(&store).await.len(), 1);
    assert_eq!(audited(&store).await, ["operator.create"]);
}

async fn a_delete_takes_the_token_and_is_audited_only_when_it_deleted(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    create(&store, "alice", "d1").await.unwrap();
    create(&store, "bob", "d2").await.unwrap();
    let engine = store.engine();
    let deleted = engine
        .delete_operator(
            "alice",
            &token_of(&store, "alice"),
            &[event("operator.delete", "alice")],
        )
        .await;
    assert!(deleted.unwrap());
    assert_eq!(names(&store).await, ["bob"]);
    assert_eq!(engine.operator_by_token("d1").await.unwrap(), None);
    assert!(engine.operator_by_token("d2").await.unwrap().is_some());
    let again = engine
        .delete_operator(
            "alice",
            &token_of(&store, "alice"),
            &[event("operator.delete", "alice")],
        )
        .await;
    assert!(!again.unwrap());
    assert_eq!(
        audited(&store).await,
        ["operator.create", "operator.create", "operator.delete"]
    );
    // The name is free again, in any case.
    create(&store, "ALICE", "d3").await.unwrap();
}

async fn a_delete_whose_record_is_refused_changes_nothing(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    create(&store, "alice", "d1").await.unwrap();
    let refuse = |_: &[u8]| -> Result<String, StorageError> {
        Err(StorageError::Unbound {
            tree: trees::OPERATORS,
        })
    };
    let refused = store
        .engine()
        .delete_operator("alice", &refuse, &[event("operator.delete", "alice")])
        .await;
    assert!(
        matches!(refused, Err(StorageError::Unbound { .. })),
        "{refused:?}"
    );
    assert_eq!(names(&store).await, ["alice"], "the record stays");
    assert!(store
        .operator_by_token_digest("d1")
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        audited(&store).await,
        ["operator.create"],
        "nothing audited"
    );
}

async fn a_token_naming_no_operator_finds_its_entry_alone(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let ghost = store.bound(trees::OPERATOR_TOKENS, b"d9", b"ghost");
    store
        .raw_put_for_tests(trees::OPERATOR_TOKENS, b"d9", Some(&ghost))
        .unwrap();
    let found = store.engine().operator_by_token("d9").await.unwrap();
    assert_eq!(
        found,
        Some(TokenHolder {
            token: ghost,
            operator: None
        })
    );
    assert_eq!(store.operator_by_token_digest("d9").await.unwrap(), None);
}

async fn a_rewrite_replaces_a_record_alone_unaudited(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    create(&store, "alice", "d1").await.unwrap();
    let engine = store.engine();
    let mut promoted = operator("alice", "d1");
    promoted.role = Role::Admin;
    let record = store.operator_entry(&promoted).record;
    engine
        .rewrite_operator("alice", record.clone())
        .await
        .unwrap();
    assert_eq!(
        engine.operators().await.unwrap(),
        [("alice".into(), record)]
    );
    let token = TokenEntry {
        digest: "d1".into(),
        operator: "alice".into(),
        record: b"rewritten".to_vec(),
    };
    engine.rewrite_operator_token(&token).await.unwrap();
    assert_eq!(
        engine.operator_tokens().await.unwrap(),
        [("d1".into(), b"rewritten".to_vec())]
    );
    assert_eq!(audited(&store).await, ["operator.create"]);
}

crate::on_both_engines!(
    a_created_operator_is_listed_found_by_its_token_and_audited,
    a_name_taken_in_any_case_fails_the_create_whole,
    of_two_creations_of_one_name_at_once_one_wins,
    a_delete_takes_the_token_and_is_audited_only_when_it_deleted,
    a_delete_whose_record_is_refused_changes_nothing,
    a_token_naming_no_operator_finds_its_entry_alone,
    a_rewrite_replaces_a_record_alone_unaudited,
);
