//! What Switchboard learns of each payer's phone line: small aggregates of its calls, one record per
//! payer and local day (the payer's zone), kept 90 days. No PHI: counts, sums and a histogram of hold
//! times, by hour of the day.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};
use serde::{Deserialize, Serialize};

use crate::codec::Record;

/// Width of a hold histogram's bucket, in seconds: medians are read to within it.
pub const HOLD_BUCKET_SECONDS: u32 = 30;

/// How long a call spent in each phase, as the dialer measured it (the simulator reports all three; a
/// platform that reports none leaves the call without).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallPhases {
    /// In the phone tree.
    pub ivr_seconds: u32,
    /// On hold before a representative answered (the whole wait, on a hold timeout).
    pub hold_seconds: u32,
    /// Talking with the representative (or listening to a message).
    pub talk_seconds: u32,
}

/// One finished call of a payer, as it is learned: when (in the payer's zone), whether a representative
/// was reached, its phases and its billed minutes.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnedCall {
    /// Its local date in the payer's zone.
    pub day: NaiveDate,
    /// Its local hour, 0-23.
    pub hour: u8,
    /// A representative answered.
    pub reached: bool,
    /// Its phases, when the dialer reported them.
    pub phases: Option<CallPhases>,
    /// Its length rounded up to the minute: what a per-minute price bills.
    pub billed_minutes: u32,
}

/// What one finished request teaches about its payer: its calls, and whether it got its answer.
#[derive(Clone, Debug, PartialEq)]
pub struct PayerLearning {
    /// The payer's canonical (directory) name.
    pub payer: String,
    /// Every call of the request, each once.
    pub calls: Vec<LearnedCall>,
    /// The local date the request finished on, when it ended `SUCCESS` or `PARTIAL` (a completed request).
    pub completed_on: Option<NaiveDate>,
}

/// One hour of one day of a payer's line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HourStats {
    /// Calls placed in that hour.
    pub calls: u32,
    /// Of which a representative answered.
    pub reached: u32,
    /// Calls that reported their phases (the sums below are over these).
    #[serde(default)]
    pub timed: u32,
    /// Seconds in the phone tree.
    #[serde(default)]
    pub ivr_seconds: u64,
    /// Seconds on hold.
    #[serde(default)]
    pub hold_seconds: u64,
    /// Seconds talking.
    #[serde(default)]
    pub talk_seconds: u64,
    /// Holds of the timed calls that waited for a representative: bucket (hold / 30 s) -> calls.
    #[serde(default)]
    pub holds: BTreeMap<u16, u32>,
}

/// One local day of a payer's line: its hours, the minutes billed and the requests completed that day.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayerDayRecord {
    /// By local hour (0-23); hours without a call are absent.
    pub hours: BTreeMap<u8, HourStats>,
    /// Minutes billed for that day's calls (each rounded up to the minute).
    #[serde(default)]
    pub billed_minutes: u64,
    /// Requests to this payer that finished that day `SUCCESS` or `PARTIAL`.
    #[serde(default)]
    pub completed_requests: u32,
}

impl PayerDayRecord {
    /// Adds one call.
    pub fn add_call(&mut self, call: &LearnedCall) {
        let hour = self.hours.entry(call.hour).or_default();
        hour.calls += 1;
        hour.reached += u32::from(call.reached);
        if let Some(phases) = call.phases {
            hour.timed += 1;
            hour.ivr_seconds += u64::from(phases.ivr_seconds);
            hour.hold_seconds += u64::from(phases.hold_seconds);
            hour.talk_seconds += u64::from(phases.talk_seconds);
            if phases.hold_seconds > 0 {
                let bucket = (phases.hold_seconds / HOLD_BUCKET_SECONDS).min(u32::from(u16::MAX));
                *hour.holds.entry(bucket as u16).or_default() += 1;
            }
        }
        self.billed_minutes += u64::from(call.billed_minutes);
    }
}

impl HourStats {
    /// Adds `other` (another day's same hour, say) into this one.
    pub fn merge(&mut self, other: &HourStats) {
        self.calls += other.calls;
        self.reached += other.reached;
        self.timed += other.timed;
        self.ivr_seconds += other.ivr_seconds;
        self.hold_seconds += other.hold_seconds;
        self.talk_seconds += other.talk_seconds;
        for (bucket, count) in &other.holds {
            *self.holds.entry(*bucket).or_default() += count;
        }
    }

    /// The median hold, in seconds (the middle of its bucket), when any hold was measured.
    pub fn median_hold_seconds(&self) -> Option<u32> {
        let total: u64 = self.holds.values().map(|&c| u64::from(c)).sum();
        if total == 0 {
            return None;
        }
        // The lower middle sample: the first bucket whose running count passes half.
        let middle = total.div_ceil(2);
        let mut seen = 0u64;
        for (bucket, count) in &self.holds {
            seen += u64::from(*count);
            if seen >= middle {
                return Some(u32::from(*bucket) * HOLD_BUCKET_SECONDS + HOLD_BUCKET_SECONDS / 2);
            }
        }
        None
    }
}

/// A payer's week: its days merged by weekday and hour (in the payer's zone), with their billed minutes
/// and completed requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayerWeek {
    /// Index `(weekday from Monday 0) * 24 + hour`.
    hours: Vec<HourStats>,
    /// Minutes billed for the calls.
    pub billed_minutes: u64,
    /// Requests completed (`SUCCESS` or `PARTIAL`).
    pub completed_requests: u32,
}

impl PayerWeek {
    /// The week of `days`.
    pub fn of(days: &[(NaiveDate, PayerDayRecord)]) -> PayerWeek {
        let mut week = PayerWeek {
            hours: vec![HourStats::default(); 7 * 24],
            billed_minutes: 0,
            completed_requests: 0,
        };
        for (day, record) in days {
            let weekday = day.weekday().num_days_from_monday() as usize;
            for (hour, stats) in &record.hours {
                if let Some(slot) = week.hours.get_mut(weekday * 24 + usize::from(*hour)) {
                    slot.merge(stats);
                }
            }
            week.billed_minutes += record.billed_minutes;
            week.completed_requests += record.completed_requests;
        }
        week
    }

    /// The hour `hour` (0-23) of `weekday` (0 = Monday).
    pub fn hour(&self, weekday: usize, hour: usize) -> &HourStats {
        &self.hours[(weekday % 7) * 24 + hour % 24]
    }

    /// Every hour merged.
    pub fn total(&self) -> HourStats {
        let mut total = HourStats::default();
        for hour in &self.hours {
            total.merge(hour);
        }
        total
    }
}

impl Record for PayerDayRecord {
    const KIND: &'static str = "payer day";
    const VERSION: u8 = 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(hour: u8, reached: bool, hold: Option<u32>) -> LearnedCall {
        LearnedCall {
            day: NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(),
            hour,
            reached,
            phases: hold.map(|hold_seconds| CallPhases {
                ivr_seconds: 60,
                hold_seconds,
                talk_seconds: 300,
            }),
            billed_minutes: 7,
        }
    }

    #[test]
    fn a_day_counts_calls_by_hour_and_reads_the_median_hold() {
        let mut day = PayerDayRecord::default();
        for hold in [120, 600, 610, 1800, 2700] {
            day.add_call(&call(9, true, Some(hold)));
        }
        day.add_call(&call(9, false, None));
        day.add_call(&call(15, true, Some(300)));
        let nine = &day.hours[&9];
        assert_eq!((nine.calls, nine.reached, nine.timed), (6, 5, 5));
        assert_eq!(
            nine.median_hold_seconds(),
            Some(615),
            "600-629 s, read as 615"
        );
        assert_eq!(day.hours[&15].median_hold_seconds(), Some(315));
        assert_eq!(day.billed_minutes, 7 * 7);
        let mut merged = nine.clone();
        merged.merge(&day.hours[&15]);
        assert_eq!(merged.calls, 7);
        assert_eq!(merged.median_hold_seconds(), Some(615));
        assert_eq!(HourStats::default().median_hold_seconds(), None);
    }

    #[test]
    fn a_week_merges_days_by_weekday_and_hour() {
        let monday = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let mut one = PayerDayRecord::default();
        one.add_call(&call(9, true, Some(600)));
        one.completed_requests = 1;
        let mut two = PayerDayRecord::default();
        two.add_call(&call(9, false, None));
        let week = PayerWeek::of(&[
            (monday, one.clone()),
            (monday + chrono::Days::new(7), two),
            (monday + chrono::Days::new(2), one),
        ]);
        assert_eq!(week.hour(0, 9).calls, 2, "both Mondays");
        assert_eq!(week.hour(2, 9).calls, 1, "the Wednesday");
        assert_eq!(week.hour(1, 9).calls, 0);
        assert_eq!(week.total().calls, 3);
        assert_eq!((week.billed_minutes, week.completed_requests), (21, 2));
    }
}
