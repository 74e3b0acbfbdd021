//! The sandbox generator: the dialer behind sandbox keys. It never dials; it generates each call's outcome
//! against the step's schema, deterministically from the request's inputs, `simulation.seed`, the step and
//! the attempt, following the scenario named by `inputs.sandboxScenario` (operator contract section 4).
//!
//! `scenario.rs` owns the scenario names and the failure-code table, `dice.rs` the deterministic dice,
//! `values.rs` the generated answers, `capture.rs` which fields a call or the sandbox's electronic channel
//! (`crate::electronic::sandbox`) fills,
//! `dialogue.rs` and `failures.rs` the transcripts and summaries; this file decides what each call of a
//! scenario does and how long it takes.
//!
//! Per call (`step_index` 0 is the primary step, 1 a follow-up leg; `attempt` counts from 1 in its step):
//! - `success`, `cannot_answer`, `digital_plus_phone`, `follow_up`, and `partial` on the primary step:
//!   `Completed`, capturing every required field, about half of the optional unconditional fields and every
//!   conditional field whose condition holds. `cannot_answer` puts `CANNOT ANSWER - <reason>` in one required
//!   field of the primary step; `follow_up`/`partial` answer `DENIED` where a required choice offers it and
//!   the schema has a follow-up leg.
//! - `redial`: attempt 1 of a step ends in `Voicemail` or `HoldTimeout`; later attempts complete.
//! - `partial` on a follow-up leg: `Failed` with `PAYER_REFUSAL`; `follow_up` legs complete.
//! - `failure:CODE` on the primary step: `Failed` with [`failure_for_code`]; follow-up legs complete.
//! - `stuck`: the call never ends. `fault:call_panic`: the call panics when polled; `fault:call_panic_once`
//!   panics until the request has been restarted, then behaves as `success`.
//!
//! Calls report 180-600 simulated seconds (45-120 without a representative) and wait that long divided by
//! `time_scale`, at most [`MAX_WAIT_SECONDS`] simulated seconds, so a request with a redial and a follow-up
//! still ends within about four seconds at `time_scale` 60.

pub(crate) mod capture;
pub(crate) mod dialogue;
pub(crate) mod dice;
pub(crate) mod failures;
mod scenario;
pub(crate) mod values;

#[cfg(test)]
mod tests;

use std::time::Duration;

use futures::future::BoxFuture;
use switchboard_storage::{Disposition, FailureCode};

pub use scenario::{failure_for_code, Scenario, SCENARIO_INPUT};

use super::{CallJob, CallReport, Dialer};
use capture::{capture, Answering};
use dialogue::{Context, Texts};
use dice::Dice;

/// Longest wait of one call, in simulated seconds (the reported duration may be longer).
pub const MAX_WAIT_SECONDS: u32 = 75;

/// The sandbox dialer. Stateless: every outcome follows from the job.
#[derive(Clone, Copy, Debug, Default)]
pub struct SandboxDialer;

impl SandboxDialer {
    /// The generator.
    pub fn new() -> SandboxDialer {
        SandboxDialer
    }
}

impl Dialer for SandboxDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        let scenario = Scenario::from_inputs(&job.inputs);
        match scenario {
            Scenario::Stuck => Box::pin(futures::future::pending()),
            Scenario::CallPanic => {
                Box::pin(async move { injected_panic(&job, "fault:call_panic") })
            }
            Scenario::CallPanicOnce if job.restarts == 0 => {
                Box::pin(async move { injected_panic(&job, "fault:call_panic_once") })
            }
            _ => {
                let report = generate(&scenario, &job);
                let wait = wall_wait(report.duration_seconds, job.time_scale);
                Box::pin(async move {
                    if let Some(wait) = wait {
                        tokio::time::sleep(wait).await;
                    }
                    report
                })
            }
        }
    }
}

/// Fault injection: a call whose logic panics.
fn injected_panic(job: &CallJob, name: &str) -> CallReport {
    panic!(
        "fault injection ({name}): sandbox call {} of request {} panicked on purpose",
        job.call_id, job.request_id
    )
}

/// Wall time a call of `duration` simulated seconds takes at `time_scale` (capped; none when negligible).
fn wall_wait(duration: u32, time_scale: f64) -> Option<Duration> {
    let scale = if time_scale > 0.0 { time_scale } else { 1.0 };
    let seconds = f64::from(duration.min(MAX_WAIT_SECONDS)) / scale;
    Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|wait| !wait.is_zero())
}

/// The report of one (non-stuck, non-panicking) call.
fn generate(scenario: &Scenario, job: &CallJob) -> CallReport {
    let dice = Dice::new(job.seed, &job.inputs, job.step_index, job.attempt);
    let schema = &job.schema.definition;
    let ctx = Context {
        schema,
        inputs: &job.inputs,
        number: &job.number,
        dice: &dice,
    };
    let primary = job.step_index == 0;
    let mut report = CallReport {
        recording: true,
        from_number: Some(format!(
            "+1617555{:04}",
            100 + dice.pick("from-number", 100)
        )),
        ..CallReport::new(Disposition::Completed)
    };
    let texts = match scenario {
        Scenario::Redial if job.attempt <= 1 => {
            report.disposition = *dice.choose(
                "no-answer",
                &[Disposition::Voicemail, Disposition::HoldTimeout],
            );
            report.duration_seconds = dice.range("duration", 45, 120) as u32;
            failures::unanswered(&ctx, report.disposition)
        }
        Scenario::Partial if !primary => fail(&mut report, &ctx, &FailureCode::PayerRefusal),
        Scenario::Failure(code) if primary => fail(&mut report, &ctx, code),
        _ => {
            let answering = Answering {
                cannot_answer: primary && *scenario == Scenario::CannotAnswer,
                prefer_denied: primary
                    && matches!(scenario, Scenario::FollowUp | Scenario::Partial)
                    && schema.follow_up.is_some(),
            };
            report.captured = capture(schema, &dice, &job.inputs, answering, &job.known);
            // Only these scenarios chain the leg; `success` is one step and one call (contract section 4).
            report.follow_up_requested =
                primary && matches!(scenario, Scenario::FollowUp | Scenario::Partial);
            report.duration_seconds = dice.range("duration", 180, 600) as u32;
            dialogue::completed(&ctx, &report.captured)
        }
    };
    report.transcript = texts.transcript;
    report.transcript_post_call = Some(texts.post_call);
    report.summary = Some(texts.summary);
    report.audit_summary = Some(texts.audit);
    report
}

/// Marks `report` failed with `code` and returns the failed call's prose.
fn fail(report: &mut CallReport, ctx: &Context, code: &FailureCode) -> Texts {
    let failure = failure_for_code(code);
    report.disposition = Disposition::Failed;
    report.duration_seconds = ctx.dice.range("duration", 60, 240) as u32;
    let texts = failures::failed(ctx, &failure);
    report.failure = Some(failure);
    texts
}
