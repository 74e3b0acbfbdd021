//! Lone creates sharing a batch: ids, client batches, listings, the due index, idempotency and purging.

use super::tests::{record, scope, stored};
use super::*;
use crate::audit::{Actor, NewEvent, Target};
use crate::group::Job;
use crate::TestEngine;

crate::on_both_engines!(
    lone_creates_of_one_group_share_one_stored_batch_and_each_is_its_own_clients_batch,
    a_lone_create_replaying_a_claimed_internal_id_is_declined_and_takes_no_place,
    purging_a_lone_request_keeps_the_others_of_its_shared_batch,
);

/// Applies the lone creates of `records` in one group, as the flusher does with writes queued together,
/// and answers each as stored, in order.
async fn one_group(store: &Store, records: &[RequestRecord]) -> Vec<RequestRecord> {
    let (mut jobs, answers): (Vec<Box<dyn Job>>, Vec<_>) = records
        .iter()
        .map(|record| store.lone_job(Arc::new(vec![record.clone()]), None, u32::MAX))
        .unzip();
    store.group.apply(&mut jobs).unwrap();
    for job in jobs {
        job.settle(Ok(()));
    }
    let mut stored = Vec::new();
    for answer in answers {
        let mut one = answer.await.unwrap().into_result().unwrap();
        stored.push(Arc::make_mut(&mut one).remove(0));
    }
    stored
}

/// Keys of `tree` (every one: a test store holds only what the test wrote).
fn keys(tree: &crate::engine::Tree) -> usize {
    tree.iter().count()
}

async fn lone_creates_of_one_group_share_one_stored_batch_and_each_is_its_own_clients_batch(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    let production = scope(Environment::Production);
    let mut tomorrow = record("d", Environment::Production, None, 1_400);
    tomorrow.due_date = tomorrow.due_date.succ_opt().unwrap();
    tomorrow.due_at += chrono::Duration::days(1);
    let given = vec![
        record("a", Environment::Production, Some("claim-a"), 1_000),
        record("b", Environment::Production, None, 1_100),
        record("s", Environment::Sandbox, None, 1_200),
        record("c", Environment::Production, None, 1_300),
        tomorrow,
    ];
    let stored = one_group(&store, &given).await;

    let shared = |record: &RequestRecord| record.id.batch_place().unwrap();
    let (batch, _) = shared(&stored[0]);
    assert_eq!(
        [0, 1, 3].map(|n| shared(&stored[n])),
        [1, 2, 3].map(|place| (batch.clone(), place)),
        "one scope and day: one batch, in the order the creates ran"
    );
    assert_ne!(shared(&stored[2]).0, batch, "another environment");
    assert_ne!(shared(&stored[4]).0, batch, "another day");
    assert_eq!(keys(&store.group.due), 3, "one due entry per shared batch");
    assert_eq!(keys(&store.group.request_index), 3);
    for (record, given) in stored.iter().zip(&given) {
        assert_ne!(record.id, given.id, "the store names a lone request");
        assert_eq!(record.batch_id.as_str(), record.id.as_str());
        assert_eq!(
            store.request(&record.id).await.unwrap().as_ref(),
            Some(record)
        );
    }
    assert!(
        [1, 3].map(|n| stored[n].created_at) == [stored[0].created_at; 2],
        "a batch's members share its creation instant"
    );
    assert_eq!(stored[2].created_at, given[2].created_at);

    // To its client, each is a batch of its own; the shared batch is nobody's.
    let b = &stored[1];
    assert_eq!(
        store
            .list_batch(&production, &b.batch_id, None, 10)
            .await
            .unwrap(),
        vec![b.clone()]
    );
    let after_b = Cursor {
        created_at: b.created_at,
        request_id: b.id.clone(),
    };
    assert!(store
        .list_batch(&production, &b.batch_id, Some(&after_b), 10)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .list_batch(&scope(Environment::Sandbox), &b.batch_id, None, 10)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .list_batch(&production, &batch, None, 10)
        .await
        .unwrap()
        .is_empty());

    // Listings and the due index see every member.
    let listed = store
        .list_requests(
            &production,
            DateTime::from_timestamp_micros(0).unwrap(),
            DateTime::from_timestamp_micros(10_000).unwrap(),
            None,
            10,
        )
        .await
        .unwrap();
    assert_eq!(
        listed.iter().map(|r| &r.id).collect::<Vec<_>>(),
        [&stored[4].id, &stored[3].id, &stored[1].id, &stored[0].id],
        "newest batch first, a batch's members last place first"
    );
    let due = store.due_by(stored[0].due_at).await.unwrap();
    assert_eq!(due.len(), 4, "today's four, across both environments");
    assert_eq!(
        store
            .request_by_internal_id(&production, "claim-a")
            .await
            .unwrap()
            .unwrap()
            .id,
        stored[0].id
    );
    let day = stored[0].due_date;
    assert_eq!(
        store.bookings(&production, day, day).await.unwrap()[&day],
        3
    );

    // Once every member has started, the shared batch retires as any batch does.
    for record in &stored[..4] {
        store
            .commit_update(&record.id, |r| r.run = Some(Default::default()))
            .await
            .unwrap();
    }
    let due_work = store.due_work(stored[0].due_at, 10, |_| false).await;
    assert!(due_work.unwrap().is_empty(), "all started");
    assert!(store.due_by(stored[0].due_at).await.unwrap().is_empty());
    assert!(
        store
            .list_batch(&production, &batch, None, 10)
            .await
            .unwrap()
            .is_empty(),
        "still nobody's batch once retired"
    );
    assert_eq!(
        store
            .list_batch(&production, &b.batch_id, None, 10)
            .await
            .unwrap()[0]
            .id,
        b.id
    );
}

async fn a_lone_create_replaying_a_claimed_internal_id_is_declined_and_takes_no_place(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    let production = scope(Environment::Production);
    stored(
        &store,
        vec![record(
            "first",
            Environment::Production,
            Some("claim"),
            1_000,
        )],
    )
    .await;
    let mut replay = vec![record(
        "again",
        Environment::Production,
        Some("claim"),
        2_000,
    )];
    let committed = store
        .commit_requests_from(Arc::new(replay.clone()), None, u32::MAX)
        .await;
    assert!(matches!(
        committed,
        Err(StorageError::InternalIdClaimed(key)) if key == "claim"
    ));
    let day = replay[0].due_date;
    assert_eq!(
        store.bookings(&production, day, day).await.unwrap()[&day],
        1
    );
    assert_eq!(keys(&store.group.due), 1, "no shared batch was written");

    // A full day declines it too, with nothing written.
    replay[0].internal_id = None;
    let committed = store.commit_requests_from(Arc::new(replay), None, 1).await;
    assert!(matches!(committed, Err(StorageError::CapacityTaken)));
    assert_eq!(keys(&store.group.intake), 1);
}

async fn purging_a_lone_request_keeps_the_others_of_its_shared_batch(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let production = scope(Environment::Production);
    let stored = one_group(
        &store,
        &[
            record("a", Environment::Production, None, 1_000),
            record("b", Environment::Production, Some("claim-b"), 1_100),
            record("c", Environment::Production, None, 1_200),
        ],
    )
    .await;
    let b = &stored[1];
    let event = NewEvent {
        at: chrono::Utc::now(),
        actor: Actor::system(),
        action: "request.purge".into(),
        target: Some(Target::new("request", b.id.as_str())),
        outcome: "ok".into(),
        ip: None,
        count: None,
    };
    store.purge_request(&b.id, event).await.unwrap().unwrap();
    store.finish_purges().await.unwrap();
    assert!(store.request(&b.id).await.unwrap().is_none());
    assert!(store
        .list_batch(&production, &b.batch_id, None, 10)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .request_by_internal_id(&production, "claim-b")
        .await
        .unwrap()
        .is_none());
    for other in [&stored[0], &stored[2]] {
        assert_eq!(
            store.request(&other.id).await.unwrap().as_ref(),
            Some(other)
        );
        assert_eq!(
            store
                .list_batch(&production, &other.batch_id, None, 10)
                .await
                .unwrap(),
            vec![other.clone()]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_internal_id_stored_before_a_restart_still_declines_a_create_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = record("first", Environment::Production, Some("claim"), 1_000);
    {
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        store
            .commit_requests_from(Arc::new(vec![first]), None, u32::MAX)
            .await
            .unwrap();
        store.close().unwrap();
    }
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    let again = record("again", Environment::Production, Some("claim"), 2_000);
    let committed = store
        .commit_requests_from(Arc::new(vec![again]), None, u32::MAX)
        .await;
    assert!(matches!(
        committed,
        Err(StorageError::InternalIdClaimed(key)) if key == "claim"
    ));
}
