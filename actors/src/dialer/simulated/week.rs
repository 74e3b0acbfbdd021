//! The week of a payer's phone line: how much longer or shorter than its median a hold runs at a given
//! hour of a given weekday, in the payer's own zone. Real provider lines share one shape (everybody calls
//! on Monday morning, right after the weekend's backlog; mid-week afternoons are quiet), and each line
//! deviates from it in its own way: a per-payer seed (the simulation seed and the payer's normalized
//! name) shifts every hour of the week by up to ±20 %. Deterministic: the same seed, payer and instant
//! always give the same factor.

use chrono::{DateTime, Datelike, Timelike, Utc};
use chrono_tz::Tz;
use sha2::{Digest, Sha256};

use super::profile::normalize_payer_name;

/// The weekday factor, Monday first: Monday carries the weekend's backlog, Wednesday and Thursday are
/// the quietest days, Friday fills up again before the weekend.
const WEEKDAY_FACTOR: [f64; 7] = [1.35, 1.05, 0.8, 0.85, 1.0, 1.0, 1.0];

/// The hour factor over a day in the payer's zone: the rush when the lines open (8-10), a second wave
/// around lunch when fewer representatives staff the phones, the quiet mid-afternoon (15:00 the
/// shortest), a small rise before closing. Outside business hours lines are rarely called: about the
/// median.
const HOUR_FACTOR: [f64; 24] = [
    0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.1, // 0-7
    1.35, 1.5, 1.35, 1.1, 1.15, 1.0, 0.8, 0.6, 0.75, // 8-16
    0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, // 17-23
];

/// Bounds of a payer's own deviation from the shared shape, per hour of the week.
const PAYER_DEVIATION: (f64, f64) = (0.8, 1.2);

/// The seed of one payer's week: the simulation seed and the payer's normalized name, so that every
/// spelling of a payer gets the same week and another `simulation.seed` another one.
pub(crate) fn payer_seed(seed: u64, payer_name: &str) -> u64 {
    let digest = Sha256::digest(format!(
        "payer-week:{seed}:{}",
        normalize_payer_name(payer_name)
    ));
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(word)
}

/// The hold factor of the payer seeded `payer_seed` at `weekday` (0 = Monday) and `hour` (0-23, local).
pub(crate) fn hold_factor(payer_seed: u64, weekday: usize, hour: usize) -> f64 {
    let (weekday, hour) = (weekday % 7, hour % 24);
    let digest = Sha256::digest(format!("payer-hour:{payer_seed}:{weekday}:{hour}"));
    let roll = f64::from(u16::from_le_bytes([digest[0], digest[1]])) / f64::from(u16::MAX);
    let deviation = PAYER_DEVIATION.0 + (PAYER_DEVIATION.1 - PAYER_DEVIATION.0) * roll;
    WEEKDAY_FACTOR[weekday] * HOUR_FACTOR[hour] * deviation
}

/// The hold factor of a call placed at `at`, read in the payer's zone `zone`.
pub(crate) fn hold_factor_at(payer_seed: u64, at: DateTime<Utc>, zone: Tz) -> f64 {
    let local = at.with_timezone(&zone);
    hold_factor(
        payer_seed,
        local.weekday().num_days_from_monday() as usize,
        local.hour() as usize,
    )
}
