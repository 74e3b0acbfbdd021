//! The booking desk: every scope's ledger and the tally of pending places behind one lock, where each POST
//! books for itself. Booking is the create path's only serial section: a placement over an in-memory map,
//! held for microseconds, on the POST's own thread. Asking the scheduler actor instead cost every POST a
//! round trip to the actor's thread, about a tenth of a single create's time on one core.
//!
//! Nothing here reads the store. A scope's ledger is loaded by the [`super::CapacityScheduler`] actor when
//! a POST finds none, and dropped when the actor restarts.
//!
//! *Pending* places are reserved by POSTs whose requests are not stored yet. A reservation settles its
//! places when its requests are stored (they stay in the ledger, now as stored bookings) or when it gives
//! them back (they leave the ledger too), in one step under the lock. A ledger loaded from the store adds
//! what is still pending, read before the store: a request stored in between is then counted twice, which
//! only wastes a place until the next load, and never once too few.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, NaiveDate, Utc};
use switchboard_storage::Scope;

use super::messages::{Booking, BookingError, Placement};
use super::reservation::Reservation;
use super::{place, CapacityScheduler};
use crate::supervision::Singleton;
use crate::Metrics;

/// Places per day of one scope from `from` on: stored bookings plus pending places.
#[derive(Debug)]
pub(super) struct Ledger {
    pub(super) from: NaiveDate,
    pub(super) days: BTreeMap<NaiveDate, u32>,
}

type Days = BTreeMap<NaiveDate, u32>;

#[derive(Debug, Default)]
struct Ledgers {
    by_scope: HashMap<Scope, Ledger>,
    /// Places reserved and not yet settled. They survive a restart of the actor (the POSTs holding them
    /// are still running).
    pending: HashMap<Scope, Days>,
}

/// The shared booking desk (cheap to clone).
#[derive(Clone)]
pub(super) struct BookingDesk {
    ledgers: Arc<Mutex<Ledgers>>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for BookingDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BookingDesk").finish_non_exhaustive()
    }
}

impl BookingDesk {
    /// An empty desk; a panic while booking is counted in `metrics` as a restart of the scheduler.
    pub(super) fn new(metrics: Arc<Metrics>) -> BookingDesk {
        BookingDesk {
            ledgers: Arc::default(),
            metrics,
        }
    }

    /// Reserves places for `wanted` from `today` (the requests are created `at`), or `None` when its scope
    /// has no ledger to book against yet.
    pub(super) fn book(
        &self,
        wanted: &Booking,
        today: NaiveDate,
        at: DateTime<Utc>,
    ) -> Result<Option<Reservation>, BookingError> {
        let mut guard = self.lock();
        let Ledgers { by_scope, pending } = &mut *guard;
        let Some(ledger) = usable(by_scope, &wanted.scope, today) else {
            return Ok(None);
        };
        // A ledger never moves back: a POST whose clock reading is older than the ledger's first day (read
        // just before midnight, or a system clock set back) books from that day, since the ledger no
        // longer counts the days before it.
        let days = place(wanted.count, ledger.from, wanted.capacity, &ledger.days).map_err(
            |unplaced| BookingError::Unplaceable {
                unplaced,
                total: wanted.count,
                capacity: wanted.capacity,
            },
        )?;
        let held = pending.entry(wanted.scope.clone()).or_default();
        for day in &days {
            *ledger.days.entry(*day).or_default() += 1;
            *held.entry(*day).or_default() += 1;
        }
        drop(guard);
        Ok(Some(Reservation::new(
            wanted.scope.clone(),
            Placement { days, at },
            self.clone(),
        )))
    }

    /// Whether `scope` has a ledger to book against.
    pub(super) fn has_ledger(&self, scope: &Scope) -> bool {
        self.lock().by_scope.contains_key(scope)
    }

    /// What `scope` has pending, per day.
    pub(super) fn pending(&self, scope: &Scope) -> Days {
        self.lock().pending.get(scope).cloned().unwrap_or_default()
    }

    /// Books against `ledger` for `scope` from now on, unless `scope` has a ledger already: that one has
    /// counted every booking since it was loaded.
    pub(super) fn install(&self, scope: Scope, ledger: Ledger) {
        self.lock().by_scope.entry(scope).or_insert(ledger);
    }

    /// Drops every ledger, to be loaded again from the store; pending places are kept.
    pub(super) fn forget_ledgers(&self) {
        self.lock().by_scope.clear();
    }

    /// Places of `scope` (count per day) are no longer pending: `stored`, they stay booked; otherwise they
    /// are given back.
    pub(super) fn settle(&self, scope: &Scope, days: &Days, stored: bool) {
        let mut guard = self.lock();
        let Ledgers { by_scope, pending } = &mut *guard;
        if let Some(held) = pending.get_mut(scope) {
            for (day, count) in days {
                decrement(held, *day, *count);
            }
            if held.is_empty() {
                pending.remove(scope);
            }
        }
        if !stored {
            if let Some(ledger) = by_scope.get_mut(scope) {
                for (day, count) in days {
                    decrement(&mut ledger.days, *day, *count);
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ledgers> {
        self.ledgers.lock().unwrap_or_else(|poisoned| {
            // A panic while booking may have left a ledger half-changed: every ledger is dropped and
            // loaded again, as a restart of the actor would. The tally only ever gains or loses whole
            // counts, so it stays.
            let mut ledgers = poisoned.into_inner();
            ledgers.by_scope.clear();
            self.ledgers.clear_poison();
            tracing::error!(
                actor = CapacityScheduler::NAME,
                "booking panicked; its ledgers are reloaded from the store"
            );
            self.metrics.singleton_restarted(CapacityScheduler::NAME);
            ledgers
        })
    }
}

/// The ledger of `scope`, if loaded. When the date has moved on past its first day, past days are dropped:
/// every booking up to the new horizon was made by this ledger or loaded with it, since nothing is booked
/// beyond the horizon of the day it was booked on.
fn usable<'a>(
    by_scope: &'a mut HashMap<Scope, Ledger>,
    scope: &Scope,
    today: NaiveDate,
) -> Option<&'a mut Ledger> {
    let ledger = by_scope.get_mut(scope)?;
    if ledger.from < today {
        ledger.days = ledger.days.split_off(&today);
        ledger.from = today;
    }
    Some(ledger)
}

/// Takes `count` places off `day`, dropping days that reach zero.
fn decrement(days: &mut Days, day: NaiveDate, count: u32) {
    if let Some(booked) = days.get_mut(&day) {
        *booked = booked.saturating_sub(count);
        if *booked == 0 {
            days.remove(&day);
        }
    }
}

#[cfg(test)]
mod tests {
    use switchboard_storage::{Environment, Store};

    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn desk() -> (BookingDesk, Arc<Metrics>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Arc::new(Metrics::new(
            &Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap(),
        ));
        (BookingDesk::new(Arc::clone(&metrics)), metrics, dir)
    }

    fn wanted(scope: &Scope, count: usize) -> Booking {
        Booking {
            scope: scope.clone(),
            capacity: 2,
            timezone: chrono_tz::America::New_York,
            count,
        }
    }

    fn empty_ledger(from: &str) -> Ledger {
        Ledger {
            from: day(from),
            days: Days::new(),
        }
    }

    const AT: &str = "2026-11-23T15:00:00Z";

    #[test]
    fn a_scope_is_booked_from_its_ledgers_first_day_and_never_before() {
        let (desk, _, _dir) = desk();
        let acme = Scope::new("acme", Environment::Production);
        let at = AT.parse().unwrap();
        assert!(desk
            .book(&wanted(&acme, 1), day("2026-11-23"), at)
            .unwrap()
            .is_none());
        // A ledger from a later day (a clock read before midnight, or set back) books from its own day.
        desk.install(acme.clone(), empty_ledger("2026-11-24"));
        assert!(desk.has_ledger(&acme));
        let later = desk
            .book(&wanted(&acme, 1), day("2026-11-23"), at)
            .unwrap()
            .unwrap();
        assert_eq!(later.placement().days, [day("2026-11-24")]);
        // Installing never replaces a ledger that has booked since.
        desk.install(acme.clone(), empty_ledger("2026-11-20"));
        assert_eq!(desk.lock().by_scope[&acme].from, day("2026-11-24"));
        // As the date moves on, a ledger drops the days behind it.
        drop(later);
        desk.forget_ledgers();
        desk.install(acme.clone(), empty_ledger("2026-11-20"));
        let today = desk
            .book(&wanted(&acme, 1), day("2026-11-23"), at)
            .unwrap()
            .unwrap();
        assert_eq!(today.placement().days, [day("2026-11-23")]);
        assert_eq!(desk.lock().by_scope[&acme].from, day("2026-11-23"));
    }

    #[test]
    fn pending_places_are_counted_per_scope_and_day_until_settled() {
        let (desk, _, _dir) = desk();
        let acme = Scope::new("acme", Environment::Production);
        let sandbox = Scope::new("acme", Environment::Sandbox);
        let at = AT.parse().unwrap();
        desk.install(acme.clone(), empty_ledger("2026-11-23"));
        desk.install(sandbox.clone(), empty_ledger("2026-11-23"));
        let three = desk
            .book(&wanted(&acme, 3), day("2026-11-23"), at)
            .unwrap()
            .unwrap();
        let one = desk
            .book(&wanted(&sandbox, 1), day("2026-11-23"), at)
            .unwrap()
            .unwrap();
        assert_eq!(
            desk.pending(&acme),
            Days::from([(day("2026-11-23"), 2), (day("2026-11-24"), 1)])
        );
        three.stored();
        assert!(desk.pending(&acme).is_empty());
        assert_eq!(desk.lock().pending.len(), 1, "a settled scope is dropped");
        // Stored places stay booked; given-back ones leave the ledger too.
        assert_eq!(
            desk.lock().by_scope[&acme].days,
            Days::from([(day("2026-11-23"), 2), (day("2026-11-24"), 1)])
        );
        drop(one);
        assert!(desk.pending(&sandbox).is_empty());
        assert!(desk.lock().by_scope[&sandbox].days.is_empty());
    }

    #[test]
    fn a_panic_at_the_desk_drops_the_ledgers_and_counts_a_restart() {
        let (desk, metrics, _dir) = desk();
        let acme = Scope::new("acme", Environment::Production);
        desk.install(acme.clone(), empty_ledger("2026-11-23"));
        let held = desk
            .book(&wanted(&acme, 1), day("2026-11-23"), AT.parse().unwrap())
            .unwrap()
            .unwrap();
        let poisoner = desk.clone();
        std::thread::spawn(move || {
            let _guard = poisoner.ledgers.lock().unwrap();
            panic!("a panic while booking");
        })
        .join()
        .unwrap_err();
        assert!(!desk.has_ledger(&acme));
        assert_eq!(desk.pending(&acme), Days::from([(day("2026-11-23"), 1)]));
        assert!(!desk.ledgers.is_poisoned());
        let restarts = metrics.render().unwrap();
        assert!(
            restarts
                .contains("switchboard_singleton_restarts_total{actor=\"capacity_scheduler\"} 1"),
            "{restarts}"
        );
        drop(held);
    }
}
