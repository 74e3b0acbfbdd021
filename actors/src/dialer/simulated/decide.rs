//! The pure decision of one call: what happens ([`decide`], from a profile, the call's circumstances and
//! its dice), and which failure codes fit the call (not-found entities, missing inputs).

use std::collections::BTreeMap;

use super::profile::{PayerFamily, PayerProfile};
use crate::dialer::sandbox::dice::Dice;

/// What happens on one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The number reaches another department, which cannot transfer.
    WrongNumber,
    /// The phone tree loops; no representative.
    IvrFailure,
    /// The hold exceeds the agent's hold limit.
    HoldTimeout,
    /// Only voicemail or an after-hours message.
    Voicemail,
    /// The representative gives another number.
    Referred,
    /// The representative needs an input the request lacks (the code names it).
    MissingInput(&'static str),
    /// The payer cannot find the entity (the code names it).
    NotFound(&'static str),
    /// The representative refuses to release the information.
    Refusal,
    /// The representative answers every question.
    Completed,
}

/// The circumstances of a call that the decision depends on, besides the profile.
#[derive(Clone, Debug, Default)]
pub(crate) struct Situation {
    /// A referral may happen: the first attempt of a step, not on a number a representative gave out.
    pub referral_allowed: bool,
    /// The dialed number is one a representative gave out (wrong numbers are far likelier there).
    pub dialing_referral: bool,
    /// The call redials a number whose last call went unanswered (voicemail or hold timeout): a line that
    /// is swamped or closed now tends to stay so, so both are likelier again.
    pub redial_after_no_answer: bool,
    /// Missing-input codes whose input is absent, with the chance that the representative insists on it.
    pub missing: Vec<(&'static str, f64)>,
    /// Not-found codes with their weights, for this schema.
    pub not_found: &'static [(&'static str, u64)],
}

/// How many times likelier a wrong number is on a number a representative gave out.
const REFERRAL_WRONG_NUMBER_FACTOR: f64 = 8.0;

/// How many times likelier voicemail and hold timeouts are on a redial after an unanswered call.
const NO_ANSWER_STREAK_FACTOR: f64 = 2.5;

/// Whether an event of probability `p` happens on the roll `label`.
pub(crate) fn chance(dice: &Dice, label: &str, p: f64) -> bool {
    const SCALE: u64 = 1_000_000;
    match p {
        p if p.is_nan() || p <= 0.0 => false,
        p if p >= 1.0 => true,
        p => dice.pick(label, SCALE) < (p * SCALE as f64).round() as u64,
    }
}

/// What happens on a call, stage by stage: the number reaches the right line (else a wrong department),
/// the phone tree lets the agent through (else IVR failure), a representative answers within the hold
/// limit (else hold timeout) during business hours (else voicemail), both likelier on a redial after an
/// unanswered call; the representative may refer the caller elsewhere, insist on an absent input, fail to
/// find the member, claim or provider, or refuse; otherwise the call completes. Pure: the same arguments always give the same outcome.
pub(crate) fn decide(profile: &PayerProfile, situation: &Situation, dice: &Dice) -> Outcome {
    let wrong_number = match situation.dialing_referral {
        true => profile.wrong_number_rate * REFERRAL_WRONG_NUMBER_FACTOR,
        false => profile.wrong_number_rate,
    };
    if chance(dice, "sim:wrong-number", wrong_number) {
        return Outcome::WrongNumber;
    }
    if chance(dice, "sim:ivr-failure", profile.ivr_failure_rate) {
        return Outcome::IvrFailure;
    }
    let streak = match situation.redial_after_no_answer {
        true => NO_ANSWER_STREAK_FACTOR,
        false => 1.0,
    };
    if chance(dice, "sim:hold-timeout", profile.hold_timeout_rate * streak) {
        return Outcome::HoldTimeout;
    }
    if chance(dice, "sim:voicemail", profile.voicemail_rate * streak) {
        return Outcome::Voicemail;
    }
    if situation.referral_allowed && chance(dice, "sim:referral", profile.referral_rate) {
        return Outcome::Referred;
    }
    for (code, p) in &situation.missing {
        if chance(dice, &format!("sim:missing:{code}"), *p) {
            return Outcome::MissingInput(code);
        }
    }
    if !situation.not_found.is_empty() && chance(dice, "sim:not-found", profile.not_found_rate) {
        return Outcome::NotFound(weighted(dice, "sim:not-found:code", situation.not_found));
    }
    if chance(dice, "sim:refusal", profile.refusal_rate) {
        return Outcome::Refusal;
    }
    Outcome::Completed
}

fn weighted(dice: &Dice, label: &str, items: &[(&'static str, u64)]) -> &'static str {
    let mut roll = dice.pick(label, items.iter().map(|(_, w)| w).sum());
    for (item, weight) in items {
        if roll < *weight {
            return item;
        }
        roll -= weight;
    }
    items[0].0
}

/// Not-found codes by the kind of request: claims are missed more often than members, and so on.
pub(crate) fn not_found_codes(request_type: &str) -> &'static [(&'static str, u64)] {
    if request_type.contains("auth") {
        &[
            ("PRIOR_AUTH_NOT_FOUND", 5),
            ("MEMBER_NOT_FOUND", 3),
            ("PROVIDER_NOT_FOUND", 2),
        ]
    } else if request_type.contains("claim") {
        &[
            ("CLAIM_NOT_FOUND", 6),
            ("MEMBER_NOT_FOUND", 3),
            ("PROVIDER_NOT_FOUND", 1),
        ]
    } else {
        &[("MEMBER_NOT_FOUND", 7), ("PROVIDER_NOT_FOUND", 3)]
    }
}

/// An input a representative may insist on.
struct MissingRule {
    code: &'static str,
    /// Input keys any of which supplies it.
    keys: &'static [&'static str],
    /// Families whose lines insist on it at the profile's full rate; `None`: any family, at a low rate.
    families: Option<&'static [PayerFamily]>,
    /// Words one of which the request type must contain (none: any request type).
    request_words: &'static [&'static str],
}

const MISSING_RULES: [MissingRule; 8] = {
    use PayerFamily::*;
    const fn rule(
        code: &'static str,
        keys: &'static [&'static str],
        families: Option<&'static [PayerFamily]>,
        request_words: &'static [&'static str],
    ) -> MissingRule {
        MissingRule {
            code,
            keys,
            families,
            request_words,
        }
    }
    [
        rule(
            "PROVIDER_PTAN_MISSING",
            &["ptan"],
            Some(&[MedicareContractor]),
            &[],
        ),
        rule(
            "MEMBER_GROUP_MISSING",
            &["groupNumber"],
            Some(&[NationalCarrier, BlueCrossBlueShield, Regional, Unknown]),
            &[],
        ),
        rule(
            "MEMBER_SSN_MISSING",
            &["sponsorSsn", "memberSsn", "ssn"],
            Some(&[Military]),
            &[],
        ),
        rule(
            "PROVIDER_CALLBACK_NUMBER_MISSING",
            &["callbackPhoneNumber"],
            Some(&[Medicaid, ManagedCare]),
            &[],
        ),
        rule(
            "CLAIM_NUMBER_MISSING",
            &["claimNumber", "payerClaimId"],
            None,
            &["claim"],
        ),
        rule(
            "CLAIM_DATE_OF_SERVICE_MISSING",
            &["dateOfService", "beginningDateOfService"],
            None,
            &[],
        ),
        rule(
            "CLAIM_CPT_PROCEDURE_CODE_MISSING",
            &["cptCode"],
            None,
            &["auth"],
        ),
        rule(
            "CLAIM_DIAGNOSIS_MISSING",
            &["diagnosisCode"],
            None,
            &["auth"],
        ),
    ]
};

/// Highest chance that a representative of any payer insists on an input its family does not require.
const GENERAL_MISSING_CAP: f64 = 0.04;

/// The missing-input codes a representative of `family` could raise on a `request_type` call, each only
/// when none of its input keys is supplied (non-blank), with the chance it is raised at `rate`.
pub(crate) fn missing_inputs(
    family: PayerFamily,
    request_type: &str,
    inputs: &BTreeMap<String, String>,
    rate: f64,
) -> Vec<(&'static str, f64)> {
    let supplied = |key: &&str| inputs.get(*key).is_some_and(|v| !v.trim().is_empty());
    MISSING_RULES
        .iter()
        .filter(|r| {
            r.request_words.is_empty() || r.request_words.iter().any(|w| request_type.contains(w))
        })
        .filter(|r| !r.keys.iter().any(supplied))
        .filter_map(|r| match r.families {
            Some(families) if families.contains(&family) => Some((r.code, rate)),
            Some(_) => None,
            None => Some((r.code, (rate * 0.5).min(GENERAL_MISSING_CAP))),
        })
        .collect()
}
