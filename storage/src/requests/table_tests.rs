//! PostgreSQL's `requests` table: one row per request, what a DBA reports from, kept by the transactions
//! that create, change and purge requests, and filled by `migrate` for a store from before it.

use std::sync::Arc;

use chrono::Utc;

use crate::audit::{Actor, NewEvent, Target};
use crate::engine::testing::{admin_query, fresh_postgres_database};
use crate::requests::tests_support::new_batch;
use crate::seal::KeySource;
use crate::{EngineChoice, RequestId, RequestState, StorageConfig, Store, DEFAULT_CACHE_BYTES};

fn on_postgres(dir: &std::path::Path) -> (String, EngineChoice, Store) {
    let url = fresh_postgres_database();
    let choice = EngineChoice::Postgres {
        url: url.clone(),
        ca_file: None,
    };
    let store = Store::open(&StorageConfig::embedded(dir).on(choice.clone())).unwrap();
    (url, choice, store)
}

/// `(request_id, state, completed, sealed)` of every row, by id.
fn rows(url: &str) -> Vec<(String, String, bool, bool)> {
    admin_query(
        Some(url),
        "SELECT request_id::text, state, completed_at IS NOT NULL, sealed IS NOT NULL FROM requests \
         ORDER BY request_id",
        &[],
    )
    .iter()
    .map(|row| (row.get(0), row.get(1), row.get(2), row.get(3)))
    .collect()
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_each_request_is_a_row_a_dba_reports_from_until_it_is_purged() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _, store) = on_postgres(dir.path());
    let members = new_batch(3);
    store
        .commit_requests(Arc::new(members.clone()))
        .await
        .unwrap();
    let described = admin_query(
        Some(&url),
        "SELECT account_id, environment, schema_id, batch_id::text, due_date::text, \
         to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') FROM requests",
        &[],
    );
    assert_eq!(described.len(), 3);
    for row in &described {
        assert_eq!(row.get::<_, String>(0), members[0].account_id);
        assert_eq!(row.get::<_, String>(1), "production");
        assert_eq!(row.get::<_, String>(2), members[0].schema_id);
        assert_eq!(row.get::<_, String>(3), members[0].batch_id.as_str());
        assert_eq!(row.get::<_, String>(4), members[0].due_date.to_string());
        let created = members[0]
            .created_at
            .format("%Y-%m-%dT%H:%M:%S%.6f")
            .to_string();
        assert_eq!(row.get::<_, String>(5), created);
    }
    let mut ids: Vec<String> = members.iter().map(|m| m.id.as_str().to_owned()).collect();
    ids.sort();
    let waiting: Vec<_> = ids
        .iter()
        .map(|id| (id.clone(), "PROCESSING".to_owned(), false, false))
        .collect();
    assert_eq!(
        rows(&url),
        waiting,
        "created: processing, data still in the batch"
    );

    let failed = &members[2].id;
    store
        .commit_update(failed, |r| {
            r.state = RequestState::Failure;
            r.completed_at = Some(Utc::now());
        })
        .await
        .unwrap();
    let sealed = admin_query(
        Some(&url),
        "SELECT sealed FROM requests WHERE request_id = $1::text::uuid",
        &[failed.as_str()],
    );
    let stored = store
        .raw_get_for_tests(crate::trees::REQUESTS, failed.as_bytes())
        .unwrap()
        .expect("a record of its own");
    assert_eq!(
        sealed[0].get::<_, Vec<u8>>(0),
        stored,
        "the sealed record beside"
    );
    let report = admin_query(
        Some(&url),
        "SELECT state, count(*)::text FROM requests GROUP BY state ORDER BY state",
        &[],
    );
    let report: Vec<(String, String)> = report.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        report,
        [
            ("FAILURE".to_owned(), "1".to_owned()),
            ("PROCESSING".into(), "2".into())
        ]
    );

    store
        .purge_request(failed, purge_event(failed))
        .await
        .unwrap()
        .unwrap();
    let left: Vec<String> = rows(&url).into_iter().map(|(id, ..)| id).collect();
    assert_eq!(left.len(), 2);
    assert!(
        !left.contains(&failed.as_str().to_owned()),
        "a purged request has no row"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_gives_every_request_of_an_earlier_store_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let (url, choice, store) = on_postgres(dir.path());
    let members = new_batch(2);
    store
        .commit_requests(Arc::new(members.clone()))
        .await
        .unwrap();
    store
        .commit_update(&members[0].id, |r| r.state = RequestState::Success)
        .await
        .unwrap();
    // As the release before the table left it.
    admin_query(Some(&url), "DELETE FROM requests", &[]);
    store.keyring_at_layout_for_tests(2).unwrap();
    store.close().unwrap();
    drop(store);
    let refused = Store::open(&StorageConfig::embedded(dir.path()).on(choice.clone()))
        .err()
        .expect("an earlier layout is refused");
    assert!(
        refused.to_string().contains("switchboard migrate"),
        "{refused}"
    );
    let upgrade = Store::migrate(
        dir.path(),
        DEFAULT_CACHE_BYTES,
        &KeySource::BesideData,
        &choice,
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(upgrade.requests_tabled, 2);
    let mut expected = vec![
        (
            members[0].id.as_str().to_owned(),
            "SUCCESS".to_owned(),
            false,
            true,
        ),
        (
            members[1].id.as_str().to_owned(),
            "PROCESSING".to_owned(),
            false,
            false,
        ),
    ];
    expected.sort();
    assert_eq!(rows(&url), expected);
}

/// A create on the lease holder that took its internal id as new, was refused by the database (another
/// process of the node had claimed it) and declined on its next attempt appends no event: the head of the
/// audit chain moves only by what the attempt that commits appended, so the chain holds and grows on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_declined_on_its_retry_leaves_the_audit_chain_whole() {
    use crate::requests::tests::record;
    use crate::Environment::Production;

    let dir = tempfile::tempdir().unwrap();
    let (url, choice, before) = on_postgres(dir.path());
    let key = Some("claimed before the restart");
    before
        .commit_requests(Arc::new(vec![record("r1", Production, key, 1_000)]))
        .await
        .unwrap();
    drop(before);
    let store = Store::open(&StorageConfig::embedded(dir.path()).on(choice)).unwrap();
    admin_query(
        Some(&url),
        "INSERT INTO switchboard_lease (name, holder, expires_at) \
         VALUES ('orchestrator', 'node-a', now() + interval '1 minute')",
        &[],
    );
    store.fence_to("node-a");
    let replay = record("r2", Production, key, 2_000);
    assert!(matches!(
        store.commit_requests(Arc::new(vec![replay])).await,
        Err(crate::StorageError::InternalIdClaimed(_))
    ));
    assert!(matches!(
        store.audit_verify().await.unwrap(),
        crate::audit::Verified::Holds { events: 1 }
    ));
    store
        .commit_requests(Arc::new(vec![record("r3", Production, None, 3_000)]))
        .await
        .unwrap();
    assert!(matches!(
        store.audit_verify().await.unwrap(),
        crate::audit::Verified::Holds { events: 2 }
    ));
}
