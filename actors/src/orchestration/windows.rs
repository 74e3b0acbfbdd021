//! Calling when the payer answers fastest (operator contract §11, account feature `learned_call_windows`):
//! the instant a call is placed at, chosen from what was learned of its payer's line. Among the hours
//! from now to the end of the request's due date that fall in the payer's calling hours, the one whose
//! hour of the week (in the payer's zone) has the shortest median hold wins, counting only hours with at
//! least [`MIN_CALLS`] calls of that payer; with none, the call is placed now, as without the feature.
//! The step writes the chosen instant as the call's `placed_at` before anything waits on it, and the call
//! actor waits for it ([`wait_until`]), so a restart waits for the same instant.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Datelike, Timelike, Utc};
use chrono_tz::Tz;
use switchboard_storage::{
    CallingHoursRecord, PayerWeek, StorageError, Store, PAYER_STATS_KEPT_DAYS,
};

use super::limits::within_hours;
use crate::Clock;

/// Calls an hour of the week needs before its median hold is trusted.
pub const MIN_CALLS: u32 = 20;

/// The payers' learned weeks, read from the store at most once per payer per hour of the clock: the
/// aggregates change only as requests end, and a window an hour stale chooses as well.
#[derive(Default)]
pub struct LearnedWeeks {
    weeks: Mutex<HashMap<String, (i64, Arc<PayerWeek>)>>,
}

impl LearnedWeeks {
    /// The learned week of `payer` (a directory name) as of `now`.
    pub(crate) async fn week(
        &self,
        store: &Store,
        payer: &str,
        now: DateTime<Utc>,
    ) -> Result<Arc<PayerWeek>, StorageError> {
        let hour = now.timestamp().div_euclid(3600);
        if let Some((read_at, week)) = self.weeks.lock().expect("weeks lock").get(payer) {
            if *read_at == hour {
                return Ok(Arc::clone(week));
            }
        }
        let since = now.date_naive() - chrono::Days::new(u64::from(PAYER_STATS_KEPT_DAYS));
        let days = store.payer_days(payer, since).await?;
        let week = Arc::new(PayerWeek::of(&days));
        self.weeks
            .lock()
            .expect("weeks lock")
            .insert(payer.to_owned(), (hour, Arc::clone(&week)));
        Ok(week)
    }
}

/// The instant to place a call at: `now`, or the start of a later hour before `deadline` inside `hours`
/// (in `zone`, the payer's) whose hour of the week held shorter, by `week`. Pure.
pub fn learned_instant(
    week: &PayerWeek,
    now: DateTime<Utc>,
    deadline: DateTime<Utc>,
    zone: Tz,
    hours: CallingHoursRecord,
) -> DateTime<Utc> {
    let expected = |at: DateTime<Utc>| {
        let local = at.with_timezone(&zone);
        let stats = week.hour(
            local.weekday().num_days_from_monday() as usize,
            local.hour() as usize,
        );
        (stats.calls >= MIN_CALLS)
            .then(|| stats.median_hold_seconds())
            .flatten()
    };
    let local = now.with_timezone(&zone);
    let this_hour = now
        - chrono::Duration::seconds(i64::from(local.minute() * 60 + local.second()))
        - chrono::Duration::nanoseconds(i64::from(local.nanosecond()));
    let later = (1..)
        .map(|k| this_hour + chrono::Duration::hours(k))
        .take_while(|at| *at < deadline);
    let mut best: Option<(u32, DateTime<Utc>)> = None;
    for at in std::iter::once(now).chain(later) {
        if !within_hours(at, zone, hours) {
            continue;
        }
        if let Some(hold) = expected(at) {
            if best.is_none_or(|(shortest, _)| hold < shortest) {
                best = Some((hold, at));
            }
        }
    }
    best.map_or(now, |(_, at)| at)
}

/// Waits until the clock reaches `at`: on a manual clock, until it is moved there.
pub(crate) async fn wait_until(clock: &Clock, at: DateTime<Utc>) {
    let mut ticks = clock.ticks();
    while clock.now() < at {
        let wall = (at - clock.now())
            .to_std()
            .unwrap_or_default()
            .clamp(Duration::from_millis(50), Duration::from_secs(60));
        tokio::select! {
            _ = ticks.changed() => {}
            () = tokio::time::sleep(wall) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use switchboard_storage::{CallPhases, LearnedCall, PayerDayRecord};

    use super::*;
    use crate::orchestration::limits::DEFAULT_HOURS;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    /// A week where `calls` calls of each listed (local) hour of Monday 2026-11-16 held `hold` seconds.
    fn week(hours: &[(u8, u32, u32)]) -> PayerWeek {
        let day = NaiveDate::from_ymd_opt(2026, 11, 16).unwrap();
        let mut record = PayerDayRecord::default();
        for &(hour, calls, hold) in hours {
            for _ in 0..calls {
                record.add_call(&LearnedCall {
                    day,
                    hour,
                    reached: true,
                    phases: Some(CallPhases {
                        ivr_seconds: 60,
                        hold_seconds: hold,
                        talk_seconds: 300,
                    }),
                    billed_minutes: 10,
                });
            }
        }
        PayerWeek::of(&[(day, record)])
    }

    const NY: Tz = chrono_tz::America::New_York;

    #[test]
    fn the_call_waits_for_the_shortest_known_hold_before_the_deadline() {
        let learned = week(&[(9, 25, 1500), (15, 25, 300), (11, 25, 900)]);
        // Monday 2026-11-23 09:10 New York; the due date ends at midnight.
        let (now, end) = (at("2026-11-23T14:10:00Z"), at("2026-11-24T05:00:00Z"));
        assert_eq!(
            learned_instant(&learned, now, end, NY, DEFAULT_HOURS),
            at("2026-11-23T20:00:00Z"),
            "15:00 New York"
        );
        // A deadline before 15:00: the best hour before it.
        let noon = at("2026-11-23T17:00:00Z");
        assert_eq!(
            learned_instant(&learned, now, noon, NY, DEFAULT_HOURS),
            at("2026-11-23T16:00:00Z"),
            "11:00 New York"
        );
        // Already the best hour: now.
        let three = at("2026-11-23T20:20:00Z");
        assert_eq!(
            learned_instant(&learned, three, end, NY, DEFAULT_HOURS),
            three
        );
    }

    #[test]
    fn hours_with_fewer_than_twenty_calls_or_outside_calling_hours_are_not_chosen() {
        let now = at("2026-11-23T14:10:00Z");
        let end = at("2026-11-24T05:00:00Z");
        let thin = week(&[(9, 25, 1500), (15, MIN_CALLS - 1, 60)]);
        assert_eq!(learned_instant(&thin, now, end, NY, DEFAULT_HOURS), now);
        // 18:00 held shortest, but the lines close at 17:00.
        let late = week(&[(9, 25, 1500), (18, 25, 60)]);
        assert_eq!(learned_instant(&late, now, end, NY, DEFAULT_HOURS), now);
        // Nothing learned: now.
        assert_eq!(
            learned_instant(&week(&[]), now, end, NY, DEFAULT_HOURS),
            now
        );
    }
}
