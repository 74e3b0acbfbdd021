//! Capacity scheduling: which business day each new request is booked on.
//!
//! Every account has a daily call capacity; each environment of it keeps its own ledger of requests booked
//! per business day, so sandbox testing never eats production capacity. A POST's new requests fill the
//! earliest business days with room, from today (in the account's time zone) up to a 365-day horizon;
//! work already booked counts. If any of them cannot be placed, none is.
//!
//! `mod.rs` holds the pure placement rule; `desk.rs` the booking desk, the ledgers in memory behind one
//! lock, where each POST books for itself in microseconds; `actor.rs` the [`CapacityScheduler`] actor that
//! loads the desk's ledgers from the store, and [`Scheduler`], the handle POSTs book through;
//! `reservation.rs` the places held for a POST until its requests are stored; `admit.rs` the create
//! sequence around them (reserve, insert in one transaction, settle, flush), run concurrently by the POSTs
//! themselves. The transaction refuses an internal id claimed since intake looked, so a key never creates
//! two requests.

mod actor;
mod admit;
mod desk;
mod messages;
mod reservation;

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};

pub use actor::{CapacityScheduler, Scheduler};
pub use admit::{admit, Creator};
pub use messages::{BookingError, RequestDraft};

use crate::calendar::business_days_from;

/// How far ahead requests may be booked.
pub const HORIZON_DAYS: u64 = 365;

/// Days for `count` new requests, earliest first, given what is `booked` already. `Err` carries how many
/// could not be placed within the horizon.
pub fn place(
    count: usize,
    today: NaiveDate,
    capacity: u32,
    booked: &BTreeMap<NaiveDate, u32>,
) -> Result<Vec<NaiveDate>, usize> {
    let last = today
        .checked_add_days(Days::new(HORIZON_DAYS))
        .unwrap_or(NaiveDate::MAX);
    let mut days = Vec::with_capacity(count);
    if capacity > 0 {
        for day in business_days_from(today).take_while(|d| *d <= last) {
            if days.len() == count {
                break;
            }
            let free = capacity.saturating_sub(booked.get(&day).copied().unwrap_or(0)) as usize;
            let take = free.min(count - days.len());
            days.extend(std::iter::repeat_n(day, take));
        }
    }
    if days.len() == count {
        Ok(days)
    } else {
        Err(count - days.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn requests_fill_today_then_the_following_business_days() {
        let today = day("2026-11-23"); // Monday
        let days = place(5, today, 2, &BTreeMap::new()).unwrap();
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

    #[test]
    fn weekends_and_holidays_are_skipped() {
        // Wednesday before Thanksgiving: Thursday is a holiday, then Friday, then Monday.
        let days = place(3, day("2026-11-25"), 1, &BTreeMap::new()).unwrap();
        assert_eq!(
            days,
            [day("2026-11-25"), day("2026-11-27"), day("2026-11-30")]
        );
        // Booking on a Saturday starts on Monday.
        assert_eq!(
            place(1, day("2026-11-28"), 1, &BTreeMap::new()).unwrap(),
            [day("2026-11-30")]
        );
    }

    #[test]
    fn pending_work_counts_against_capacity() {
        let booked = BTreeMap::from([(day("2026-11-23"), 3), (day("2026-11-24"), 2)]);
        let days = place(2, day("2026-11-23"), 3, &booked).unwrap();
        assert_eq!(days, [day("2026-11-24"), day("2026-11-25")]);
    }

    #[test]
    fn zero_capacity_places_nothing() {
        assert_eq!(place(3, day("2026-11-23"), 0, &BTreeMap::new()), Err(3));
        assert_eq!(place(0, day("2026-11-23"), 0, &BTreeMap::new()), Ok(vec![]));
    }

    #[test]
    fn the_horizon_bounds_how_far_ahead_requests_go() {
        // About 250 business days fit in 365 calendar days; with capacity 1, 300 requests overflow.
        let today = day("2026-11-23");
        let err = place(300, today, 1, &BTreeMap::new()).unwrap_err();
        let fit = 300 - err;
        assert!(
            (245..=255).contains(&fit),
            "{fit} business days in the horizon"
        );
        let days = place(fit, today, 1, &BTreeMap::new()).unwrap();
        assert!(*days.last().unwrap() <= today + Days::new(HORIZON_DAYS));
    }
}

#[cfg(test)]
mod actor_tests;
