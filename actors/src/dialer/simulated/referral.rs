//! The numbers representatives refer callers to: fictional toll-free numbers the simulator recognises
//! again when the step dials them, so a call knows it is on a referred number (no second referral, likelier
//! wrong department) without seeing where the number came from.

use std::collections::BTreeMap;

use super::profile::PayerFamily;
use crate::dialer::sandbox::dice::Dice;
use crate::dialer::CallJob;

/// Toll-free area codes of referral numbers.
const REFERRAL_AREAS: [&str; 5] = ["800", "888", "877", "866", "855"];
/// Referral numbers are `<area> 555 0180` to `<area> 555 0199`: fictional (NANP 555-01xx), valid toll-free
/// numbers, and outside the payer directory's 0100-0179, so a referral never collides with a listed payer.
const REFERRAL_LINES: (u64, u64) = (180, 199);

/// A ten-digit number a representative refers the caller to, fixed by `dice`.
pub(crate) fn referral_number(dice: &Dice) -> String {
    let area = dice.choose("sim:referral:area", &REFERRAL_AREAS);
    let line = dice.range("sim:referral:line", REFERRAL_LINES.0, REFERRAL_LINES.1);
    format!("{area}5550{line}")
}

/// Whether `number` is one [`referral_number`] gives out (how a call knows it dials a referred number).
pub(crate) fn is_referral_number(number: &str) -> bool {
    number.len() == 10
        && number.bytes().all(|b| b.is_ascii_digit())
        && REFERRAL_AREAS.contains(&&number[..3])
        && &number[3..7] == "5550"
        && number[7..]
            .parse::<u64>()
            .is_ok_and(|l| (REFERRAL_LINES.0..=REFERRAL_LINES.1).contains(&l))
}

/// The dice a referral number is drawn with. A Blue plan refers a member to the home plan named by the
/// member ID's three-character prefix, so the same member always gets the same number; other payers'
/// departments are drawn per call.
pub(crate) fn referral_dice(job: &CallJob, family: PayerFamily, call: &Dice) -> Dice {
    let prefix: String = job
        .inputs
        .get("memberId")
        .map(|id| {
            id.trim()
                .chars()
                .take(3)
                .collect::<String>()
                .to_ascii_uppercase()
        })
        .unwrap_or_default();
    match family == PayerFamily::BlueCrossBlueShield && prefix.len() == 3 {
        true => Dice::new(
            job.seed,
            &BTreeMap::from([("homePlan".to_string(), prefix)]),
            0,
            1,
        ),
        false => call.clone(),
    }
}
