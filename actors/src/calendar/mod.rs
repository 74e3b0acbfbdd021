//! The business-day calendar.
//!
//! The capacity scheduler books requests onto *business days*: Monday to Friday in the account's IANA time
//! zone, minus the US federal holidays of 5 U.S.C. 6103. This module owns that definition and the two
//! conversions the scheduler needs between instants and local calendar days ([`local_date`] and
//! [`day_start`]); it reads no clock itself, so callers pass in [`crate::Clock::now`].
//!
//! Holidays are matched on their *observed* dates, because that is the day federal offices (and the carriers
//! and counterparties that follow them) are actually closed: a fixed-date holiday that falls on a Saturday is
//! observed the Friday before, one that falls on a Sunday the Monday after. The Saturday rule can push a
//! holiday into the previous year: when January 1 is a Saturday, New Year's Day is observed on Friday
//! December 31 of the year before, and January 1 itself is not a holiday (it is not a business day anyway).
//!
//! The current statutory list is applied to every year, except that Juneteenth counts only from 2021, the
//! year it became a federal holiday.

use chrono::{
    DateTime, Datelike, Days, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Utc, Weekday,
};
use chrono::{LocalResult, Offset, TimeZone};
use chrono_tz::Tz;

const NEW_YEARS_DAY: &str = "New Year's Day";
const MLK_DAY: &str = "Birthday of Martin Luther King Jr.";
const WASHINGTONS_BIRTHDAY: &str = "Washington's Birthday";
const MEMORIAL_DAY: &str = "Memorial Day";
const JUNETEENTH: &str = "Juneteenth National Independence Day";
const INDEPENDENCE_DAY: &str = "Independence Day";
const LABOR_DAY: &str = "Labor Day";
const COLUMBUS_DAY: &str = "Columbus Day";
const VETERANS_DAY: &str = "Veterans Day";
const THANKSGIVING_DAY: &str = "Thanksgiving Day";
const CHRISTMAS_DAY: &str = "Christmas Day";

/// The first year Juneteenth was a federal holiday (observed Friday 2021-06-18).
const JUNETEENTH_FIRST_YEAR: i32 = 2021;

/// The US federal holiday observed on `date`, if any, by its statutory name, e.g. `Some("Thanksgiving Day")`.
///
/// Fixed-date holidays are reported on their observed dates only: `2026-07-03` (a Friday) is
/// `Some("Independence Day")` and `2026-07-04` (the Saturday itself) is `None`. `2021-12-31` is
/// `Some("New Year's Day")` because January 1, 2022 was a Saturday.
pub fn federal_holiday(date: NaiveDate) -> Option<&'static str> {
    let year = date.year();
    let is_fixed = |month: u32, day: u32| observed(year, month, day) == Some(date);
    let is_nth = |month: u32, weekday: Weekday, n: u8| {
        NaiveDate::from_weekday_of_month_opt(year, month, weekday, n) == Some(date)
    };
    let holiday = match date.month() {
        1 if is_fixed(1, 1) => NEW_YEARS_DAY,
        1 if is_nth(1, Weekday::Mon, 3) => MLK_DAY,
        2 if is_nth(2, Weekday::Mon, 3) => WASHINGTONS_BIRTHDAY,
        5 if last_weekday_of_month(year, 5, Weekday::Mon) == Some(date) => MEMORIAL_DAY,
        6 if year >= JUNETEENTH_FIRST_YEAR && is_fixed(6, 19) => JUNETEENTH,
        7 if is_fixed(7, 4) => INDEPENDENCE_DAY,
        9 if is_nth(9, Weekday::Mon, 1) => LABOR_DAY,
        10 if is_nth(10, Weekday::Mon, 2) => COLUMBUS_DAY,
        11 if is_fixed(11, 11) => VETERANS_DAY,
        11 if is_nth(11, Weekday::Thu, 4) => THANKSGIVING_DAY,
        12 if is_fixed(12, 25) => CHRISTMAS_DAY,
        // Next year's New Year's Day, observed on Friday December 31 when January 1 is a Saturday.
        12 if year
            .checked_add(1)
            .and_then(|next| observed(next, 1, 1))
            .is_some_and(|day| day == date) =>
        {
            NEW_YEARS_DAY
        }
        _ => return None,
    };
    Some(holiday)
}

/// Whether `date` is a business day: Monday to Friday and not an observed federal holiday
/// (see [`federal_holiday`]).
pub fn is_business_day(date: NaiveDate) -> bool {
    !matches!(date.weekday(), Weekday::Sat | Weekday::Sun) && federal_holiday(date).is_none()
}

/// The business days from `start` on, ascending: `start` itself first if it is one.
///
/// The iterator never ends of its own accord (it stops only at [`NaiveDate::MAX`]); bound it with
/// [`Iterator::take`] or [`Iterator::take_while`].
pub fn business_days_from(start: NaiveDate) -> impl Iterator<Item = NaiveDate> {
    std::iter::successors(Some(start), |day| day.succ_opt()).filter(|&day| is_business_day(day))
}

/// The calendar date of `instant` in `tz`.
pub fn local_date(instant: DateTime<Utc>, tz: Tz) -> NaiveDate {
    instant.with_timezone(&tz).date_naive()
}

/// The instant, in UTC, at which the local day `date` begins in `tz`.
///
/// That is the first valid local time at or after 00:00: local midnight itself normally; the earlier of the
/// two instants when midnight is repeated by a fall-back transition; and the end of the gap when a
/// spring-forward transition skips midnight (e.g. `America/Havana`, where 2026-03-08 begins at 01:00 CDT).
/// A day a zone skipped entirely (`Pacific/Apia` 2011-12-30, when Samoa crossed the date line) has no
/// instants of its own, so its "start" is the start of the next day that exists.
pub fn day_start(date: NaiveDate, tz: Tz) -> DateTime<Utc> {
    let midnight = date.and_time(NaiveTime::MIN);
    match tz.from_local_datetime(&midnight) {
        LocalResult::Single(start) => start.to_utc(),
        LocalResult::Ambiguous(earlier, _) => earlier.to_utc(),
        LocalResult::None => gap_end(midnight, tz),
    }
}

/// The date a fixed-date holiday on `month`/`day` of `year` is observed: Saturday moves to the Friday before,
/// Sunday to the Monday after.
fn observed(year: i32, month: u32, day: u32) -> Option<NaiveDate> {
    let date = NaiveDate::from_ymd_opt(year, month, day)?;
    match date.weekday() {
        Weekday::Sat => date.pred_opt(),
        Weekday::Sun => date.succ_opt(),
        _ => Some(date),
    }
}

/// The last `weekday` of `month` in `year`.
fn last_weekday_of_month(year: i32, month: u32, weekday: Weekday) -> Option<NaiveDate> {
    let last = NaiveDate::from_ymd_opt(year, month, 1)?
        .checked_add_months(chrono::Months::new(1))?
        .pred_opt()?;
    let back = (7 + last.weekday().num_days_from_monday() - weekday.num_days_from_monday()) % 7;
    last.checked_sub_days(Days::new(u64::from(back)))
}

/// The UTC offset in force in `tz` at the instant whose UTC reading is `utc`.
fn offset_at(utc: NaiveDateTime, tz: Tz) -> TimeDelta {
    TimeDelta::seconds(i64::from(
        tz.offset_from_utc_datetime(&utc).fix().local_minus_utc(),
    ))
}

/// The first instant whose local reading in `tz` is at or after `local`, which falls in a spring-forward gap.
///
/// Reading `local` with the offset before the transition gives an instant at or after it, reading it with the
/// offset after gives one before it; the transition lies between, and is found by bisection to the second.
/// Local time is monotonic across a single gap, so "the local reading has reached `local`" is a monotone
/// predicate on that interval.
fn gap_end(local: NaiveDateTime, tz: Tz) -> DateTime<Utc> {
    let reached = |utc: NaiveDateTime| utc + offset_at(utc, tz) >= local;
    let first_guess = local - offset_at(local, tz);
    let second_guess = local - offset_at(first_guess, tz);
    let (mut before, mut after) = if first_guess < second_guess {
        (first_guess, second_guess)
    } else {
        (second_guess, first_guess)
    };
    if reached(before) || !reached(after) {
        // Not the single transition expected around `local` (cannot happen with real zone data): step forward
        // from the earlier guess a minute at a time, which is slow but always lands on a valid local time.
        let mut utc = before;
        while !reached(utc) {
            utc += TimeDelta::minutes(1);
        }
        return utc.and_utc();
    }
    // Invariant: !reached(before) && reached(after).
    // Both guesses are whole seconds (as are `local` and every offset), and so is the transition.
    while after - before > TimeDelta::seconds(1) {
        let middle = before + TimeDelta::seconds((after - before).num_seconds() / 2);
        if reached(middle) {
            after = middle;
        } else {
            before = middle;
        }
    }
    after.and_utc()
}

#[cfg(test)]
mod tests;
