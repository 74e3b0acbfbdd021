//! The scheduler actor against a real store: reservations hold places until stored or given back, and a
//! panic inside the actor restarts it with its ledgers reloaded.

use std::sync::Arc;

use actix::{Addr, Supervisor};
use chrono::NaiveDate;
use switchboard_storage::{Environment, Scope, Store};

use super::*;
use crate::supervision::InjectPanic;
use crate::{Clock, Metrics};

fn scheduler(store: &Store) -> (Addr<CapacityScheduler>, Arc<Metrics>) {
    let clock = Clock::manual("2026-11-23T15:00:00Z".parse().unwrap()); // Monday
    let metrics = Arc::new(Metrics::new(store));
    let (s, m) = (store.clone(), Arc::clone(&metrics));
    let addr = Supervisor::start(move |_| CapacityScheduler::new(s, clock, m));
    (addr, metrics)
}

fn book(count: usize) -> BookRequests {
    BookRequests {
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
    let store = Store::open(dir.path()).unwrap();
    let (addr, _) = scheduler(&store);
    let held = addr.send(book(3)).await.unwrap().unwrap();
    assert_eq!(
        held.placement().days,
        [day("2026-11-23"), day("2026-11-23"), day("2026-11-24")]
    );
    // Held places count while the first POST is still storing its requests.
    let next = addr.send(book(1)).await.unwrap().unwrap();
    assert_eq!(next.placement().days, [day("2026-11-24")]);
    drop(held);
    // Given back: today has room again.
    let again = addr.send(book(2)).await.unwrap().unwrap();
    assert_eq!(
        again.placement().days,
        [day("2026-11-23"), day("2026-11-23")]
    );
    again.stored();
    next.stored();
    // Stored places stay booked: Monday is full, Tuesday has one left, then Wednesday.
    let later = addr.send(book(2)).await.unwrap().unwrap();
    assert_eq!(
        later.placement().days,
        [day("2026-11-24"), day("2026-11-25")]
    );
}

#[actix::test]
async fn a_panic_inside_the_scheduler_restarts_it_and_booking_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (addr, metrics) = scheduler(&store);
    let held = addr.send(book(1)).await.unwrap().unwrap();
    addr.send(InjectPanic).await.unwrap();
    let restarts = metrics.render().unwrap();
    assert!(
        restarts.contains("switchboard_singleton_restarts_total{actor=\"capacity_scheduler\"} 1"),
        "{restarts}"
    );
    // The restarted scheduler reloads the (empty) stored ledger and keeps the place still held.
    let next = addr.send(book(2)).await.unwrap().unwrap();
    assert_eq!(
        next.placement().days,
        [day("2026-11-23"), day("2026-11-24")]
    );
    drop((held, next));
}
