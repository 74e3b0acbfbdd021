//! How long a simulated call takes: its parts in simulated seconds, and the wall time it waits.

use std::time::Duration;

use super::decide::Outcome;
use super::profile::PayerProfile;
use super::MAX_WAIT_SECONDS;
use crate::dialer::sandbox::dice::Dice;

/// The agent hangs up after this long on hold.
pub(crate) const HOLD_LIMIT_SECONDS: u32 = 45 * 60;

/// How long each part of a call took, in simulated seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Timing {
    /// In the phone tree.
    pub ivr: u32,
    /// On hold.
    pub hold: u32,
    /// Talking (or listening to a message).
    pub talk: u32,
}

impl Timing {
    /// The whole call.
    pub(crate) fn total(&self) -> u32 {
        self.ivr + self.hold + self.talk
    }
}

/// A hold before a representative answers: log-normal around the profile's median times the hour of
/// the week's factor (`week`, see `week.rs`; a sum of uniform rolls stands in for the normal), within
/// 2-44 minutes.
fn hold_seconds(profile: &PayerProfile, week: f64, dice: &Dice) -> u32 {
    let sum: f64 = (0..4)
        .map(|i| dice.pick(&format!("sim:hold#{i}"), 10_000) as f64 / 10_000.0)
        .sum();
    let z = (sum - 2.0) * 3f64.sqrt();
    let minutes = (profile.hold_minutes_median * week * (0.5 * z).exp()).clamp(2.0, 44.0);
    (minutes * 60.0).round() as u32
}

/// The timing of a call with `outcome`: phone tree 60-300 s, hold per profile and hour of the week
/// (`week`, the factor of the hour the call is placed in), talk 4-12 minutes when the call completes
/// (shorter when it does not).
pub(crate) fn timing(outcome: Outcome, profile: &PayerProfile, week: f64, dice: &Dice) -> Timing {
    let ivr = dice.range("sim:timing:ivr", 60, 300) as u32;
    let talk = |lo, hi| dice.range("sim:timing:talk", lo, hi) as u32;
    match outcome {
        Outcome::WrongNumber => Timing {
            ivr: ivr / 2,
            hold: dice.range("sim:timing:hold", 60, 300) as u32,
            talk: talk(45, 120),
        },
        Outcome::IvrFailure => Timing {
            ivr: dice.range("sim:timing:ivr-loop", 150, 300) as u32,
            hold: 0,
            talk: 0,
        },
        Outcome::HoldTimeout => Timing {
            ivr,
            hold: HOLD_LIMIT_SECONDS,
            talk: 0,
        },
        Outcome::Voicemail => Timing {
            ivr: ivr / 3,
            hold: 0,
            talk: talk(20, 60),
        },
        Outcome::Referred => Timing {
            ivr,
            hold: hold_seconds(profile, week, dice),
            talk: talk(90, 240),
        },
        Outcome::MissingInput(_) | Outcome::NotFound(_) | Outcome::Refusal => Timing {
            ivr,
            hold: hold_seconds(profile, week, dice),
            talk: talk(120, 360),
        },
        Outcome::Completed => Timing {
            ivr,
            hold: hold_seconds(profile, week, dice),
            talk: talk(240, 720),
        },
    }
}

/// Wall time a call of `duration` simulated seconds takes at `time_scale` (capped; none when negligible).
pub(crate) fn wall_wait(duration: u32, time_scale: f64) -> Option<Duration> {
    let scale = if time_scale > 0.0 { time_scale } else { 1.0 };
    let seconds = f64::from(duration.min(MAX_WAIT_SECONDS)) / scale;
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|wait| !wait.is_zero())
}
