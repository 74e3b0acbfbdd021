//! Unit tests of the request store: idempotent inserts, keyset listing, the due index, batches, old records
//! and final records.

use super::*;
use crate::{DeliveryRecord, RequestState};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

fn record(
    id: &str,
    environment: Environment,
    internal_id: Option<&str>,
    created_micros: i64,
) -> RequestRecord {
    let day: NaiveDate = "2026-11-23".parse().unwrap();
    RequestRecord {
        id: id.into(),
        account_id: "acme".into(),
        environment,
        batch_id: "batch-1".into(),
        schema_id: "vob".into(),
        schema_version: 1,
        request_type: "vob".into(),
        inputs: BTreeMap::new(),
        internal_id: internal_id.map(str::to_owned),
        internal_tag: None,
        webhook_url: None,
        ai_only: false,
        onshore_only: false,
        payer_lookup: None,
        dial: None,
        payer_electronic: false,
        electronic_payer_id: None,
        credential_id: None,
        state: RequestState::Processing,
        created_at: DateTime::from_timestamp_micros(created_micros).unwrap(),
        due_date: day,
        due_at: day.and_hms_opt(5, 0, 0).unwrap().and_utc(),
        completed_at: None,
        run: None,
    }
}

/// Stores `records` as one create and waits until they are durable.
async fn stored(store: &Store, records: Vec<RequestRecord>) {
    store
        .commit_requests(Arc::new(records))
        .await
        .into_result()
        .unwrap();
}

fn scope(environment: Environment) -> Scope {
    Scope::new("acme", environment)
}

#[tokio::test]
async fn a_claimed_internal_id_aborts_the_whole_insert_and_books_nothing() {
    let (_dir, store) = open();
    let first = record("r1", Environment::Production, Some("key"), 1_000);
    let sandbox = record("r3", Environment::Sandbox, Some("key"), 3_000);
    stored(&store, vec![first.clone(), sandbox]).await;
    let fresh = record("r4", Environment::Production, None, 4_000);
    let replay = record("r2", Environment::Production, Some("key"), 2_000);
    assert!(matches!(
        store.commit_requests(Arc::new(vec![fresh, replay])).await.outcome,
        Err(StorageError::InternalIdClaimed(key)) if key == "key"
    ));
    assert!(store.request(&"r2".into()).unwrap().is_none());
    assert!(
        store.request(&"r4".into()).unwrap().is_none(),
        "all or nothing"
    );
    let day = first.due_date;
    assert_eq!(
        store
            .bookings(&scope(Environment::Production), day, day)
            .unwrap()[&day],
        1
    );
    assert_eq!(
        store
            .bookings(&scope(Environment::Sandbox), day, day)
            .unwrap()[&day],
        1
    );
    assert_eq!(
        store
            .request_by_internal_id(&scope(Environment::Production), "key")
            .unwrap()
            .unwrap()
            .id,
        "r1"
    );
}

#[test]
fn a_request_written_before_compression_reads_the_same() {
    let (_dir, store) = open();
    let mut old = record("old", Environment::Production, Some("key"), 1_000);
    old.inputs.insert("payerName".into(), "Aetna".into());
    let mut bytes = vec![1u8];
    bytes.extend_from_slice(&serde_json::to_vec(&old).unwrap());
    store.group.requests.insert("old", bytes).unwrap();
    assert_eq!(store.request(&"old".into()).unwrap().unwrap(), old);
    // Rewritten, it is compressed under the current version.
    store.update_request(&"old".into(), |_| {}).unwrap();
    let raw = store.group.requests.get("old").unwrap().unwrap();
    assert_eq!(raw[0], 2);
    assert_eq!(store.request(&"old".into()).unwrap().unwrap(), old);
}

#[tokio::test]
async fn listing_is_newest_first_within_the_window_and_pages_by_keyset() {
    let (_dir, store) = open();
    let records: Vec<RequestRecord> = (0..25)
        .map(|i| {
            record(
                &format!("r{i:02}"),
                Environment::Production,
                None,
                1_000_000 + i * 10,
            )
        })
        .collect();
    stored(&store, records.clone()).await;
    let from = DateTime::from_timestamp_micros(0).unwrap();
    let to = DateTime::from_timestamp_micros(2_000_000).unwrap();
    let production = scope(Environment::Production);
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .list_requests(&production, from, to, cursor.as_ref(), 10)
            .unwrap();
        if page.is_empty() {
            break;
        }
        cursor = page.last().map(|r| Cursor {
            created_at: r.created_at,
            request_id: r.id.clone(),
        });
        seen.extend(page.into_iter().map(|r| String::from(r.id)));
    }
    let expected: Vec<String> = (0..25).rev().map(|i| format!("r{i:02}")).collect();
    assert_eq!(seen, expected);
    // The window's end is exclusive; the start inclusive.
    let narrow_to = DateTime::from_timestamp_micros(1_000_050).unwrap();
    let narrow_from = DateTime::from_timestamp_micros(1_000_010).unwrap();
    let narrow: Vec<String> = store
        .list_requests(&production, narrow_from, narrow_to, None, 100)
        .unwrap()
        .into_iter()
        .map(|r| r.id.into())
        .collect();
    assert_eq!(narrow, ["r04", "r03", "r02", "r01"]);
    assert!(store
        .list_requests(&scope(Environment::Sandbox), from, to, None, 100)
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn only_requests_whose_day_has_begun_are_due() {
    let (_dir, store) = open();
    let mut today = record("today", Environment::Production, None, 1);
    today.due_at = "2026-11-23T05:00:00Z".parse().unwrap();
    let mut tomorrow = record("tomorrow", Environment::Production, None, 2);
    tomorrow.due_at = "2026-11-24T05:00:00Z".parse().unwrap();
    stored(&store, vec![tomorrow, today]).await;
    let ids = |now: &str| -> Vec<String> {
        store
            .due_by(now.parse().unwrap())
            .unwrap()
            .into_iter()
            .map(|e| e.request_id.into())
            .collect()
    };
    assert!(ids("2026-11-23T04:59:59Z").is_empty());
    assert_eq!(ids("2026-11-23T05:00:00Z"), ["today"]);
    assert_eq!(ids("2026-11-24T06:00:00Z"), ["today", "tomorrow"]);
}

#[tokio::test]
async fn a_batch_lists_regardless_of_dates() {
    let (_dir, store) = open();
    let mut other = record("other", Environment::Production, None, 5);
    other.batch_id = "batch-2".into();
    stored(
        &store,
        vec![
            record("a", Environment::Production, None, 1),
            record("b", Environment::Production, None, 2),
            other,
        ],
    )
    .await;
    let ids: Vec<String> = store
        .list_batch(
            &scope(Environment::Production),
            &"batch-1".into(),
            None,
            100,
        )
        .unwrap()
        .into_iter()
        .map(|r| r.id.into())
        .collect();
    assert_eq!(ids, ["b", "a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_grouped_creates_share_flushes_and_a_declined_one_leaves_nothing() {
    let (_dir, store) = open();
    let mut tasks = Vec::new();
    for i in 0..100 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            // Two creates race for every internal id: exactly one of each pair may win.
            let internal = format!("key-{}", i / 2);
            let created = record(
                &format!("r{i}"),
                Environment::Production,
                Some(&internal),
                1_000 + i,
            );
            store.commit_requests(Arc::new(vec![created])).await
        }));
    }
    let mut stored = 0;
    for task in tasks {
        let committed = task.await.unwrap();
        committed.durable.as_ref().unwrap();
        match committed.outcome {
            Ok(()) => stored += 1,
            Err(StorageError::InternalIdClaimed(_)) => {}
            Err(other) => panic!("unexpected {other}"),
        }
    }
    assert_eq!(stored, 50, "one winner per internal id");
    assert!(
        store.flush_stats().flushes < 100,
        "100 creates should share flushes, saw {}",
        store.flush_stats().flushes
    );
    let listed = store
        .list_requests(
            &scope(Environment::Production),
            DateTime::from_timestamp_micros(0).unwrap(),
            DateTime::from_timestamp_micros(10_000).unwrap(),
            None,
            1_000,
        )
        .unwrap();
    assert_eq!(listed.len(), 50, "no index entry of a declined create");
    let day: NaiveDate = "2026-11-23".parse().unwrap();
    assert_eq!(
        store
            .bookings(&scope(Environment::Production), day, day)
            .unwrap()
            .get(&day),
        Some(&50),
        "a declined create books nothing"
    );
    for key in 0..50 {
        assert!(store
            .request_by_internal_id(&scope(Environment::Production), &format!("key-{key}"))
            .unwrap()
            .is_some());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grouped_update_is_durable_and_a_missing_request_is_declined() {
    let (_dir, store) = open();
    stored(
        &store,
        vec![record("r1", Environment::Production, None, 1_000)],
    )
    .await;
    let updated = store
        .commit_update(&"r1".into(), |r| r.internal_tag = Some("tagged".into()))
        .await
        .unwrap();
    assert_eq!(updated.internal_tag.as_deref(), Some("tagged"));
    assert_eq!(
        store
            .request(&"r1".into())
            .unwrap()
            .unwrap()
            .internal_tag
            .as_deref(),
        Some("tagged")
    );
    assert!(matches!(
        store.commit_update(&"nope".into(), |_| {}).await,
        Err(StorageError::RequestMissing(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_writes_after_close_are_refused() {
    let (_dir, store) = open();
    store.close().unwrap();
    let committed = store
        .commit_requests(Arc::new(vec![record(
            "r1",
            Environment::Production,
            None,
            1_000,
        )]))
        .await;
    assert!(matches!(committed.outcome, Err(StorageError::Closed)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grouped_write_that_panics_fails_alone_and_the_store_keeps_writing() {
    let (_dir, store) = open();
    stored(
        &store,
        vec![
            record("r1", Environment::Production, None, 1_000),
            record("r2", Environment::Production, None, 2_000),
        ],
    )
    .await;
    let (r1, r2): (RequestId, RequestId) = ("r1".into(), "r2".into());
    let (faulty, fine) = tokio::join!(
        store.commit_update(&r1, |_| panic!("a faulty change")),
        store.commit_update(&r2, |r| r.internal_tag = Some("kept".into())),
    );
    assert!(matches!(faulty, Err(StorageError::WritePanicked)));
    assert_eq!(fine.unwrap().internal_tag.as_deref(), Some("kept"));
    assert!(store
        .request(&"r1".into())
        .unwrap()
        .unwrap()
        .internal_tag
        .is_none());
    let later = store
        .commit_update(&"r1".into(), |r| r.internal_tag = Some("later".into()))
        .await
        .unwrap();
    assert_eq!(later.internal_tag.as_deref(), Some("later"));
}

#[test]
fn only_a_request_about_to_change_is_compressed_for_speed() {
    use crate::codec::Record;
    // Created in 1970, booked for 2026: it waits.
    let mut request = record("r1", Environment::Production, None, 1_000);
    assert!(!request.replaced_soon(), "waiting for a later day");
    request.created_at = request.due_at;
    assert!(request.replaced_soon(), "created on its booked day");
    request.created_at = request.due_at - chrono::Duration::microseconds(1);
    assert!(!request.replaced_soon(), "created the day before");
    request.run = Some(Default::default());
    assert!(request.replaced_soon(), "running");
    request.state = RequestState::Success;
    assert!(!request.replaced_soon(), "finished");
}

fn delivery(id: &str, payload: &str) -> DeliveryRecord {
    let at = DateTime::from_timestamp_micros(5_000).unwrap();
    DeliveryRecord {
        request_id: id.into(),
        url: "http://127.0.0.1:9/hook".into(),
        signing_secret: "secret".into(),
        payload: payload.into(),
        terminal_at: at,
        next_round: 0,
        next_at: at,
        status: crate::DeliveryStatus::Pending,
        attempts: 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_record_replaces_the_running_one_once_and_leaves_the_active_index() {
    let (_dir, store) = open();
    let created = record("r1", Environment::Production, None, 1_000);
    stored(&store, vec![created.clone()]).await;
    let running = store
        .commit_update(&"r1".into(), |r| r.run = Some(Default::default()))
        .await
        .unwrap();
    assert_eq!(
        store.active_request_ids().unwrap(),
        vec![RequestId::from("r1")]
    );
    assert!(
        store.due_by(created.due_at).unwrap().is_empty(),
        "left due when started"
    );

    let mut terminal = running.clone();
    terminal.state = RequestState::Success;
    terminal.internal_tag = Some("final".into());
    store
        .commit_final(terminal.clone(), Some(delivery("r1", "first")))
        .await
        .unwrap();
    assert_eq!(store.request(&"r1".into()).unwrap().unwrap(), terminal);
    assert!(store.active_request_ids().unwrap().is_empty());
    assert_eq!(
        store.delivery(&"r1".into()).unwrap().unwrap().payload,
        "first"
    );

    // A second ending finds the request terminal: its record and its webhook stay the first ones.
    let mut late = running;
    late.state = RequestState::Failure;
    store
        .commit_final(late, Some(delivery("r1", "second")))
        .await
        .unwrap();
    assert_eq!(store.request(&"r1".into()).unwrap().unwrap(), terminal);
    assert_eq!(
        store.delivery(&"r1".into()).unwrap().unwrap().payload,
        "first"
    );

    // Made terminal by another write without a webhook: the final record and its webhook are both dropped.
    stored(
        &store,
        vec![record("r2", Environment::Production, None, 2_000)],
    )
    .await;
    let failed = store
        .commit_update(&"r2".into(), |r| r.state = RequestState::Failure)
        .await
        .unwrap();
    let mut success = failed.clone();
    success.state = RequestState::Success;
    store
        .commit_final(success, Some(delivery("r2", "never")))
        .await
        .unwrap();
    assert_eq!(store.request(&"r2".into()).unwrap().unwrap(), failed);
    assert!(store.delivery(&"r2".into()).unwrap().is_none());

    let mut missing = terminal;
    missing.id = "nope".into();
    assert!(matches!(
        store.commit_final(missing, None).await,
        Err(StorageError::RequestMissing(_))
    ));
}
