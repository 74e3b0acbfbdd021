//! Unit tests of the request store: idempotent inserts, keyset listing, the due index, batches, old records
//! and final records.

use super::*;
use crate::codec::decode;
use crate::seal::Sealed;
use crate::{DeliveryRecord, RequestBatchId, RequestState, TestEngine};
use intake::{chunk_key, CHUNK};

// The tests that hold for any engine, each run on sled and on PostgreSQL.
crate::on_both_engines!(
    a_claimed_internal_id_aborts_the_whole_insert_and_books_nothing,
    listing_is_newest_first_within_the_window_and_pages_by_keyset,
    only_requests_whose_day_has_begun_are_due,
    a_batch_lists_regardless_of_dates_newest_first_and_pages_inside_it,
    a_request_not_named_by_its_place_in_its_batch_is_declined_whole,
    concurrent_grouped_creates_share_flushes_and_a_declined_one_leaves_nothing,
    a_grouped_update_is_durable_and_a_missing_request_is_declined,
    a_final_record_replaces_the_running_one_once_and_leaves_the_active_index,
    a_batch_larger_than_a_chunk_reads_lists_and_retires_whole,
    a_batch_member_gets_a_record_of_its_own_at_its_first_change_and_the_batch_retires_after_the_last,
    due_work_names_what_to_start_and_retires_a_batch_once_every_member_left,
    a_terminal_write_holds_its_first_round_back_until_it_is_durable,
    the_outbox_page_ends_before_a_first_round_not_yet_durable,
    what_a_request_teaches_is_added_with_its_end_once_and_old_days_are_dropped,
);

/// Nothing runs that has not recorded its start.
fn none_running(_: &RequestId) -> bool {
    false
}

async fn due_work_names_what_to_start_and_retires_a_batch_once_every_member_left(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    let members = batch(3, 1_000);
    stored(&store, members.clone()).await;
    let due_at = members[0].due_at;
    let all: Vec<RequestId> = members.iter().map(|m| m.id.clone()).collect();
    let due_work = |limit, running: Option<RequestId>| {
        let store = store.clone();
        async move {
            let skip = |id: &RequestId| running.as_ref() == Some(id);
            store.due_work(due_at, limit, skip).await.unwrap()
        }
    };

    assert!(store
        .due_work(due_at - chrono::Duration::seconds(1), 10, none_running)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(due_work(10, None).await, all);
    assert_eq!(due_work(2, None).await, all[..2], "at most the limit");
    assert_eq!(
        due_work(2, Some(all[0].clone())).await,
        all[1..],
        "a run that has not recorded its start is passed over, not counted"
    );
    for member in &members[..2] {
        store
            .commit_update(&member.id, |r| r.run = Some(Default::default()))
            .await
            .unwrap();
    }
    assert_eq!(due_work(10, None).await, all[2..]);
    assert_eq!(
        store.due_by(due_at).await.unwrap().len(),
        3,
        "due until every member has left"
    );
    store
        .commit_update(&members[2].id, |r| r.state = RequestState::Failure)
        .await
        .unwrap();
    assert!(due_work(10, None).await.is_empty());
    assert!(
        store.due_by(due_at).await.unwrap().is_empty(),
        "retired: nothing is read again"
    );
}

/// The batch a test request named `name` is stored in alone: a UUID v7 drawn from the name, so the same
/// name always names the same request.
fn batch_of(name: &str) -> RequestBatchId {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut hasher);
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&hasher.finish().to_be_bytes());
    let uuid = uuid::Builder::from_unix_timestamp_millis(1_700_000_000_000, &random).into_uuid();
    RequestBatchId::from(uuid::Uuid::from_u128(uuid.as_u128() & !0xffff).to_string())
}

/// The id of the test request named `name`: the only member of its batch.
fn id(name: &str) -> RequestId {
    batch_of(name).member(1)
}

fn ids(names: &[&str]) -> Vec<RequestId> {
    names.iter().map(|name| id(name)).collect()
}

/// A request named `name`, alone in its batch.
pub(super) fn record(
    name: &str,
    environment: Environment,
    internal_id: Option<&str>,
    created_micros: i64,
) -> RequestRecord {
    let day: NaiveDate = "2026-11-23".parse().unwrap();
    RequestRecord {
        id: id(name),
        account_id: "acme".into(),
        environment,
        batch_id: batch_of(name),
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
        trace: None,
    }
}

/// Stores `records` as one create and waits until they are durable.
pub(super) async fn stored(store: &Store, records: Vec<RequestRecord>) {
    store.commit_requests(Arc::new(records)).await.unwrap();
}

pub(super) fn scope(environment: Environment) -> Scope {
    Scope::new("acme", environment)
}

async fn a_claimed_internal_id_aborts_the_whole_insert_and_books_nothing(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let first = record("r1", Environment::Production, Some("key"), 1_000);
    let sandbox = record("r3", Environment::Sandbox, Some("key"), 3_000);
    stored(&store, vec![first.clone(), sandbox]).await;
    let fresh = record("r4", Environment::Production, None, 4_000);
    let replay = record("r2", Environment::Production, Some("key"), 2_000);
    assert!(matches!(
        store.commit_requests(Arc::new(vec![fresh, replay])).await,
        Err(StorageError::InternalIdClaimed(key)) if key == "key"
    ));
    assert!(store.request(&id("r2")).await.unwrap().is_none());
    assert!(
        store.request(&id("r4")).await.unwrap().is_none(),
        "all or nothing"
    );
    let day = first.due_date;
    assert_eq!(
        store
            .bookings(&scope(Environment::Production), day, day)
            .await
            .unwrap()[&day],
        1
    );
    assert_eq!(
        store
            .bookings(&scope(Environment::Sandbox), day, day)
            .await
            .unwrap()[&day],
        1
    );
    assert_eq!(
        store
            .request_by_internal_id(&scope(Environment::Production), "key")
            .await
            .unwrap()
            .unwrap()
            .id,
        id("r1")
    );
}

#[tokio::test]
async fn a_request_written_before_compression_reads_the_same() {
    let (_dir, store) = TestEngine::Sled.open_temp();
    let mut old = record("old", Environment::Production, Some("key"), 1_000);
    old.inputs.insert("payerName".into(), "Aetna".into());
    let mut bytes = vec![1u8];
    bytes.extend_from_slice(&serde_json::to_vec(&old).unwrap());
    let sealed = store.sealer.seal(Sealed::Requests, b"old", &bytes);
    store.group.requests.insert("old", sealed).unwrap();
    assert_eq!(store.request(&"old".into()).await.unwrap().unwrap(), old);
    // Rewritten, it is compressed under the current version.
    store.commit_update(&"old".into(), |_| {}).await.unwrap();
    let raw = store.group.requests.get("old").unwrap().unwrap();
    let raw = store.sealer.open(Sealed::Requests, b"old", &raw).unwrap();
    assert_eq!(raw[0], 2);
    assert_eq!(store.request(&"old".into()).await.unwrap().unwrap(), old);
}

async fn listing_is_newest_first_within_the_window_and_pages_by_keyset(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
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
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        cursor = page.last().map(|r| Cursor {
            created_at: r.created_at,
            request_id: r.id.clone(),
        });
        seen.extend(page.into_iter().map(|r| r.id));
    }
    let expected: Vec<RequestId> = (0..25).rev().map(|i| id(&format!("r{i:02}"))).collect();
    assert_eq!(seen, expected);
    // The window's end is exclusive; the start inclusive.
    let narrow_to = DateTime::from_timestamp_micros(1_000_050).unwrap();
    let narrow_from = DateTime::from_timestamp_micros(1_000_010).unwrap();
    let narrow: Vec<RequestId> = store
        .list_requests(&production, narrow_from, narrow_to, None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(narrow, ids(&["r04", "r03", "r02", "r01"]));
    assert!(store
        .list_requests(&scope(Environment::Sandbox), from, to, None, 100)
        .await
        .unwrap()
        .is_empty());
}

async fn only_requests_whose_day_has_begun_are_due(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let mut today = record("today", Environment::Production, None, 1);
    today.due_at = "2026-11-23T05:00:00Z".parse().unwrap();
    let mut tomorrow = record("tomorrow", Environment::Production, None, 2);
    tomorrow.due_at = "2026-11-24T05:00:00Z".parse().unwrap();
    stored(&store, vec![tomorrow, today]).await;
    let due = |now: &str| {
        let read = store.due_by(now.parse().unwrap());
        async move {
            let due = read.await.unwrap();
            due.into_iter().map(|e| e.request_id).collect::<Vec<_>>()
        }
    };
    assert!(due("2026-11-23T04:59:59Z").await.is_empty());
    assert_eq!(due("2026-11-23T05:00:00Z").await, ids(&["today"]));
    assert_eq!(
        due("2026-11-24T06:00:00Z").await,
        ids(&["today", "tomorrow"])
    );
}

/// `count` requests of one batch, created together, each named by its place.
pub(super) fn batch(count: usize, created_micros: i64) -> Vec<RequestRecord> {
    let batch = RequestBatchId::new();
    (1..=count)
        .map(|place| RequestRecord {
            id: batch.member(place),
            batch_id: batch.clone(),
            ..record("member", Environment::Production, None, created_micros)
        })
        .collect()
}

pub(super) fn ids_of(records: &[RequestRecord]) -> Vec<RequestId> {
    records.iter().map(|r| r.id.clone()).collect()
}

async fn a_batch_lists_regardless_of_dates_newest_first_and_pages_inside_it(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let members = batch(5, 1);
    let other = batch(2, 5);
    stored(&store, members.iter().chain(&other).cloned().collect()).await;
    let production = scope(Environment::Production);
    let batch_id = &members[0].batch_id;
    let listed = |cursor: Option<Cursor>, limit| {
        let (store, production, batch_id) = (store.clone(), production.clone(), batch_id.clone());
        async move {
            let page = store.list_batch(&production, &batch_id, cursor.as_ref(), limit);
            ids_of(&page.await.unwrap())
        }
    };
    let newest_first: Vec<RequestId> = ids_of(&members).into_iter().rev().collect();
    assert_eq!(listed(None, 100).await, newest_first);
    let cursor = Cursor {
        created_at: members[3].created_at,
        request_id: members[3].id.clone(),
    };
    assert_eq!(listed(Some(cursor), 2).await, newest_first[2..4]);
    // Another account's batch, or another environment's, lists as nothing.
    let sandbox = scope(Environment::Sandbox);
    assert!(store
        .list_batch(&sandbox, batch_id, None, 100)
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .list_batch(&production, &RequestBatchId::new(), None, 100)
        .await
        .unwrap()
        .is_empty());
}

async fn a_batch_member_gets_a_record_of_its_own_at_its_first_change_and_the_batch_retires_after_the_last(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    let members = batch(3, 1_000);
    stored(&store, members.clone()).await;
    let (due_at, batch_id) = (members[0].due_at, members[0].batch_id.clone());
    assert!(
        store.group.requests.is_empty().unwrap(),
        "created whole, not one by one"
    );
    assert_eq!(
        store.request(&members[1].id).await.unwrap().unwrap(),
        members[1]
    );

    let started = store
        .commit_update(&members[1].id, |r| r.run = Some(Default::default()))
        .await
        .unwrap();
    assert!(store
        .group
        .requests
        .get(members[1].id.as_bytes())
        .unwrap()
        .is_some());
    assert_eq!(
        store.request(&members[1].id).await.unwrap().unwrap(),
        started
    );
    assert_eq!(
        store.request(&members[0].id).await.unwrap().unwrap(),
        members[0],
        "the others wait"
    );

    let retire = [(due_at, batch_id.clone())];
    assert_eq!(
        store.retire_batches(retire.to_vec()).await.unwrap(),
        0,
        "two members wait"
    );
    // Changed without starting (a record of its own, still waiting): still not retired.
    store
        .commit_update(&members[0].id, |r| r.internal_tag = Some("x".into()))
        .await
        .unwrap();
    assert_eq!(store.retire_batches(retire.to_vec()).await.unwrap(), 0);
    store
        .commit_update(&members[0].id, |r| r.run = Some(Default::default()))
        .await
        .unwrap();
    store
        .commit_update(&members[2].id, |r| r.state = RequestState::Failure)
        .await
        .unwrap();
    assert_eq!(
        store.due_by(due_at).await.unwrap().len(),
        3,
        "due until retired"
    );
    assert_eq!(store.retire_batches(retire.to_vec()).await.unwrap(), 1);
    assert!(store.due_by(due_at).await.unwrap().is_empty());
    assert_eq!(
        store.retire_batches(retire.to_vec()).await.unwrap(),
        0,
        "retired once"
    );
    // Retired, the batch keeps its count only, and still lists and reads through its members' records.
    let key = chunk_key(&batch_id, 0);
    let intake = store.group.intake.get(&key).unwrap().unwrap();
    let intake = store.sealer.open(Sealed::Intake, &key, &intake).unwrap();
    assert!(decode::<IntakeRecord>(&intake).unwrap().members.is_empty());
    let listed = store
        .list_batch(&scope(Environment::Production), &batch_id, None, 10)
        .await
        .unwrap();
    assert_eq!(
        ids_of(&listed),
        ids_of(&members).into_iter().rev().collect::<Vec<_>>()
    );
    assert_eq!(listed[1], started);
}

async fn a_request_not_named_by_its_place_in_its_batch_is_declined_whole(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let mut members = batch(2, 1_000);
    members.swap(0, 1);
    let committed = store.commit_requests(Arc::new(members.clone())).await;
    assert!(matches!(committed, Err(StorageError::NotABatchMember(id)) if id == members[0].id));
    assert!(
        store.group.intake.is_empty().unwrap() && store.group.request_index.is_empty().unwrap()
    );
    let day = members[0].due_date;
    assert!(store
        .bookings(&scope(Environment::Production), day, day)
        .await
        .unwrap()
        .is_empty());
}

async fn concurrent_grouped_creates_share_flushes_and_a_declined_one_leaves_nothing(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
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
        match committed {
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
        .await
        .unwrap();
    assert_eq!(listed.len(), 50, "no index entry of a declined create");
    let day: NaiveDate = "2026-11-23".parse().unwrap();
    assert_eq!(
        store
            .bookings(&scope(Environment::Production), day, day)
            .await
            .unwrap()
            .get(&day),
        Some(&50),
        "a declined create books nothing"
    );
    for key in 0..50 {
        assert!(store
            .request_by_internal_id(&scope(Environment::Production), &format!("key-{key}"))
            .await
            .unwrap()
            .is_some());
    }
}

async fn a_grouped_update_is_durable_and_a_missing_request_is_declined(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    stored(
        &store,
        vec![record("r1", Environment::Production, None, 1_000)],
    )
    .await;
    let updated = store
        .commit_update(&id("r1"), |r| r.internal_tag = Some("tagged".into()))
        .await
        .unwrap();
    assert_eq!(updated.internal_tag.as_deref(), Some("tagged"));
    assert_eq!(
        store
            .request(&id("r1"))
            .await
            .unwrap()
            .unwrap()
            .internal_tag
            .as_deref(),
        Some("tagged")
    );
    assert!(matches!(
        store.commit_update(&id("nope"), |_| {}).await,
        Err(StorageError::RequestMissing(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_writes_after_close_are_refused() {
    let (_dir, store) = TestEngine::Sled.open_temp();
    store.close().unwrap();
    let committed = store
        .commit_requests(Arc::new(vec![record(
            "r1",
            Environment::Production,
            None,
            1_000,
        )]))
        .await;
    assert!(matches!(committed, Err(StorageError::Closed)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grouped_write_that_panics_fails_alone_and_the_store_keeps_writing() {
    let (_dir, store) = TestEngine::Sled.open_temp();
    stored(
        &store,
        vec![
            record("r1", Environment::Production, None, 1_000),
            record("r2", Environment::Production, None, 2_000),
        ],
    )
    .await;
    let (r1, r2) = (id("r1"), id("r2"));
    let (faulty, fine) = tokio::join!(
        store.commit_update(&r1, |_| panic!("a faulty change")),
        store.commit_update(&r2, |r| r.internal_tag = Some("kept".into())),
    );
    assert!(matches!(faulty, Err(StorageError::WritePanicked)));
    assert_eq!(fine.unwrap().internal_tag.as_deref(), Some("kept"));
    assert!(store
        .request(&id("r1"))
        .await
        .unwrap()
        .unwrap()
        .internal_tag
        .is_none());
    let later = store
        .commit_update(&id("r1"), |r| r.internal_tag = Some("later".into()))
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

fn delivery(request_id: &RequestId, payload: &str) -> DeliveryRecord {
    let at = DateTime::from_timestamp_micros(5_000).unwrap();
    DeliveryRecord {
        request_id: request_id.clone(),
        url: "http://127.0.0.1:9/hook".into(),
        signing_secret: "secret".into(),
        payload: payload.into(),
        terminal_at: at,
        next_round: 0,
        next_at: at,
        status: crate::DeliveryStatus::Pending,
        attempts: 0,
        redelivery_at: None,
        redeliveries: 0,
        traceparent: None,
    }
}

async fn a_final_record_replaces_the_running_one_once_and_leaves_the_active_index(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    let created = record("r1", Environment::Production, None, 1_000);
    stored(&store, vec![created.clone()]).await;
    let running = store
        .commit_update(&id("r1"), |r| r.run = Some(Default::default()))
        .await
        .unwrap();
    assert_eq!(store.active_request_ids().await.unwrap(), ids(&["r1"]));
    assert_eq!(
        store.due_by(created.due_at).await.unwrap()[0].batch,
        Some(created.batch_id.clone()),
        "its batch stays due until retired"
    );
    let batch = [(created.due_at, created.batch_id.clone())];
    assert_eq!(store.retire_batches(batch.to_vec()).await.unwrap(), 1);
    assert!(
        store.due_by(created.due_at).await.unwrap().is_empty(),
        "left due once its batch retired"
    );

    let mut terminal = running.clone();
    terminal.state = RequestState::Success;
    terminal.internal_tag = Some("final".into());
    assert!(store
        .commit_final(terminal.clone(), Some(delivery(&id("r1"), "first")), None)
        .await
        .unwrap());
    assert_eq!(store.request(&id("r1")).await.unwrap().unwrap(), terminal);
    assert!(store.active_request_ids().await.unwrap().is_empty());
    assert_eq!(
        store.delivery(&id("r1")).await.unwrap().unwrap().payload,
        "first"
    );

    // A second ending finds the request terminal: its record and its webhook stay the first ones.
    let mut late = running;
    late.state = RequestState::Failure;
    let written = store
        .commit_final(late, Some(delivery(&id("r1"), "second")), None)
        .await
        .unwrap();
    assert!(!written, "the write says it stored nothing");
    assert_eq!(store.request(&id("r1")).await.unwrap().unwrap(), terminal);
    assert_eq!(
        store.delivery(&id("r1")).await.unwrap().unwrap().payload,
        "first"
    );

    // Made terminal by another write without a webhook: the final record and its webhook are both dropped.
    stored(
        &store,
        vec![record("r2", Environment::Production, None, 2_000)],
    )
    .await;
    let failed = store
        .commit_update(&id("r2"), |r| r.state = RequestState::Failure)
        .await
        .unwrap();
    let mut success = failed.clone();
    success.state = RequestState::Success;
    store
        .commit_final(success, Some(delivery(&id("r2"), "never")), None)
        .await
        .unwrap();
    assert_eq!(store.request(&id("r2")).await.unwrap().unwrap(), failed);
    assert!(store.delivery(&id("r2")).await.unwrap().is_none());

    let mut missing = terminal;
    missing.id = id("nope");
    assert!(matches!(
        store.commit_final(missing, None, None).await,
        Err(StorageError::RequestMissing(_))
    ));
}

/// Stores `ids` as requests, finished one after another with a first webhook round each.
async fn finished_with_webhooks(store: &Store, ids: &[&str]) {
    for (n, name) in ids.iter().enumerate() {
        let created = record(name, Environment::Production, None, 1_000 + n as i64);
        stored(store, vec![created.clone()]).await;
        let mut terminal = created;
        terminal.state = RequestState::Success;
        let mut webhook = delivery(&id(name), name);
        webhook.next_at += chrono::Duration::seconds(n as i64);
        store
            .commit_final(terminal, Some(webhook), None)
            .await
            .unwrap();
    }
}

async fn page(store: &Store, after: Option<&crate::QueuePosition>) -> Vec<RequestId> {
    let now = DateTime::from_timestamp_micros(60_000_000).unwrap();
    store
        .due_deliveries_except(now, after, 10, |_| false)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.request_id)
        .collect()
}

// The paused flusher's lock is held while the outbox is read: the read never takes it.
#[allow(clippy::await_holding_lock)]
async fn a_terminal_write_holds_its_first_round_back_until_it_is_durable(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let created = record("r1", Environment::Production, None, 1_000);
    stored(&store, vec![created.clone()]).await;
    let mut terminal = created;
    terminal.state = RequestState::Success;
    let held = |store: &Store| store.outbox.held()(&id("r1"));

    // With no group written meanwhile (a backup's gate), the write is queued and cannot settle.
    let gate = Arc::clone(&store.group.gate);
    let paused = gate.write().unwrap();
    let mut write =
        Box::pin(store.commit_final(terminal, Some(delivery(&id("r1"), "first")), None));
    assert!(futures::FutureExt::now_or_never(&mut write).is_none());
    assert!(held(&store), "held from before the write");
    drop(paused);
    write.await.unwrap();
    assert!(!held(&store), "released once the write is durable");
    assert_eq!(page(&store, None).await, ids(&["r1"]));
    // The release woke the dispatcher's wait.
    tokio::time::timeout(std::time::Duration::from_secs(5), store.outbox_enqueued())
        .await
        .expect("the outbox was signalled");

    // Stopped between its transaction and its flush, the round is readable and still held: the page
    // ends before it until the flush has settled.
    let later = record("r3", Environment::Production, None, 3_000);
    stored(&store, vec![later.clone()]).await;
    let mut terminal = later;
    terminal.state = RequestState::Success;
    let flush = Arc::clone(&store.group.before_flush);
    let paused = flush.write().unwrap();
    // Queued after r1's round.
    let mut third = delivery(&id("r3"), "third");
    third.next_at += chrono::Duration::seconds(1);
    let mut write = Box::pin(store.commit_final(terminal, Some(third), None));
    assert!(futures::FutureExt::now_or_never(&mut write).is_none());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while store.delivery(&id("r3")).await.unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "never written");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(
        store.outbox.held()(&id("r3")),
        "written, not yet flushed: held"
    );
    assert_eq!(page(&store, None).await, ids(&["r1"]));
    drop(paused);
    write.await.unwrap();
    assert!(!store.outbox.held()(&id("r3")));
    assert_eq!(page(&store, None).await, ids(&["r1", "r3"]));

    // A terminal write without a webhook holds nothing.
    let plain = record("r2", Environment::Production, None, 2_000);
    stored(&store, vec![plain.clone()]).await;
    let paused = gate.write().unwrap();
    let mut write = Box::pin(store.commit_final(plain, None, None));
    assert!(futures::FutureExt::now_or_never(&mut write).is_none());
    assert!(!store.outbox.held()(&id("r2")));
    drop(paused);
    write.await.unwrap();
}

async fn the_outbox_page_ends_before_a_first_round_not_yet_durable(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    finished_with_webhooks(&store, &["r1", "r2", "r3"]).await;
    assert_eq!(page(&store, None).await, ids(&["r1", "r2", "r3"]));

    // r2 as it is between its write and its flush: a dispatcher resuming past r1 must still find it.
    let hold = store.outbox.hold(&id("r2"));
    assert_eq!(
        page(&store, None).await,
        ids(&["r1"]),
        "ends before r2, not past it"
    );
    let after_r1 = crate::QueuePosition::of(&store.delivery(&id("r1")).await.unwrap().unwrap());
    assert!(page(&store, Some(&after_r1)).await.is_empty());
    drop(hold);
    assert_eq!(page(&store, Some(&after_r1)).await, ids(&["r2", "r3"]));
}

#[tokio::test]
async fn a_lone_request_and_a_batch_booked_for_today_are_stored_plain_and_others_compressed() {
    let (_dir, store) = TestEngine::Sled.open_temp();
    let mut today = batch(2, 1_000);
    for member in &mut today {
        member.created_at = member.due_at;
    }
    let later = batch(2, 1_000);
    let lone = batch(1, 1_000);
    stored(
        &store,
        today.iter().chain(&later).chain(&lone).cloned().collect(),
    )
    .await;
    for (members, version) in [(&today, 1), (&later, 2), (&lone, 1)] {
        let key = chunk_key(&members[0].batch_id, 0);
        let value = store.group.intake.get(&key).unwrap().unwrap();
        let value = store.sealer.open(Sealed::Intake, &key, &value).unwrap();
        assert_eq!(value[0], version);
        let last = members.last().unwrap();
        assert_eq!(&store.request(&last.id).await.unwrap().unwrap(), last);
    }
}

async fn a_batch_larger_than_a_chunk_reads_lists_and_retires_whole(engine: TestEngine) {
    let (_dir, store) = engine.open_temp();
    let members = batch(2 * CHUNK + 3, 1_000);
    stored(&store, members.clone()).await;
    let batch_id = members[0].batch_id.clone();
    assert_eq!(store.group.intake.iter().count(), 3, "three chunks");
    for member in [
        &members[0],
        &members[CHUNK - 1],
        &members[CHUNK],
        &members[2 * CHUNK + 2],
    ] {
        assert_eq!(
            &*store.fetch_request(&member.id).await.unwrap().unwrap(),
            member
        );
    }
    let production = scope(Environment::Production);
    let newest_first: Vec<RequestId> = ids_of(&members).into_iter().rev().collect();
    let mut listed = Vec::new();
    let mut cursor = None;
    loop {
        let page = store
            .list_batch(&production, &batch_id, cursor.as_ref(), 50)
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        cursor = Some(Cursor {
            created_at: last.created_at,
            request_id: last.id.clone(),
        });
        listed.extend(ids_of(&page));
    }
    assert_eq!(listed, newest_first);
    for member in &members {
        store
            .commit_update(&member.id, |r| r.run = Some(Default::default()))
            .await
            .unwrap();
    }
    let retire = [(members[0].due_at, batch_id.clone())];
    assert_eq!(store.retire_batches(retire.to_vec()).await.unwrap(), 1);
    assert_eq!(store.group.intake.iter().count(), 1, "only the count stays");
    assert_eq!(
        ids_of(
            &store
                .list_batch(&production, &batch_id, None, 1_000)
                .await
                .unwrap()
        ),
        newest_first
    );
}

/// A batch of `count` production members of account `acme`, created now.
pub(crate) fn new_batch(count: usize) -> Vec<RequestRecord> {
    batch(count, chrono::Utc::now().timestamp_micros())
}

pub(crate) fn scope_of() -> Scope {
    scope(Environment::Production)
}

/// Two calls of one request, a Monday 9:00 and a Monday 15:00, the second reached after a 300 s hold.
fn learning(payer: &str) -> crate::PayerLearning {
    let monday = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
    let call = |hour, reached, hold_seconds| crate::LearnedCall {
        day: monday,
        hour,
        reached,
        phases: Some(crate::CallPhases {
            ivr_seconds: 60,
            hold_seconds,
            talk_seconds: 300,
        }),
        billed_minutes: 7,
    };
    crate::PayerLearning {
        payer: payer.into(),
        calls: vec![call(9, false, 2700), call(15, true, 300)],
        completed_on: Some(monday),
    }
}

async fn what_a_request_teaches_is_added_with_its_end_once_and_old_days_are_dropped(
    engine: TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    let monday = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
    for name in ["r1", "r2"] {
        stored(
            &store,
            vec![record(name, Environment::Production, None, 1_000)],
        )
        .await;
        let mut terminal = store.request(&id(name)).await.unwrap().unwrap();
        terminal.state = RequestState::Success;
        store
            .commit_final(terminal.clone(), None, Some(learning("Aetna")))
            .await
            .unwrap();
        // Ending again (a restart that finished it twice) teaches nothing more.
        store
            .commit_final(terminal, None, Some(learning("Aetna")))
            .await
            .unwrap();
    }
    let days = store.payer_days("Aetna", monday).await.unwrap();
    assert_eq!(days.len(), 1);
    let (day, record) = &days[0];
    assert_eq!(*day, monday);
    assert_eq!(record.hours[&9].calls, 2, "one call at 9:00 per request");
    assert_eq!(record.hours[&15].reached, 2);
    assert_eq!(record.hours[&15].median_hold_seconds(), Some(315));
    assert_eq!((record.completed_requests, record.billed_minutes), (2, 28));
    assert!(store.payer_days("Aet", monday).await.unwrap().is_empty());
    assert!(store
        .payer_days("Aetna", monday.succ_opt().unwrap())
        .await
        .unwrap()
        .is_empty());

    assert_eq!(store.forget_payer_days_before(monday).await.unwrap(), 0);
    assert_eq!(
        store
            .forget_payer_days_before(monday.succ_opt().unwrap())
            .await
            .unwrap(),
        1
    );
    assert!(store.payer_days("Aetna", monday).await.unwrap().is_empty());
}
