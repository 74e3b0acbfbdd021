//! The scheduler against a real store: reservations hold places until stored or given back, ledgers are
//! loaded from what is stored, and a panic inside the actor restarts it with its ledgers reloaded.

use std::sync::Arc;

use chrono::NaiveDate;
use switchboard_storage::{Environment, Scope, Store};

use super::messages::Booking;
use super::*;
use crate::supervision::InjectPanic;
use crate::{Clock, Metrics};

fn scheduler(store: &Store) -> (Scheduler, Arc<Metrics>) {
    let clock = Clock::manual("2026-11-23T15:00:00Z".parse().unwrap()); // Monday
    let metrics = Arc::new(Metrics::new(store));
    let scheduler = Scheduler::start(
        &actix::Arbiter::current(),
        store.clone(),
        clock,
        Arc::clone(&metrics),
    );
    (scheduler, metrics)
}

fn book(count: usize) -> Booking {
    Booking {
        scope: Scope::new("acme", Environment::Production),
        capacity: 2,
        timezone: chrono_tz::America::New_York,
        count,
    }
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

#[actix::test]
async fn a_reservation_holds_its_places_until_it_is_given_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (addr, _) = scheduler(&store);
    let held = addr.reserve(book(3)).await.unwrap();
    assert_eq!(
        held.placement().days,
        [day("2026-11-23"), day("2026-11-23"), day("2026-11-24")]
    );
    // Held places count while the first POST is still storing its requests.
    let next = addr.reserve(book(1)).await.unwrap();
    assert_eq!(next.placement().days, [day("2026-11-24")]);
    drop(held);
    // Given back: today has room again.
    let again = addr.reserve(book(2)).await.unwrap();
    assert_eq!(
        again.placement().days,
        [day("2026-11-23"), day("2026-11-23")]
    );
    again.stored();
    next.stored();
    // Stored places stay booked: Monday is full, Tuesday has one left, then Wednesday.
    let later = addr.reserve(book(2)).await.unwrap();
    assert_eq!(
        later.placement().days,
        [day("2026-11-24"), day("2026-11-25")]
    );
}

#[actix::test]
async fn a_panic_inside_the_scheduler_restarts_it_and_booking_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (addr, metrics) = scheduler(&store);
    let held = addr.reserve(book(1)).await.unwrap();
    addr.actor().send(InjectPanic).await.unwrap();
    let restarts = metrics.render().unwrap();
    assert!(
        restarts.contains("switchboard_singleton_restarts_total{actor=\"capacity_scheduler\"} 1"),
        "{restarts}"
    );
    // The restarted scheduler reloads the (empty) stored ledger and keeps the place still held.
    let next = addr.reserve(book(2)).await.unwrap();
    assert_eq!(
        next.placement().days,
        [day("2026-11-23"), day("2026-11-24")]
    );
    drop((held, next));
}

fn draft() -> RequestDraft {
    RequestDraft {
        schema_id: "vob".into(),
        schema_version: 1,
        request_type: "vob".into(),
        inputs: Default::default(),
        internal_id: None,
        internal_tag: None,
        webhook_url: None,
        ai_only: false,
        onshore_only: false,
        payer_lookup: None,
        dial: None,
        payer_electronic: false,
        electronic_payer_id: None,
    }
}

/// The demo scope's creator at a daily capacity of `capacity`.
fn creator(capacity: u32) -> Creator {
    Creator {
        scope: Scope::new("acme", Environment::Production),
        capacity,
        timezone: chrono_tz::America::New_York,
        credential_id: "cred".into(),
        ip: None,
        caller_span: None,
    }
}

#[actix::test]
async fn a_create_abandoned_after_its_write_was_queued_keeps_its_places_booked() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (addr, metrics) = scheduler(&store);
    let creator = creator(2);
    {
        let create = admit(&addr, &store, &metrics, &creator, vec![draft(), draft()]);
        futures::pin_mut!(create);
        // Polled until the write is queued (the booking answered), then abandoned like a client hanging up.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while store
            .list_requests(
                &creator.scope,
                "2026-01-01T00:00:00Z".parse().unwrap(),
                "2027-01-01T00:00:00Z".parse().unwrap(),
                None,
                10,
            )
            .await
            .unwrap()
            .is_empty()
        {
            assert!(
                futures::poll!(create.as_mut()).is_pending(),
                "the create finished before it was abandoned"
            );
            assert!(
                std::time::Instant::now() < deadline,
                "the write was never queued"
            );
            tokio::task::yield_now().await;
        }
    }
    // Both requests were stored, so Monday stays full: the next booking lands on Tuesday.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let next = addr.reserve(book(1)).await.unwrap();
    assert_eq!(next.placement().days, [day("2026-11-24")]);
}

#[actix::test]
async fn stored_places_leave_the_tally_so_a_restarted_scheduler_counts_them_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (addr, metrics) = scheduler(&store);
    let creator = creator(3);
    let stored = admit(&addr, &store, &metrics, &creator, vec![draft(), draft()])
        .await
        .unwrap();
    assert!(stored.iter().all(|r| r.due_date == day("2026-11-23")));
    // The restart reloads the ledger from the store plus the tally: a place the tally kept after its
    // request was stored would count twice and push the next booking to Tuesday.
    addr.actor().send(InjectPanic).await.unwrap();
    let next = addr
        .reserve(Booking {
            capacity: 3,
            ..book(1)
        })
        .await
        .unwrap();
    assert_eq!(next.placement().days, [day("2026-11-23")]);
}

#[actix::test]
async fn a_ledger_is_loaded_from_the_stored_bookings() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (first, metrics) = scheduler(&store);
    admit(
        &first,
        &store,
        &metrics,
        &creator(2),
        vec![draft(), draft()],
    )
    .await
    .unwrap();
    // A scheduler that never booked them (a restarted process) finds Monday full in the store.
    let (second, _) = scheduler(&store);
    let next = second.reserve(book(1)).await.unwrap();
    assert_eq!(next.placement().days, [day("2026-11-24")]);
}

#[actix::test]
async fn concurrent_first_bookings_of_a_scope_share_one_ledger() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (addr, _) = scheduler(&store);
    let held = futures::future::join_all((0..5).map(|_| addr.reserve(book(1)))).await;
    let mut days: Vec<NaiveDate> = held
        .iter()
        .map(|r| r.as_ref().unwrap().placement().days[0])
        .collect();
    days.sort();
    assert_eq!(
        days,
        [
            day("2026-11-23"),
            day("2026-11-23"),
            day("2026-11-24"),
            day("2026-11-24"),
            day("2026-11-25")
        ]
    );
}

/// Two processes on one database (several nodes on PostgreSQL): each books from a ledger it read before
/// the other booked. The second write finds the day full in the store, so it is booked again from the
/// store's counts, on the next day, instead of overbooking.
async fn two_processes_never_overbook_a_day(engine: switchboard_storage::TestEngine) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    let (first, metrics) = scheduler(&store);
    let (second, _) = scheduler(&store);
    // Both read their ledgers while Monday is empty.
    drop(first.reserve(book(1)).await.unwrap());
    drop(second.reserve(book(1)).await.unwrap());

    let monday = admit(
        &first,
        &store,
        &metrics,
        &creator(2),
        vec![draft(), draft()],
    )
    .await
    .unwrap();
    assert!(monday.iter().all(|r| r.due_date == day("2026-11-23")));
    let later = admit(&second, &store, &metrics, &creator(2), vec![draft()])
        .await
        .unwrap();
    assert_eq!(
        later[0].due_date,
        day("2026-11-24"),
        "booked again, not over"
    );
    let scope = Scope::new("acme", Environment::Production);
    let booked = store
        .bookings(&scope, day("2026-11-23"), day("2026-11-24"))
        .await
        .unwrap();
    assert_eq!(
        (booked[&day("2026-11-23")], booked[&day("2026-11-24")]),
        (2, 1)
    );
}

mod two_processes_never_overbook_a_day {
    #[actix::test]
    async fn sled() {
        super::two_processes_never_overbook_a_day(switchboard_storage::TestEngine::Sled).await
    }

    #[actix::test]
    async fn postgres() {
        super::two_processes_never_overbook_a_day(switchboard_storage::TestEngine::Postgres).await
    }
}
