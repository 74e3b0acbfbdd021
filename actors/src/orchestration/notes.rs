//! `payer_notes`, the prompt variable a voice agent gets about the payer it is calling (operator contract
//! §11): what a person placing the next call to that payer would want to know, from what was learned of
//! its line over the last 90 days: how often a representative answers, the median hold, the hours that
//! held shortest and longest (in the payer's zone), and what to expect at the hour of this call. The
//! platforms report no phone-tree path Switchboard could keep, so none is told. Empty before anything
//! was learned.

use chrono::{DateTime, Datelike, Timelike, Utc};
use chrono_tz::Tz;
use switchboard_storage::{HourStats, PayerWeek};

/// Calls an hour of the week needs before the notes name it.
const NOTED_CALLS: u32 = 5;

/// How many of the shortest hours the notes name.
const SHORTEST: usize = 3;

const WEEKDAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];

fn minutes(seconds: u32) -> String {
    format!("{} min", (seconds + 30) / 60)
}

/// The notes on `payer` for a call placed at `at`, read in the payer's `zone`.
pub(crate) fn payer_notes(payer: &str, week: &PayerWeek, at: DateTime<Utc>, zone: Tz) -> String {
    let total = week.total();
    if total.calls == 0 {
        return String::new();
    }
    let mut notes = vec![format!(
        "{payer}, last 90 days: {} call{}, {}% reached a representative",
        total.calls,
        if total.calls == 1 { "" } else { "s" },
        100 * total.reached / total.calls
    )];
    if let Some(hold) = total.median_hold_seconds() {
        notes[0].push_str(&format!(", median hold {}", minutes(hold)));
    }
    notes[0].push('.');
    let mut hours: Vec<(u32, usize, usize)> = (0..7)
        .flat_map(|d| (0..24).map(move |h| (d, h)))
        .filter_map(|(d, h)| {
            let stats: &HourStats = week.hour(d, h);
            let hold = stats.median_hold_seconds()?;
            (stats.calls >= NOTED_CALLS).then_some((hold, d, h))
        })
        .collect();
    hours.sort();
    let label =
        |(hold, d, h): (u32, usize, usize)| format!("{} {h}:00 ({})", WEEKDAYS[d], minutes(hold));
    if hours.len() > 1 {
        let shortest: Vec<String> = hours.iter().take(SHORTEST).map(|&x| label(x)).collect();
        notes.push(format!(
            "Shortest holds (payer's time): {}. Longest: {}.",
            shortest.join(", "),
            label(hours[hours.len() - 1])
        ));
    }
    let local = at.with_timezone(&zone);
    let (d, h) = (
        local.weekday().num_days_from_monday() as usize,
        local.hour() as usize,
    );
    let now = week.hour(d, h);
    match now.median_hold_seconds() {
        Some(hold) if now.calls >= NOTED_CALLS => notes.push(format!(
            "This call is placed {} {h}:00 payer's time, where holds ran about {} (median of {} calls).",
            WEEKDAYS[d],
            minutes(hold),
            now.calls
        )),
        _ => notes.push(format!(
            "Little is known of {} {h}:00 payer's time, the hour of this call.",
            WEEKDAYS[d]
        )),
    }
    notes.join(" ")
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use switchboard_storage::{CallPhases, LearnedCall, PayerDayRecord};

    use super::*;

    #[test]
    fn the_notes_tell_the_reach_the_hold_and_the_best_hours() {
        let monday = NaiveDate::from_ymd_opt(2026, 11, 16).unwrap();
        let mut day = PayerDayRecord::default();
        for (hour, hold, reached) in [(9, 1500, true), (15, 300, true), (11, 900, false)] {
            for _ in 0..6 {
                day.add_call(&LearnedCall {
                    day: monday,
                    hour,
                    reached,
                    phases: Some(CallPhases {
                        ivr_seconds: 60,
                        hold_seconds: hold,
                        talk_seconds: 300,
                    }),
                    billed_minutes: 10,
                });
            }
        }
        let week = PayerWeek::of(&[(monday, day)]);
        let at: DateTime<Utc> = "2026-11-23T14:30:00Z".parse().unwrap();
        let notes = payer_notes("Aetna", &week, at, chrono_tz::America::New_York);
        assert_eq!(
            notes,
            "Aetna, last 90 days: 18 calls, 66% reached a representative, median hold 15 min. \
             Shortest holds (payer's time): Mon 15:00 (5 min), Mon 11:00 (15 min), Mon 9:00 (25 min). \
             Longest: Mon 9:00 (25 min). \
             This call is placed Mon 9:00 payer's time, where holds ran about 25 min (median of 6 calls)."
        );
        let empty = PayerWeek::of(&[]);
        assert_eq!(payer_notes("Aetna", &empty, at, chrono_tz::UTC), "");
    }
}
