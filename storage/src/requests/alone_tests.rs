//! A store of layout 3, with requests created before batches were stored whole, is refused by an ordinary
//! opening, and after `migrate` every id its clients hold reads, lists, changes and purges as before.

use chrono::Utc;

use super::alone::store_as_layout_three;
use super::tests::{batch, ids_of, record, scope_of, stored};
use super::*;
use crate::audit::{Actor, NewEvent, Target};
use crate::seal::KeySource;
use crate::{
    DueEntry, Environment, RequestBatchId, RequestState, StorageConfig, TestEngine,
    DEFAULT_CACHE_BYTES,
};

crate::on_both_engines!(
    a_store_of_layout_three_is_refused_until_migrate_and_its_request_ids_keep_working,
);

fn purge_event(id: &RequestId) -> NewEvent {
    NewEvent {
        at: Utc::now(),
        actor: Actor::system(),
        action: "request.purge".into(),
        target: Some(Target::new("request", id.as_str())),
        outcome: "ok".into(),
        ip: None,
        count: None,
    }
}

/// Every request of `scope` listed in pages of `size`, newest first.
async fn listed(store: &Store, scope: &Scope, size: usize) -> Vec<RequestId> {
    let (from, to) = (
        DateTime::from_timestamp_micros(0).unwrap(),
        DateTime::from_timestamp_micros(10_000).unwrap(),
    );
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .list_requests(scope, from, to, cursor.as_ref(), size)
            .await
            .unwrap();
        assert!(page.len() <= size);
        let Some(last) = page.last() else {
            return seen;
        };
        cursor = Some(Cursor {
            created_at: last.created_at,
            request_id: last.id.clone(),
        });
        seen.extend(ids_of(&page));
    }
}

/// The batch `batch` in pages of one, newest first.
async fn batch_listed(store: &Store, scope: &Scope, batch: &RequestBatchId) -> Vec<RequestId> {
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.list_batch(scope, batch, cursor.as_ref(), 1);
        let page = page.await.unwrap();
        let Some(last) = page.last() else {
            return seen;
        };
        cursor = Some(Cursor {
            created_at: last.created_at,
            request_id: last.id.clone(),
        });
        seen.extend(ids_of(&page));
    }
}

async fn a_store_of_layout_three_is_refused_until_migrate_and_its_request_ids_keep_working(
    engine: TestEngine,
) {
    let dir = tempfile::tempdir().unwrap();
    let choice = engine.choice();
    let config = StorageConfig::embedded(dir.path()).on(choice.clone());
    let store = Store::open(&config).unwrap();
    let early = batch(3, 1_000);
    let late = batch(4, 3_000);
    stored(&store, early.clone()).await;
    stored(&store, late.clone()).await;
    // A batch of layout 3 between the two: plain UUID v7 ids (one that looks like a batch member's, one
    // that looks like a batch's own), one request waiting for its day, one done.
    let old_batch = RequestBatchId::from("5b0c8a4e-2f7d-4c1b-9a3e-6d5f4e3c2b1a");
    let waiting = RequestRecord {
        id: RequestId::from("0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f"),
        batch_id: old_batch.clone(),
        ..record("old", Environment::Production, None, 2_000)
    };
    let done = RequestRecord {
        id: RequestId::from("0190f5e2-7c1a-7d3e-9f00-2b3c4d5e0000"),
        batch_id: old_batch.clone(),
        state: RequestState::Success,
        run: Some(Default::default()),
        completed_at: Some(Utc::now()),
        ..record("old", Environment::Production, None, 2_000)
    };
    // And one purged by an earlier release, whose entries its purge left (its id looked like a member's).
    let purged = RequestRecord {
        id: RequestId::from("0190f5e2-7c1a-7d3e-9f00-3c4d5e6f7a8b"),
        batch_id: RequestBatchId::from("6c1d9b5f-3a8e-4d2c-8b4f-7e6a5f4d3c2b"),
        ..record("old", Environment::Production, None, 2_000)
    };
    for old in [&waiting, &done, &purged] {
        store_as_layout_three(&store, old);
    }
    store.group.requests.remove(purged.id.as_bytes()).unwrap();
    store.keyring_at_layout_for_tests(3).unwrap();
    store.close().unwrap();
    drop(store);

    let refused = Store::open(&config).err().expect("layout 3 is refused");
    let refusal = refused.to_string();
    assert!(refusal.contains("switchboard migrate"), "{refusal}");
    assert!(refusal.contains("is at layout 3"), "{refusal}");
    let key = KeySource::BesideData;
    let upgrade = Store::migrate(dir.path(), DEFAULT_CACHE_BYTES, &key, &choice)
        .await
        .unwrap()
        .expect("a store to migrate");
    assert_eq!((upgrade.from, upgrade.to), (3, 4));
    assert_eq!(upgrade.batches_named, 1);
    assert_eq!(
        upgrade.stale_entries_removed, 2,
        "the purged one's listing and due entries"
    );
    let store = Store::open(&config).unwrap();
    let batch_index = store.db.open_tree(crate::trees::BATCH_INDEX).unwrap();
    assert!(batch_index.is_empty().unwrap(), "layout 3's index is gone");

    // Read, listed and due under the ids its clients hold.
    assert_eq!(store.request(&waiting.id).await.unwrap().unwrap(), waiting);
    assert_eq!(store.request(&done.id).await.unwrap().unwrap(), done);
    assert_eq!(store.request(&purged.id).await.unwrap(), None);
    let production = scope_of();
    let mut expected: Vec<RequestId> = ids_of(&late).into_iter().rev().collect();
    // Newest first, and by id under one creation instant.
    expected.extend([done.id.clone(), waiting.id.clone()]);
    expected.extend(ids_of(&early).into_iter().rev());
    for size in [1, 2, 3, 5, 100] {
        assert_eq!(
            listed(&store, &production, size).await,
            expected,
            "pages of {size}"
        );
    }
    let old_ids = vec![done.id.clone(), waiting.id.clone()];
    assert_eq!(batch_listed(&store, &production, &old_batch).await, old_ids);
    let sandbox = Scope::new("acme", Environment::Sandbox);
    assert!(store
        .list_batch(&sandbox, &old_batch, None, 10)
        .await
        .unwrap()
        .is_empty());
    let due: Vec<DueEntry> = store.due_by(waiting.due_at).await.unwrap();
    assert_eq!(
        due.len(),
        3 + 4 + 1,
        "the waiting one, and not the purged one"
    );
    let alone = DueEntry {
        due_at: waiting.due_at,
        request_id: waiting.id.clone(),
        batch: None,
    };
    assert!(due.contains(&alone));
    let changed = store
        .commit_update(&waiting.id, |r| r.internal_tag = Some("changed".into()))
        .await
        .unwrap();
    assert_eq!(changed.id, waiting.id);

    // Purged under its id: gone from every read, its batch keeping the other until it goes too.
    let gone = store.purge_request(&waiting.id, purge_event(&waiting.id));
    assert!(gone.await.unwrap().is_some());
    store.finish_purges().await.unwrap();
    assert_eq!(store.request(&waiting.id).await.unwrap(), None);
    assert_eq!(store.due_by(waiting.due_at).await.unwrap().len(), 3 + 4);
    let without: Vec<RequestId> = expected
        .into_iter()
        .filter(|id| *id != waiting.id)
        .collect();
    assert_eq!(listed(&store, &production, 2).await, without);
    let left = batch_listed(&store, &production, &old_batch).await;
    assert_eq!(left, std::slice::from_ref(&done.id));
    assert_eq!(store.request(&done.id).await.unwrap().unwrap(), done);
    let gone = store.purge_request(&done.id, purge_event(&done.id));
    assert!(gone.await.unwrap().is_some());
    store.finish_purges().await.unwrap();
    assert!(batch_listed(&store, &production, &old_batch)
        .await
        .is_empty());
    assert!(
        store.intake_head(&old_batch).unwrap().is_none(),
        "its head went with its last"
    );
    assert_eq!(
        store.request(&early[0].id).await.unwrap().unwrap(),
        early[0]
    );
}
