//! The webhook attempt log.

use crate::engine::operations::WebhookAttempts;
use crate::{AttemptRecord, RequestId, TestEngine, UNFINISHED_ATTEMPT};

/// An attempt of `request`, at a time a microsecond apart from the next (what PostgreSQL keeps).
fn attempt(request: &RequestId, attempt: u32, status_code: Option<u16>) -> AttemptRecord {
    let at = chrono::DateTime::from_timestamp_micros(1_797_000_000_000_000 + i64::from(attempt))
        .unwrap();
    AttemptRecord {
        request_id: request.clone(),
        url: String::new(),
        at,
        round: 0,
        attempt,
        status_code,
        error: status_code.is_none().then(|| UNFINISHED_ATTEMPT.to_owned()),
        latency_ms: 12,
        redelivery: None,
    }
}

async fn an_attempt_is_logged_before_it_is_sent_and_finished_in_place(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let (request, other) = (RequestId::new(), RequestId::new());
    engine
        .record_attempt(&attempt(&request, 1, Some(503)))
        .await
        .unwrap();
    let entry = engine
        .begin_attempt(&attempt(&request, 2, None))
        .await
        .unwrap();
    engine
        .record_attempt(&attempt(&other, 1, Some(200)))
        .await
        .unwrap();
    let unfinished = engine.attempts(&request).await.unwrap();
    assert_eq!(
        unfinished,
        [attempt(&request, 1, Some(503)), attempt(&request, 2, None)]
    );

    let mut finished = attempt(&request, 2, Some(200));
    finished.redelivery = Some(1);
    finished.url = "https://hooks.example/legacy".into();
    engine.finish_attempt(&entry, &finished).await.unwrap();
    assert_eq!(
        engine.attempts(&request).await.unwrap(),
        [attempt(&request, 1, Some(503)), finished],
        "in order, the second written over"
    );
    assert_eq!(engine.attempts(&other).await.unwrap().len(), 1);
    assert!(engine.attempts(&RequestId::new()).await.unwrap().is_empty());
    let typed_by_a_caller = RequestId::from("x".to_owned());
    assert!(engine
        .attempts(&typed_by_a_caller)
        .await
        .unwrap()
        .is_empty());
    engine.remove_attempts(&typed_by_a_caller).await.unwrap();
}

async fn removing_a_requests_attempts_leaves_the_others(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let engine = store.engine();
    let (request, other) = (RequestId::new(), RequestId::new());
    for n in 1..=3 {
        engine
            .record_attempt(&attempt(&request, n, Some(500)))
            .await
            .unwrap();
    }
    engine
        .record_attempt(&attempt(&other, 1, Some(200)))
        .await
        .unwrap();
    engine.remove_attempts(&request).await.unwrap();
    assert!(engine.attempts(&request).await.unwrap().is_empty());
    assert_eq!(engine.attempts(&other).await.unwrap().len(), 1);
    engine.remove_attempts(&request).await.unwrap();
}

crate::on_both_engines!(
    an_attempt_is_logged_before_it_is_sent_and_finished_in_place,
    removing_a_requests_attempts_leaves_the_others,
);

/// A database of schema version 3 kept the log as rows of `switchboard_kv`: `migrate` makes each a row of
/// `webhook_attempts`, in the order it had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_the_attempts_of_a_version_3_database_into_their_table() {
    use crate::engine::testing::admin_query;
    let (url, config, _dir) = super::on_a_fresh_database();
    let request = RequestId::new();
    let logged = [attempt(&request, 1, Some(503)), attempt(&request, 2, None)];
    for (seq, logged) in [(7_u64, &logged[0]), (1_000, &logged[1])] {
        let mut key = request.as_bytes().to_vec();
        key.push(0);
        key.extend_from_slice(&seq.to_be_bytes());
        admin_query(
            Some(&url),
            "INSERT INTO switchboard_kv (tree, key, value) \
             VALUES ('delivery_attempts', decode($1, 'hex'), decode($2, 'hex'))",
            &[
                &hex::encode(key),
                &hex::encode(crate::codec::encode(logged)),
            ],
        );
    }
    admin_query(Some(&url), "UPDATE switchboard_schema SET version = 3", &[]);
    assert_eq!(crate::migrate_postgres(&url, None).unwrap(), Some(3));

    let store = crate::Store::open(&config).unwrap();
    assert_eq!(store.attempts(&request).await.unwrap(), logged);
    assert_eq!(super::kv_rows_left(&url, &["delivery_attempts"]), 0);
    let failed = admin_query(
        Some(&url),
        "SELECT count(*) FROM webhook_attempts WHERE status_code >= 500",
        &[],
    );
    assert_eq!(
        failed[0].get::<_, i64>(0),
        1,
        "the columns a DBA reports from"
    );
    store.close().unwrap();
}

/// A node fenced by a lease it does not hold (it stalled, and another node took over) logs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_the_lease_logs_no_attempt() {
    let (_dir, store) = TestEngine::Postgres.open_temp();
    let request = RequestId::new();
    let entry = store
        .engine()
        .begin_attempt(&attempt(&request, 1, None))
        .await
        .unwrap();
    store.fence_to("a-node-that-lost-the-lease");
    let engine = store.engine();
    let refused = engine
        .record_attempt(&attempt(&request, 2, Some(200)))
        .await;
    assert!(
        refused.unwrap_err().to_string().contains("lease"),
        "refused for the lease"
    );
    engine
        .finish_attempt(&entry, &attempt(&request, 1, Some(200)))
        .await
        .unwrap();
    engine.remove_attempts(&request).await.unwrap();
    assert_eq!(
        engine.attempts(&request).await.unwrap(),
        [attempt(&request, 1, None)],
        "nothing written past the fence"
    );
}
