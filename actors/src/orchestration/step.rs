//! The step actor: one calling effort. It places calls (redials included) until the step's required
//! fields are captured or the step gives up, persisting every call before placing it.

use std::sync::Arc;

use actix::prelude::*;
use chrono_tz::Tz;
use switchboard_storage::{
    CallId, CallRecord, Environment, PayerRecord, PayerWeek, RequestId, RequestRecord,
    SchemaVersionRecord, StepKey, StepState, StorageError, TraceRecord,
};
use tracing::Instrument;

use super::call::CallActor;
use super::edges::{Edge, Edges};
use super::error::OrchestrationError;
use super::limits::Gate;
use super::messages::{
    Advance, CallCrashed, CallEnded, CallParent, StepCrashed, StepEnded, StepParent,
};
use super::outcome::{next_step_move, StepDecision};
use super::Shared;
use crate::dialer::CallJob;

/// What a step actor is given to run: everything its request actor already read.
pub(crate) struct StepJob {
    /// The request.
    pub request_id: RequestId,
    /// The step's key in the run.
    pub key: StepKey,
    /// Its place in the run: 0 for the primary step, 1 for the follow-up leg.
    pub index: usize,
    /// The schema version it runs.
    pub schema: Arc<SchemaVersionRecord>,
    /// The required fields it asks for (the primary step leaves out what the electronic channel filled).
    pub asks: Vec<String>,
    /// Restarts the request has been through.
    pub restarts: u32,
    /// The account's time zone, in which a payer's calling hours are read unless the payer names its own.
    pub zone: Tz,
    /// The account's own dialer kind (`[[accounts]] dialer`); `None`: the server's default.
    pub dialer: Option<String>,
    /// The account has `learned_call_windows`: each call waits for the hour its payer answers fastest.
    pub learned_windows: bool,
    /// Tells this step actor apart from an earlier one of the same key: a step left behind by a restart of
    /// its request actor may still report (its drop reports a crash), and must not be taken for the
    /// current one.
    pub incarnation: u64,
    /// What the request actor decided and did not write (at least the opening of this step, when it is
    /// new): the step's first write carries it, or its report does when it places no call.
    pub edges: Edges,
    /// The request's stored trace, which the step's span and its calls' join.
    pub trace: Option<TraceRecord>,
}

/// What an advance reads before it decides: the record, and for a production request its payer in the
/// directory and what was learned of the payer's line.
struct Read {
    record: Arc<RequestRecord>,
    payer: Option<PayerRecord>,
    week: Option<Result<Arc<PayerWeek>, String>>,
}

/// One step of a request.
pub(crate) struct StepActor {
    shared: Shared,
    parent: StepParent,
    job: StepJob,
    activity: Activity,
    /// The request's payer in the directory, as the last advance read it.
    payer: Option<PayerRecord>,
    /// The payer's learned week as the last advance read it; the error's text when it could not be read.
    week: Option<Result<Arc<PayerWeek>, String>>,
    span: tracing::Span,
    /// The exported `step` span, ended when the actor goes.
    _otel: tracing::Span,
}

/// What a step actor is doing between messages.
enum Activity {
    /// Between calls: the next advance reads the record and decides.
    Idle,
    /// A call actor runs `call_id`; its report (or its disappearance) moves the step on. The address is
    /// held only to keep the call's actor alive.
    Calling {
        call_id: CallId,
        _call: Addr<CallActor>,
    },
    /// The step has reported its end (or its crash) and stops.
    Done,
}

impl StepActor {
    pub(crate) fn new(shared: Shared, parent: StepParent, job: StepJob) -> StepActor {
        let span = tracing::info_span!("step", request_id = %job.request_id, step = %job.key);
        let otel = crate::telemetry::child(
            job.trace.as_ref(),
            || tracing::info_span!(target: crate::telemetry::TARGET, parent: None, "step", switchboard.step = %job.key),
        );
        StepActor {
            shared,
            parent,
            job,
            activity: Activity::Idle,
            payer: None,
            week: None,
            span,
            _otel: otel,
        }
    }

    fn crash(&mut self, ctx: &mut Context<Self>, reason: String) {
        if matches!(self.activity, Activity::Done) {
            return;
        }
        self.activity = Activity::Done;
        let parent = self.parent.crashed.clone();
        let (key, incarnation) = (self.job.key.clone(), self.job.incarnation);
        ctx.wait(
            async move {
                let _ = parent
                    .send(StepCrashed {
                        key,
                        incarnation,
                        reason,
                    })
                    .await;
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    /// Reports the end of the step, handing over every edge not written yet.
    fn end(&mut self, ctx: &mut Context<Self>) {
        self.activity = Activity::Done;
        let parent = self.parent.ended.clone();
        let (key, incarnation) = (self.job.key.clone(), self.job.incarnation);
        let edges = std::mem::take(&mut self.job.edges);
        ctx.wait(
            async move {
                let _ = parent
                    .send(StepEnded {
                        key,
                        incarnation,
                        edges,
                    })
                    .await;
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    fn place(&mut self, ctx: &mut Context<Self>, record: &RequestRecord, call: CallRecord) {
        let payer = match record.environment {
            Environment::Production => self.payer.clone(),
            Environment::Sandbox => None,
        };
        let payer_zone = self.payer_zone(payer.as_ref());
        let payer_notes = payer
            .as_ref()
            .and_then(|payer| {
                let week = self.week.as_ref()?.as_ref();
                let week = week.map_err(|e| tracing::warn!(error = %e, "no payer notes: the learned week could not be read"));
                let week = week.ok()?;
                Some(super::notes::payer_notes(&payer.name, week, call.placed_at, payer_zone))
            })
            .unwrap_or_default();
        let job = CallJob {
            call_id: call.id.clone(),
            request_id: self.job.request_id.clone(),
            seq: call.seq,
            attempt: call.attempt,
            step_key: self.job.key.clone(),
            step_index: self.job.index,
            schema: Arc::clone(&self.job.schema),
            inputs: record.inputs.clone(),
            number: call.to.clone(),
            placed_at: call.placed_at,
            payer_zone,
            payer_notes,
            restarts: self.job.restarts,
            seed: self.shared.seed,
            time_scale: self.shared.time_scale,
            ai_only: record.ai_only,
            onshore_only: record.onshore_only,
            known: match self.job.index {
                0 => record
                    .run
                    .as_ref()
                    .and_then(|run| run.electronic.as_ref())
                    .map(|e| e.captured.clone())
                    .unwrap_or_default(),
                _ => Default::default(),
            },
        };
        let (dialer, gate) = match record.environment {
            Environment::Sandbox => (Arc::clone(&self.shared.sandbox), None),
            Environment::Production => {
                let platform = call.platform.as_ref().map(|p| p.platform.as_str());
                let route = self
                    .shared
                    .production
                    .route(platform, self.job.dialer.as_deref());
                let gate = match route.real_calls {
                    true => self.gate(record, &call),
                    false => None,
                };
                (route.dialer, gate)
            }
        };
        let parent = CallParent::of(&ctx.address());
        let prices = self.shared.prices.for_environment(record.environment);
        let trace = self.job.trace.clone();
        let actor = CallActor::new(
            self.shared.clone(),
            parent,
            job,
            gate,
            dialer,
            prices,
            trace,
        )
        .start();
        self.activity = Activity::Calling {
            call_id: call.id,
            _call: actor,
        };
    }

    /// The limits of a real production call: the payer's hours in the payer's zone (else the account's),
    /// and whether the platform already holds the call. `None` when calls are not limited (simulator,
    /// sandbox).
    fn gate(&self, record: &RequestRecord, call: &CallRecord) -> Option<Gate> {
        self.shared.limits.as_ref()?;
        if record.environment != Environment::Production {
            return None;
        }
        let payer = self.payer.as_ref();
        Some(Gate {
            zone: self.payer_zone(payer),
            hours: payer.and_then(|payer| payer.calling_hours),
            // With an intent on record the platform may hold the call already (even if its id was lost):
            // it is re-attached or looked up at once, never held back by the hours.
            reattach: call.platform.is_some(),
        })
    }

    /// When the next call is placed: now, or with `learned_call_windows` the hour before the end of the
    /// request's due date (in the account's zone) and inside its payer's calling hours that held shortest
    /// ([`super::windows`]). Written as the call's `placed_at`, which the call actor waits for.
    fn placing_instant(&self, record: &RequestRecord) -> chrono::DateTime<chrono::Utc> {
        let now = self.shared.clock.now();
        if !self.job.learned_windows || record.environment != Environment::Production {
            return now;
        }
        let Some(payer) = &self.payer else {
            return now;
        };
        let week = match &self.week {
            Some(Ok(week)) => week,
            None => return now,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "the payer's learned week could not be read: calling now");
                return now;
            }
        };
        let deadline = crate::calendar::day_start(
            record.due_date.succ_opt().unwrap_or(record.due_date),
            self.job.zone,
        );
        let hours = payer
            .calling_hours
            .or(self.shared.limits.as_ref().map(|l| l.default_hours()))
            .unwrap_or(super::limits::DEFAULT_HOURS);
        let at = super::windows::learned_instant(
            week,
            now,
            deadline,
            self.payer_zone(Some(payer)),
            hours,
        );
        if at > now {
            tracing::info!(
                wait_s = (at - now).num_seconds(),
                "the call waits for its payer's learned window"
            );
        }
        at
    }

    /// The zone of a payer's calling hours and of its week: its own, else the account's.
    fn payer_zone(&self, payer: Option<&PayerRecord>) -> Tz {
        super::learning::payer_zone(payer, self.job.zone)
    }

    /// Reads the record once (with the edges not written yet) and takes the step's next move: resume an
    /// unfinished call, place the next one (written and flushed first), or close the step. A failure
    /// crashes the step.
    fn advance(&mut self, ctx: &mut Context<Self>) {
        let (shared, id) = (self.shared.clone(), self.job.request_id.clone());
        // In the step's span: the read is polled outside this handler.
        let read = async move {
            let Some(record) = shared.store.fetch_request(&id).await? else {
                return Ok(None);
            };
            let payer = match record.environment {
                Environment::Production => super::learning::payer_of(&shared.store, &record).await,
                Environment::Sandbox => None,
            };
            let week = match &payer {
                Some(payer) => {
                    let week = shared
                        .learned
                        .week(&shared.store, &payer.name, shared.clock.now());
                    Some(week.await.map_err(|e| e.to_string()))
                }
                None => None,
            };
            Ok(Some(Read {
                record,
                payer,
                week,
            }))
        }
        .instrument(self.span.clone());
        // Nothing else of this actor runs before the read is used: the record it decides on is the one
        // its last write left.
        ctx.wait(read.into_actor(self).map(|read, act, ctx| {
            let span = act.span.clone();
            let _entered = span.enter();
            if let Err(reason) = act.advance_from(ctx, read) {
                act.crash(ctx, reason.to_string());
            }
        }));
    }

    /// [`StepActor::advance`], with the record read.
    fn advance_from(
        &mut self,
        ctx: &mut Context<Self>,
        read: Result<Option<Read>, StorageError>,
    ) -> Result<(), OrchestrationError> {
        let read = read?.ok_or(OrchestrationError::RequestVanished)?;
        (self.payer, self.week) = (read.payer, read.week);
        let mut record = Arc::unwrap_or_clone(read.record);
        self.job.edges.apply(&mut record);
        let run = record.run.as_ref().ok_or(OrchestrationError::RunMissing)?;
        let step = run
            .steps
            .iter()
            .find(|s| s.key == self.job.key)
            .ok_or(OrchestrationError::StepVanished)?;
        if step.state != StepState::InProgress {
            self.end(ctx);
            return Ok(());
        }
        let calls: Vec<&CallRecord> = run
            .calls
            .iter()
            .filter(|c| c.step_key == self.job.key)
            .collect();
        if let Some(in_flight) = calls.iter().find(|c| c.outcome.is_none()) {
            // Placed before a restart and never finished: the call runs again under the same record; a
            // platform dialer re-attaches to the platform's call instead of creating another.
            let call = (*in_flight).clone();
            self.place(ctx, &record, call);
            return Ok(());
        }
        let first = record.dial.as_ref().map(|d| (d.number.as_str(), d.source));
        match next_step_move(&calls, &self.job.asks, first, record.environment) {
            StepDecision::Dial { number, source } => {
                let call = CallRecord {
                    id: CallId::new(),
                    seq: run.calls.len() as u32 + 1,
                    step_key: self.job.key.clone(),
                    attempt: calls.len() as u32 + 1,
                    to: number,
                    number_source: source,
                    placed_at: self.placing_instant(&record),
                    outcome: None,
                    platform: None,
                };
                let pushed = call.clone();
                let edges = self.job.edges.clone();
                let written = self.persist(move |r| {
                    edges.apply(r);
                    if let Some(run) = r.run.as_mut() {
                        if !run.calls.iter().any(|c| c.id == pushed.id) {
                            run.calls.push(pushed.clone());
                        }
                    }
                });
                // The call is placed from the record just written: nothing else writes it in between.
                ctx.wait(written.map(move |written, act, ctx| match written {
                    Ok(written) => {
                        act.job.edges = Edges::default();
                        act.place(ctx, &written, call)
                    }
                    Err(e) => act.crash(ctx, e.to_string()),
                }));
            }
            StepDecision::Succeed => self.close(ctx, StepState::Succeeded, None),
            StepDecision::Fail(failure) => self.close(ctx, StepState::Failed, Some(failure)),
        }
        Ok(())
    }

    /// Ends the step with its verdict, which the request actor writes with its own next write: closing
    /// a step acts on nothing outside the record, and a restart before that write decides it again.
    fn close(
        &mut self,
        ctx: &mut Context<Self>,
        state: StepState,
        error: Option<switchboard_storage::FailureRecord>,
    ) {
        let verdict = Edge::CloseStep {
            key: self.job.key.clone(),
            asks: self.job.asks.clone(),
            state,
            error,
        };
        self.job.edges.push(verdict);
        tracing::info!(state = state.as_str(), "step closed");
        self.end(ctx);
    }

    /// Writes `change` and, once it is durable, the record as written.
    fn persist(
        &self,
        change: impl Fn(&mut RequestRecord) + Send + 'static,
    ) -> impl ActorFuture<Self, Output = Result<RequestRecord, OrchestrationError>> {
        let shared = self.shared.clone();
        let request_id = self.job.request_id.clone();
        async move { Ok(shared.store.commit_update(&request_id, change).await?) }.into_actor(self)
    }
}

impl Actor for StepActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.notify(Advance);
    }
}

/// A step actor that goes away without having reported (a panic in one of its handlers drops it) is a
/// crash of the step: its parent hears of it from here, at once, with no watch polling for it.
impl Drop for StepActor {
    fn drop(&mut self) {
        if !matches!(self.activity, Activity::Done) {
            self.parent.crashed.do_send(StepCrashed {
                key: self.job.key.clone(),
                incarnation: self.job.incarnation,
                reason: "step actor stopped without reporting".into(),
            });
        }
    }
}

impl Handler<Advance> for StepActor {
    type Result = ();

    fn handle(&mut self, _: Advance, ctx: &mut Context<Self>) {
        let span = self.span.clone();
        let _entered = span.enter();
        if !matches!(self.activity, Activity::Idle) {
            return;
        }
        self.advance(ctx);
    }
}

impl Handler<CallEnded> for StepActor {
    type Result = ();

    fn handle(&mut self, ended: CallEnded, ctx: &mut Context<Self>) {
        if matches!(&self.activity, Activity::Calling { call_id, .. } if *call_id == ended.call_id)
        {
            self.job.edges.push(Edge::EndCall {
                call_id: ended.call_id,
                outcome: ended.outcome,
            });
            self.activity = Activity::Idle;
            ctx.notify(Advance);
        }
    }
}

impl Handler<CallCrashed> for StepActor {
    type Result = ();

    fn handle(&mut self, crashed: CallCrashed, ctx: &mut Context<Self>) {
        if !matches!(self.activity, Activity::Done) {
            self.activity = Activity::Idle;
        }
        self.crash(
            ctx,
            format!("call {} crashed: {}", crashed.call_id, crashed.reason),
        );
    }
}
