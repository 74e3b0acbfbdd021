//! [`PendingPlaces`]: places reserved by POSTs whose requests are not stored yet, per scope.
//!
//! The scheduler adds to it when it books; a reservation whose requests were stored takes its places out
//! itself, without a message to the scheduler (a POST would otherwise wake the scheduler's thread twice);
//! places given back unstored go through the scheduler, which takes them out of its ledger in the same
//! step. A ledger (re)loaded from the store adds what is still pending, reading it before the store: a
//! request stored in between is then counted twice, which only wastes a place until the next load, and
//! never once too few.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::NaiveDate;
use switchboard_storage::Scope;

/// Pending places per scope and day, shared by the scheduler and the reservations it hands out.
#[derive(Clone, Debug, Default)]
pub struct PendingPlaces(Arc<Mutex<HashMap<Scope, BTreeMap<NaiveDate, u32>>>>);

impl PendingPlaces {
    /// Places of `scope` on `days` (one entry per place) are now reserved.
    pub(super) fn hold(&self, scope: &Scope, days: &[NaiveDate]) {
        let mut pending = self.lock();
        let of_scope = pending.entry(scope.clone()).or_default();
        for day in days {
            *of_scope.entry(*day).or_default() += 1;
        }
    }

    /// Places of `scope` (count per day) are no longer pending: stored, or given back.
    pub(super) fn settle(&self, scope: &Scope, days: &BTreeMap<NaiveDate, u32>) {
        let mut pending = self.lock();
        if let Some(of_scope) = pending.get_mut(scope) {
            for (day, count) in days {
                decrement(of_scope, *day, *count);
            }
            if of_scope.is_empty() {
                pending.remove(scope);
            }
        }
    }

    /// What `scope` has pending, per day.
    pub(super) fn of(&self, scope: &Scope) -> BTreeMap<NaiveDate, u32> {
        self.lock().get(scope).cloned().unwrap_or_default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Scope, BTreeMap<NaiveDate, u32>>> {
        // Every holder only adds and subtracts counts; a panic cannot leave a count half-changed.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Takes `count` places off `day`, dropping days that reach zero.
pub(super) fn decrement(days: &mut BTreeMap<NaiveDate, u32>, day: NaiveDate, count: u32) {
    if let Some(booked) = days.get_mut(&day) {
        *booked = booked.saturating_sub(count);
        if *booked == 0 {
            days.remove(&day);
        }
    }
}

#[cfg(test)]
mod tests {
    use switchboard_storage::Environment;

    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn places_are_counted_per_scope_and_day_until_settled() {
        let pending = PendingPlaces::default();
        let acme = Scope::new("acme", Environment::Production);
        let sandbox = Scope::new("acme", Environment::Sandbox);
        pending.hold(
            &acme,
            &[day("2026-11-23"), day("2026-11-23"), day("2026-11-24")],
        );
        pending.hold(&sandbox, &[day("2026-11-23")]);
        assert_eq!(
            pending.of(&acme),
            BTreeMap::from([(day("2026-11-23"), 2), (day("2026-11-24"), 1)])
        );
        pending.settle(&acme, &BTreeMap::from([(day("2026-11-23"), 2)]));
        assert_eq!(pending.of(&acme), BTreeMap::from([(day("2026-11-24"), 1)]));
        pending.settle(&acme, &BTreeMap::from([(day("2026-11-24"), 1)]));
        assert!(pending.of(&acme).is_empty());
        assert_eq!(
            pending.0.lock().unwrap().len(),
            1,
            "a settled scope is dropped"
        );
        assert_eq!(
            pending.of(&sandbox),
            BTreeMap::from([(day("2026-11-23"), 1)])
        );
    }
}
