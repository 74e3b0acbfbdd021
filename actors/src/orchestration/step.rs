//! The step actor: one calling effort. It places calls (redials included) until the step's required
//! fields are captured or the step gives up, persisting every call before placing it.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use switchboard_storage::{
    CallId, CallRecord, Environment, RequestId, RequestRecord, SchemaVersionRecord, StepKey,
    StepRecord, StepState,
};

use super::call::CallActor;
use super::error::OrchestrationError;
use super::limits::Gate;
use super::messages::{Advance, CallCrashed, CallEnded, StepCrashed, StepEnded};
use super::outcome::{close_step, next_step_move, required_fields, StepDecision};
use super::request::RequestActor;
use super::Shared;
use crate::dialer::CallJob;

/// One step of a request.
pub(crate) struct StepActor {
    shared: Shared,
    parent: Addr<RequestActor>,
    request_id: RequestId,
    key: StepKey,
    step_index: usize,
    schema: Arc<SchemaVersionRecord>,
    required: Vec<String>,
    restarts: u32,
    current_call: Option<(CallId, Addr<CallActor>)>,
    done: bool,
    span: tracing::Span,
}

impl StepActor {
    pub(crate) fn new(
        shared: Shared,
        parent: Addr<RequestActor>,
        request_id: RequestId,
        key: StepKey,
        step_index: usize,
        schema: Arc<SchemaVersionRecord>,
        restarts: u32,
    ) -> StepActor {
        let span = tracing::info_span!("step", request_id = %request_id, step = %key);
        StepActor {
            required: required_fields(&schema),
            shared,
            parent,
            request_id,
            key,
            step_index,
            schema,
            restarts,
            current_call: None,
            done: false,
            span,
        }
    }

    fn crash(&mut self, ctx: &mut Context<Self>, reason: String) {
        if self.done {
            return;
        }
        self.done = true;
        let parent = self.parent.clone();
        let key = self.key.clone();
        ctx.wait(
            async move {
                let _ = parent.send(StepCrashed { key, reason }).await;
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    fn end(&mut self, ctx: &mut Context<Self>) {
        self.done = true;
        let parent = self.parent.clone();
        let key = self.key.clone();
        ctx.wait(
            async move {
                let _ = parent.send(StepEnded { key }).await;
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    fn place(&mut self, ctx: &mut Context<Self>, record: &RequestRecord, call: CallRecord) {
        let job = CallJob {
            call_id: call.id.clone(),
            request_id: self.request_id.clone(),
            seq: call.seq,
            attempt: call.attempt,
            step_key: self.key.clone(),
            step_index: self.step_index,
            schema: Arc::clone(&self.schema),
            inputs: record.inputs.clone(),
            number: call.to.clone(),
            placed_at: call.placed_at,
            restarts: self.restarts,
            seed: self.shared.seed,
            time_scale: self.shared.time_scale,
            ai_only: record.ai_only,
            onshore_only: record.onshore_only,
            known: match self.step_index {
                0 => record
                    .run
                    .as_ref()
                    .and_then(|run| run.electronic.as_ref())
                    .map(|e| e.captured.clone())
                    .unwrap_or_default(),
                _ => Default::default(),
            },
        };
        let gate = self.gate(record, &call);
        let actor = CallActor::new(
            self.shared.clone(),
            ctx.address(),
            job,
            gate,
            record.environment,
        )
        .start();
        self.current_call = Some((call.id, actor));
    }

    /// The limits of a real production call: the account's zone, the payer's hours, and whether the
    /// platform already holds the call. `None` when calls are not limited (simulator, sandbox).
    fn gate(&self, record: &RequestRecord, call: &CallRecord) -> Option<Gate> {
        self.shared.limits.as_ref()?;
        if record.environment != Environment::Production {
            return None;
        }
        let store = &self.shared.store;
        let zone = store
            .account(&record.account_id)
            .ok()
            .flatten()
            .and_then(|a| a.timezone.parse().ok())
            .unwrap_or(chrono_tz::America::New_York);
        // The directory's match, else the payer as the client named it (a request dialing its own number
        // keeps no match, but its payer's hours still apply when the name is the directory's).
        let hours = record
            .payer_lookup
            .as_ref()
            .and_then(|l| l.matched_payer_name.as_deref())
            .or_else(|| record.inputs.get("payerName").map(|n| n.trim()))
            .and_then(|name| store.payer(name).ok().flatten())
            .and_then(|payer| payer.calling_hours);
        Some(Gate {
            zone,
            hours,
            // With an intent on record the platform may hold the call already (even if its id was lost):
            // it is re-attached or looked up at once, never held back by the hours.
            reattach: call.platform.is_some(),
        })
    }

    fn advance(&mut self, ctx: &mut Context<Self>) -> Result<(), OrchestrationError> {
        let record = self
            .shared
            .store
            .request(&self.request_id)?
            .ok_or(OrchestrationError::RequestVanished)?;
        let run = record.run.as_ref().ok_or(OrchestrationError::RunMissing)?;
        let step = run
            .steps
            .iter()
            .find(|s| s.key == self.key)
            .ok_or(OrchestrationError::StepVanished)?;
        if step.state != StepState::InProgress {
            self.end(ctx);
            return Ok(());
        }
        let calls: Vec<&CallRecord> = run
            .calls
            .iter()
            .filter(|c| c.step_key == self.key)
            .collect();
        if let Some(in_flight) = calls.iter().find(|c| c.outcome.is_none()) {
            // Placed before a restart and never finished: the call runs again under the same record; a
            // platform dialer re-attaches to the platform's call instead of creating another.
            let call = (*in_flight).clone();
            self.place(ctx, &record, call);
            return Ok(());
        }
        let first = record.dial.as_ref().map(|d| (d.number.as_str(), d.source));
        // The primary step asks only for what the electronic channel did not already fill.
        self.required = required_fields(&self.schema);
        if self.step_index == 0 {
            if let Some(electronic) = &run.electronic {
                self.required
                    .retain(|f| !electronic.captured.contains_key(f));
            }
        }
        match next_step_move(&calls, &self.required, first, record.environment) {
            StepDecision::Dial { number, source } => {
                let call = CallRecord {
                    id: CallId::new(),
                    seq: run.calls.len() as u32 + 1,
                    step_key: self.key.clone(),
                    attempt: calls.len() as u32 + 1,
                    to: number,
                    number_source: source,
                    placed_at: self.shared.clock.now(),
                    outcome: None,
                    platform: None,
                };
                let pushed = call.clone();
                self.persist(ctx, move |r| {
                    if let Some(run) = r.run.as_mut() {
                        if !run.calls.iter().any(|c| c.id == pushed.id) {
                            run.calls.push(pushed.clone());
                        }
                    }
                })?;
                let placed = call;
                ctx.wait(self.flush().map(move |flushed, act, ctx| match flushed {
                    Ok(record) => act.place(ctx, &record, placed),
                    Err(e) => act.crash(ctx, e.to_string()),
                }));
            }
            StepDecision::Succeed => self.close(ctx, StepState::Succeeded, None)?,
            StepDecision::Fail(failure) => self.close(ctx, StepState::Failed, Some(failure))?,
        }
        Ok(())
    }

    fn close(
        &mut self,
        ctx: &mut Context<Self>,
        state: StepState,
        error: Option<switchboard_storage::FailureRecord>,
    ) -> Result<(), OrchestrationError> {
        let key = self.key.clone();
        let required = self.required.clone();
        self.persist(ctx, move |r| {
            if let Some(run) = r.run.as_mut() {
                let calls: Vec<CallRecord> = run
                    .calls
                    .iter()
                    .filter(|c| c.step_key == key)
                    .cloned()
                    .collect();
                let refs: Vec<&CallRecord> = calls.iter().collect();
                if let Some(step) = run
                    .steps
                    .iter_mut()
                    .find(|s: &&mut StepRecord| s.key == key)
                {
                    close_step(step, &refs, &required, state, error.clone());
                }
            }
        })?;
        tracing::info!(state = state.as_str(), "step closed");
        ctx.wait(self.flush().map(|flushed, act, ctx| match flushed {
            Ok(_) => act.end(ctx),
            Err(e) => act.crash(ctx, e.to_string()),
        }));
        Ok(())
    }

    fn persist(
        &self,
        _: &mut Context<Self>,
        change: impl Fn(&mut RequestRecord),
    ) -> Result<(), OrchestrationError> {
        self.shared
            .store
            .update_request(&self.request_id, change)
            .map(|_| ())
            .map_err(OrchestrationError::from)
    }

    /// Waits for the last write to be on disk, then yields the current record.
    fn flush(&self) -> impl ActorFuture<Self, Output = Result<RequestRecord, OrchestrationError>> {
        let shared = self.shared.clone();
        let id = self.request_id.clone();
        async move {
            shared.store.durable().await?;
            shared
                .store
                .request(&id)?
                .ok_or(OrchestrationError::RequestVanished)
        }
        .into_actor(self)
    }
}

impl Actor for StepActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.notify(Advance);
        // A call actor that vanished without reporting (a panic outside the dialer) is a crash too.
        ctx.run_interval(Duration::from_millis(500), |act, ctx| {
            let gone = act
                .current_call
                .as_ref()
                .is_some_and(|(_, addr)| !addr.connected());
            if gone && !act.done {
                act.current_call = None;
                act.crash(ctx, "call actor stopped without reporting".into());
            }
        });
    }
}

impl Handler<Advance> for StepActor {
    type Result = ();

    fn handle(&mut self, _: Advance, ctx: &mut Context<Self>) {
        let span = self.span.clone();
        let _entered = span.enter();
        if self.done {
            return;
        }
        if let Err(reason) = self.advance(ctx) {
            self.crash(ctx, reason.to_string());
        }
    }
}

impl Handler<CallEnded> for StepActor {
    type Result = ();

    fn handle(&mut self, ended: CallEnded, ctx: &mut Context<Self>) {
        if self
            .current_call
            .as_ref()
            .is_some_and(|(id, _)| *id == ended.call_id)
        {
            self.current_call = None;
            ctx.notify(Advance);
        }
    }
}

impl Handler<CallCrashed> for StepActor {
    type Result = ();

    fn handle(&mut self, crashed: CallCrashed, ctx: &mut Context<Self>) {
        self.current_call = None;
        self.crash(
            ctx,
            format!("call {} crashed: {}", crashed.call_id, crashed.reason),
        );
    }
}
