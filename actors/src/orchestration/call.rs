//! The call actor: runs one call through the dialer and reports its outcome to its parent (the step
//! actor, through a [`CallParent`]), whose next write stores it.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use actix::prelude::*;
use futures::FutureExt;
use tracing::Instrument;

use switchboard_storage::{CallId, TraceRecord};

use super::limits::Gate;
use super::messages::{CallCrashed, CallEnded, CallParent};
use super::Shared;
use crate::cost::Prices;
use crate::dialer::{CallJob, Dialer};

/// One phone call. Lives from placement to the reported outcome.
pub(crate) struct CallActor {
    shared: Shared,
    parent: CallParent,
    job: Option<CallJob>,
    gate: Option<Gate>,
    dialer: Arc<dyn Dialer>,
    /// The rates this call is priced at (free for a sandbox request).
    prices: Prices,
    call_id: CallId,
    /// The request's stored trace, which the call's span joins.
    trace: Option<TraceRecord>,
    /// The outcome (or a crash) has been reported to the parent.
    reported: bool,
    span: tracing::Span,
}

impl CallActor {
    pub(crate) fn new(
        shared: Shared,
        parent: CallParent,
        job: CallJob,
        gate: Option<Gate>,
        dialer: Arc<dyn Dialer>,
        prices: Prices,
        trace: Option<TraceRecord>,
    ) -> CallActor {
        let span = tracing::info_span!("call", request_id = %job.request_id, call_id = %job.call_id, seq = job.seq);
        CallActor {
            shared,
            parent,
            call_id: job.call_id.clone(),
            reported: false,
            job: Some(job),
            gate,
            dialer,
            prices,
            trace,
            span,
        }
    }
}

impl Actor for CallActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let _entered = self.span.enter();
        let job = self.job.take().expect("a call actor starts once");
        let dialer = Arc::clone(&self.dialer);
        let shared = self.shared.clone();
        let parent = self.parent.clone();
        let call_id = job.call_id.clone();
        let limits = match (self.gate.take(), &self.shared.limits) {
            (Some(gate), Some(limits)) => Some((gate, Arc::clone(limits))),
            _ => None,
        };
        // The dialer is foreign code (a simulator, a network agent): a panic in it must become a reported
        // crash, never a silent end of this actor.
        let clock = self.shared.clock.clone();
        let otel = crate::telemetry::child(self.trace.as_ref(), || {
            tracing::info_span!(
                target: crate::telemetry::TARGET,
                parent: None,
                "call",
                switchboard.call_id = %job.call_id,
                switchboard.disposition = tracing::field::Empty,
                switchboard.platform = tracing::field::Empty,
                switchboard.platform_call_id = tracing::field::Empty,
            )
        });
        let request_id = job.request_id.clone();
        let prices = self.prices;
        let run = async move {
            // A call placed in a learned window waits for it (its `placed_at`, written before).
            super::windows::wait_until(&clock, job.placed_at).await;
            // A real call waits for the payer's hours and a free slot, holding the slot until it ends.
            let _slot = match limits {
                Some((gate, limits)) => Some(
                    limits
                        .admit(&clock, &job.call_id, &job.request_id, gate)
                        .await,
                ),
                None => None,
            };
            tracing::info!(attempt = job.attempt, step = %job.step_key, "call placed");
            AssertUnwindSafe(dialer.place(job)).catch_unwind().await
        };
        let work = async move {
            match run.await {
                Ok(mut report) => {
                    let ended_at = shared.clock.now();
                    // Priced once, here: the stored outcome carries its price, which nothing changes
                    // later (a platform's cost reported after this is not read).
                    report.cost_cents = Some(prices.call_cents(&report));
                    let disposition = report.disposition;
                    shared.metrics.call_ended(disposition);
                    tracing::info!(?disposition, "call ended");
                    crate::telemetry::call_ended(
                        &otel,
                        &shared.store,
                        &request_id,
                        &call_id,
                        disposition,
                    )
                    .await;
                    // Not written here: the step's next move writes it (the next call's placement, or the
                    // request's next write once the step closes), right away. A crash before that finds
                    // the call unfinished and runs it again under the same record, which re-attaches a
                    // platform's call instead of placing another.
                    let outcome =
                        Arc::new(switchboard_storage::CallOutcomeRecord { ended_at, report });
                    let _ = parent.ended.send(CallEnded { call_id, outcome }).await;
                }
                Err(panic) => {
                    shared.metrics.call_panicked();
                    let reason = panic_message(&panic);
                    otel.record("switchboard.disposition", "panicked");
                    tracing::error!(reason = %reason, "call panicked");
                    report_crash(&parent, call_id, reason).await;
                }
            }
        }
        .instrument(self.span.clone());
        ctx.wait(work.into_actor(self).map(|_, act, ctx| {
            act.reported = true;
            ctx.stop()
        }));
    }
}

/// A call actor dropped before its report (a panic outside the dialer, where nothing catches it) is a
/// crash of the call, reported to the step at once.
impl Drop for CallActor {
    fn drop(&mut self) {
        if !self.reported {
            self.parent.crashed.do_send(CallCrashed {
                call_id: self.call_id.clone(),
                reason: "call actor stopped without reporting".into(),
            });
        }
    }
}

async fn report_crash(parent: &CallParent, call_id: CallId, reason: String) {
    let _ = parent.crashed.send(CallCrashed { call_id, reason }).await;
}

/// The text of a panic payload that may be logged and recorded (see [`crate::panic_text`]).
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    crate::panic_text::loggable_message(&**panic).into_owned()
}
