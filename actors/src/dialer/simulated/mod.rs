//! The payer simulator: the production dialer when `[dialer] kind = "simulated"` (operator contract
//! section 5). It never dials. Each call's outcome is rolled, deterministically, against a behaviour
//! profile of the payer named by `inputs.payerName`, so production requests meet what real provider lines
//! do: phone trees that loop, long holds, after-hours voicemail, representatives who refer the caller to
//! another number, cannot find the member, insist on an input the request lacks or refuse outright — and
//! most of the time, answer. The orchestration then reacts exactly as it would to a real voice agent:
//! it redials voicemail and hold timeouts, follows referrals, attributes wrong numbers by where the number
//! came from and gives up after its attempt budget.
//!
//! **Profiles** ([`PayerProfile::for_payer`]). A payer's family is read from its name ([`PayerFamily`]):
//! Medicare contractors hold long and insist on the PTAN; state Medicaid lines have deep phone trees that
//! loop and many after-hours messages; Blue Cross Blue Shield plans refer out-of-area members to their
//! home plan; national carriers are moderate; regional plans are quick; unknown names get a middle profile.
//! Each payer's rates vary a little (±15 %, hashed from its normalized name) so no two lines are identical.
//!
//! **One call.** The dice are the sandbox's ([`crate::dialer::sandbox`]): SHA-256 over `simulation.seed`,
//! the sorted inputs, the step and the attempt, plus here the dialed number, so a redial or a referred
//! number rolls afresh while the same job always gives the same report. The call then passes its stages in
//! order, each rolled against the profile:
//! - the number reaches the wrong department: `Failed` with the generic `PHONE_NUMBER_INCORRECT`, which the
//!   step attributes by the number's source (eight times likelier on a number a representative gave out);
//! - the phone tree loops: `Failed`, `IVR_FAILURE`, no transcript;
//! - the hold passes the 45-minute limit (`HoldTimeout`) or only a recorded message answers (`Voicemail`),
//!   both two and a half times likelier when redialing a line that just went unanswered;
//! - the representative refers the call: `Referred` (first attempt only, never from a referred number) to
//!   a fictional toll-free `8xx 555 0180-0199` number, a Blue plan to the member's home plan;
//! - the representative insists on an absent input: `Failed` with a missing-input code the payer's family
//!   asks for (the PTAN at Medicare, the group number at commercial plans, the claim number on claim
//!   calls, ...), only when the request really lacks it;
//! - the payer cannot find the member, claim, authorization or provider: `Failed`, `NOT_FOUND`;
//! - the representative refuses (HIPAA verification, privacy policy): `Failed`, `PAYER_REFUSAL`;
//! - otherwise `Completed`: every required field, conditional fields per the answers and some optional
//!   ones, with the sandbox's dialogue plus the phone-tree and hold times.
//!
//! A completed primary call that answers a required choice `DENIED` (a denied claim) requests the schema's
//! follow-up leg; follow-up legs (`step_index` 1) call a payer that already found the member, so they fail
//! far less ([`PayerProfile::for_follow_up`]). For a typical commercial payer about four requests in five
//! succeed within the three attempts of a step; the rest fail the way real ones do.
//!
//! **Time.** Calls report realistic simulated lengths (phone tree 1-5 minutes, hold 2-44 minutes, talk
//! 4-12 minutes). The hold depends on when the call is placed, in the payer's zone (`week.rs`): Monday
//! mornings run up to about twice the payer's median, mid-week afternoons about half of it, each payer
//! with its own seeded deviation, so a caller that learns each line's week holds measurably less. Calls
//! wait their length divided by `simulation.time_scale`, at most [`MAX_WAIT_SECONDS`] simulated seconds: at the default scale of 60 no call waits more than 20 seconds of wall time.
//!
//! `profile.rs` owns the families and profiles, `decide.rs` the pure decision of a call and the failure
//! codes that fit it, `referral.rs` the referral numbers, `timing.rs` call lengths and waits, `texts.rs` the
//! prose (on top of the sandbox dialogue); this file assembles the report. The simulator's electronic
//! channel lives in `crate::electronic::simulated`.

pub(crate) mod decide;
mod profile;
mod referral;
mod texts;
mod timing;
mod week;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use switchboard_storage::{Disposition, FailureCode, FailureRecord, FieldType};

pub use profile::{normalize_payer_name, PayerFamily, PayerProfile};

use super::sandbox::capture::{capture, Answering};
use super::sandbox::dialogue::Context;
use super::sandbox::dice::Dice;
use super::sandbox::{failure_for_code, failures};
use super::{CallJob, CallReport, Dialer};
use decide::{decide, missing_inputs, not_found_codes, Outcome, Situation};
use referral::{is_referral_number, referral_dice, referral_number};
use timing::{timing, wall_wait};
use week::payer_seed;

/// Longest wall-time wait of one call, in simulated seconds (the reported duration may be longer): 20
/// seconds of wall time at `time_scale` 60.
pub const MAX_WAIT_SECONDS: u32 = 20 * 60;

/// The input key naming the payer.
const PAYER_INPUT: &str = "payerName";
/// Key under which the dialed number joins the inputs the dice hash (no real input key starts with NUL).
const DIALED_KEY: &str = "\u{0}dialedNumber";

/// The payer simulator. Stateless: every outcome follows from the job (and the override, if any).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SimulatedPayerDialer {
    profile_override: Option<PayerProfile>,
}

impl SimulatedPayerDialer {
    /// The simulator, with each payer's own profile.
    pub fn new() -> SimulatedPayerDialer {
        SimulatedPayerDialer::default()
    }

    /// A simulator that uses `profile` for every payer (drills, tests, load experiments). Follow-up legs
    /// still use its [`PayerProfile::for_follow_up`].
    pub fn with_profile_override(profile: PayerProfile) -> SimulatedPayerDialer {
        SimulatedPayerDialer {
            profile_override: Some(profile),
        }
    }

    /// The profile a call for `payer_name` runs on: the override, else the payer's profile, else (no
    /// name) the unknown-payer baseline.
    pub fn profile_for(&self, payer_name: Option<&str>) -> PayerProfile {
        match (self.profile_override, payer_name) {
            (Some(profile), _) => profile,
            (None, Some(name)) => PayerProfile::for_payer(name),
            (None, None) => PayerProfile::baseline(PayerFamily::Unknown),
        }
    }

    /// The report of one call, without waiting.
    fn simulate(&self, job: &CallJob) -> CallReport {
        let payer = job
            .inputs
            .get(PAYER_INPUT)
            .map(|n| n.trim())
            .filter(|n| !n.is_empty());
        let family = payer.map_or(PayerFamily::Unknown, PayerFamily::of);
        let profile = match job.step_index {
            0 => self.profile_for(payer),
            _ => self.profile_for(payer).for_follow_up(),
        };
        let dice = call_dice(job);
        let schema = &job.schema.definition;
        let dialing_referral = is_referral_number(&job.number);
        let situation = Situation {
            referral_allowed: job.attempt <= 1 && !dialing_referral,
            dialing_referral,
            // A step dials again only after voicemail, a hold timeout or (on its first attempt) a referral:
            // every later attempt but the first call to a referred number follows an unanswered call.
            redial_after_no_answer: job.attempt >= 2 && !(dialing_referral && job.attempt == 2),
            missing: missing_inputs(
                family,
                &schema.request_type,
                &job.inputs,
                profile.missing_input_rate,
            ),
            not_found: not_found_codes(&schema.request_type),
        };
        let outcome = decide(&profile, &situation, &dice);
        let week = week::hold_factor_at(
            payer_seed(job.seed, payer.unwrap_or_default()),
            job.placed_at,
            job.payer_zone,
        );
        let timing = timing(outcome, &profile, week, &dice);
        let ctx = Context {
            schema,
            inputs: &job.inputs,
            number: &job.number,
            dice: &dice,
        };
        let mut report = CallReport {
            duration_seconds: timing.total(),
            phases: Some(switchboard_storage::CallPhases {
                ivr_seconds: timing.ivr,
                hold_seconds: timing.hold,
                talk_seconds: timing.talk,
            }),
            recording: true,
            from_number: Some(format!(
                "+1646555{:04}",
                100 + dice.pick("sim:from-number", 100)
            )),
            ..CallReport::new(Disposition::Completed)
        };
        let texts = match outcome {
            Outcome::Completed => {
                report.captured =
                    capture(schema, &dice, &job.inputs, Answering::default(), &job.known);
                // A denial the electronic answer reported leads to the appeals leg like one said on the call.
                let mut answers = job.known.clone();
                answers.extend(report.captured.clone());
                report.follow_up_requested =
                    job.step_index == 0 && surfaced_follow_up(job, &answers);
                texts::completed(&ctx, &report.captured, timing)
            }
            Outcome::HoldTimeout | Outcome::Voicemail => {
                report.disposition = match outcome {
                    Outcome::HoldTimeout => Disposition::HoldTimeout,
                    _ => Disposition::Voicemail,
                };
                texts::unanswered(&ctx, report.disposition, timing)
            }
            Outcome::Referred => {
                let number = referral_number(&referral_dice(job, family, &dice));
                report.disposition = Disposition::Referred;
                let texts = texts::referral(&ctx, family, &number);
                report.referral_number = Some(number);
                texts
            }
            Outcome::WrongNumber => {
                texts::wrong_department(&ctx, &fail(&mut report, WRONG_NUMBER_CODE))
            }
            Outcome::IvrFailure => {
                texts::ivr_failure(&ctx, &fail(&mut report, FailureCode::IvrFailure), timing)
            }
            Outcome::Refusal => texts::refusal(&ctx, &fail(&mut report, FailureCode::PayerRefusal)),
            Outcome::NotFound(code) | Outcome::MissingInput(code) => {
                failures::failed(&ctx, &fail(&mut report, code.into()))
            }
        };
        report.transcript = texts.transcript;
        report.transcript_post_call = Some(texts.post_call);
        report.summary = Some(texts.summary);
        report.audit_summary = Some(texts.audit);
        report
    }
}

impl Dialer for SimulatedPayerDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        let report = self.simulate(&job);
        let wait = wall_wait(report.duration_seconds, job.time_scale);
        Box::pin(async move {
            if let Some(wait) = wait {
                tokio::time::sleep(wait).await;
            }
            report
        })
    }
}

/// Whether a completed primary call surfaced a matter for the schema's follow-up leg: a required choice
/// answered `DENIED` (a denied claim goes on to the appeals line).
fn surfaced_follow_up(job: &CallJob, captured: &BTreeMap<String, String>) -> bool {
    let schema = &job.schema.definition;
    schema.follow_up.is_some()
        && schema
            .fields
            .iter()
            .filter(|f| f.required && f.field_type == FieldType::Multiple)
            .any(|f| captured.get(&f.name).is_some_and(|v| v == DENIED))
}

/// The answer that sends a request on to its follow-up leg.
const DENIED: &str = "DENIED";

/// Marks `report` failed with `code` and returns the failure.
fn fail(report: &mut CallReport, code: FailureCode) -> FailureRecord {
    let failure = failure_for_code(&code);
    report.disposition = Disposition::Failed;
    report.failure = Some(failure.clone());
    failure
}

/// The generic wrong-number code: the step attributes it by the dialed number's source (7.3).
const WRONG_NUMBER_CODE: FailureCode = FailureCode::PhoneNumberIncorrect;

/// The dice of one call: the sandbox dice over the seed, the inputs plus the dialed number, the step and
/// the attempt.
fn call_dice(job: &CallJob) -> Dice {
    let mut keyed = job.inputs.clone();
    keyed.insert(DIALED_KEY.to_string(), job.number.clone());
    Dice::new(job.seed, &keyed, job.step_index, job.attempt)
}
