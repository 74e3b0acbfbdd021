//! The week of a payer's line: holds by hour and weekday in the payer's zone, seeded per payer.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::*;
use crate::dialer::simulated::week::{hold_factor, payer_seed};

const PAYERS: [&str; 5] = [
    "Aetna",
    "Medicare Part B - Novitas",
    "Blue Cross Blue Shield of Texas",
    "Texas Medicaid",
    "Geisinger Health Plan",
];

const MONDAY: usize = 0;
const WEDNESDAY: usize = 2;

#[test]
fn the_week_is_deterministic_per_seed_and_payer() {
    for payer in PAYERS {
        assert_eq!(payer_seed(7, payer), payer_seed(7, payer));
        assert_eq!(
            payer_seed(7, payer),
            payer_seed(7, &payer.to_uppercase()),
            "any spelling of a payer is the same line"
        );
        for (weekday, hour) in [(0, 9), (2, 15), (4, 11), (6, 3)] {
            let seed = payer_seed(7, payer);
            assert_eq!(
                hold_factor(seed, weekday, hour),
                hold_factor(seed, weekday, hour)
            );
        }
    }
}

#[test]
fn monday_morning_holds_longer_than_wednesday_afternoon_for_every_payer_and_seed() {
    for seed in 0..50 {
        for payer in PAYERS {
            let line = payer_seed(seed, payer);
            let (monday, wednesday) = (
                hold_factor(line, MONDAY, 9),
                hold_factor(line, WEDNESDAY, 15),
            );
            assert!(
                monday > 2.0 * wednesday,
                "{payer} seed {seed}: Monday 9:00 {monday}, Wednesday 15:00 {wednesday}"
            );
            // Plausible: from about half the payer's median to about twice it.
            for weekday in 0..7 {
                for hour in 0..24 {
                    let factor = hold_factor(line, weekday, hour);
                    assert!((0.35..=2.5).contains(&factor), "{factor}");
                }
            }
        }
    }
}

#[test]
fn other_seeds_and_other_payers_have_other_weeks() {
    let week = |line: u64| -> Vec<f64> {
        (0..7)
            .flat_map(|d| (0..24).map(move |h| hold_factor(line, d, h)))
            .collect()
    };
    assert_ne!(week(payer_seed(7, "Aetna")), week(payer_seed(8, "Aetna")));
    assert_ne!(week(payer_seed(7, "Aetna")), week(payer_seed(7, "Cigna")));
}

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// Mean hold (the report's length less the phone tree and talk is not reported apart, so the whole
/// length stands in: phone tree and talk do not depend on the hour) over many requests placed at `when`.
async fn mean_length(when: DateTime<Utc>, zone: Tz) -> u64 {
    let dialer = SimulatedPayerDialer::with_profile_override(quiet());
    let mut total = 0u64;
    for seed in 0..200 {
        let mut call = job(vob(), inputs("Aetna", &[]), 0, 1, seed);
        call.placed_at = when;
        call.payer_zone = zone;
        total += u64::from(place(&dialer, call).await.duration_seconds);
    }
    total / 200
}

#[tokio::test]
async fn calls_on_monday_morning_run_longer_than_on_wednesday_afternoon_in_the_payers_zone() {
    let chicago: Tz = "America/Chicago".parse().unwrap();
    // Monday 2026-11-23 09:30 and Wednesday 2026-11-25 15:30, Chicago time (UTC-6).
    let monday = mean_length(at("2026-11-23T15:30:00Z"), chicago).await;
    let wednesday = mean_length(at("2026-11-25T21:30:00Z"), chicago).await;
    assert!(
        monday > wednesday + 8 * 60,
        "Monday {monday} s, Wednesday {wednesday} s"
    );
    // The same instant read in UTC is Wednesday 21:30, off hours: not the quiet afternoon.
    let utc = mean_length(at("2026-11-25T21:30:00Z"), Tz::UTC).await;
    assert!(utc > wednesday, "UTC {utc} s, Chicago {wednesday} s");
}
