//! The request actor: drives one request from its due day to a terminal state, step by step.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use chrono::Duration as CalendarDuration;
use switchboard_storage::{
    AccountRecord, DeliveryRecord, DeliveryStatus, ElectronicRecord, Environment, Feature,
    RequestId, RequestRecord, RequestState, RunRecord, SchemaVersionRecord, StepKey, StepRecord,
    StepState,
};

use super::error::OrchestrationError;
use super::messages::{Advance, RequestEnded, StepCrashed, StepEnded};
use super::orchestrator::Orchestrator;
use super::outcome::{failure, finish, required_fields};
use super::step::StepActor;
use super::{Shared, RESTART_LIMIT, RESTART_WINDOW_SECONDS};
use crate::electronic::summary::result_summary;
use crate::electronic::ElectronicJob;

/// One running request, under an actix `Supervisor`: stopping after a fault restarts it, and a restart
/// reloads everything from the store.
pub(crate) struct RequestActor {
    shared: Shared,
    orchestrator: Addr<Orchestrator>,
    request_id: RequestId,
    current_step: Option<(StepKey, Addr<StepActor>)>,
    busy: bool,
    finished: bool,
    span: tracing::Span,
}

/// What the request does next, decided from its persisted state.
enum Next {
    StartRun(u32),
    TryElectronic(Arc<SchemaVersionRecord>),
    RunStep(StepRecord, usize, Arc<SchemaVersionRecord>),
    OpenStep(StepRecord, usize, Arc<SchemaVersionRecord>),
    Finish(Option<switchboard_storage::FailureRecord>),
    Ended,
}

impl RequestActor {
    pub(crate) fn new(
        shared: Shared,
        orchestrator: Addr<Orchestrator>,
        request_id: RequestId,
    ) -> RequestActor {
        let span = tracing::info_span!("request", request_id = %request_id);
        RequestActor {
            shared,
            orchestrator,
            request_id,
            current_step: None,
            busy: false,
            finished: false,
            span,
        }
    }

    fn decide(&self) -> Result<Next, OrchestrationError> {
        let store = &self.shared.store;
        let Some(record) = store.request(&self.request_id)? else {
            return Ok(Next::Ended);
        };
        if record.state.is_terminal() {
            return Ok(Next::Ended);
        }
        let Some(account) = store.account(&record.account_id)? else {
            return Ok(Next::Finish(Some(failure(
                "SYSTEM_ERROR",
                "OTHER",
                "The account no longer exists",
            ))));
        };
        let Some(run) = &record.run else {
            let latest = store
                .schema_head(&record.schema_id)?
                .map_or(record.schema_version, |head| head.latest_version);
            return Ok(Next::StartRun(latest));
        };
        // Restarts recorded by the orchestrator for an actor that vanished count like the actor's own.
        let window_start =
            self.shared.clock.now() - CalendarDuration::seconds(RESTART_WINDOW_SECONDS);
        if run.restarts.iter().filter(|t| **t >= window_start).count() > RESTART_LIMIT {
            return Ok(Next::Finish(Some(failure(
                "SYSTEM_ERROR",
                "OTHER",
                "The request failed repeatedly inside Switchboard",
            ))));
        }
        let primary = self.schema(&record.schema_id, run.schema_version)?;
        if run.steps.is_empty() {
            if run.electronic.is_none() && account.has(Feature::ElectronicChannels) {
                return Ok(Next::TryElectronic(primary));
            }
            let filled = run.electronic.as_ref().is_some_and(|e| {
                required_fields(&primary)
                    .iter()
                    .all(|f| e.captured.contains_key(f))
            });
            if filled {
                return Ok(Next::Finish(None));
            }
            let mut step = new_step(&primary, 1, None);
            if let Some(electronic) = &run.electronic {
                step.missing_fields
                    .retain(|f| !electronic.captured.contains_key(f));
                step.fields_required = step.missing_fields.len() as u32;
            }
            return Ok(Next::OpenStep(step, 0, primary));
        }
        let last = run.steps.last().expect("steps is not empty");
        let index = run.steps.len() - 1;
        if last.state == StepState::InProgress {
            let schema = self.schema(&last.schema_id, last.schema_version)?;
            return Ok(Next::RunStep(last.clone(), index, schema));
        }
        let first = &run.steps[0];
        let requested = run
            .calls
            .iter()
            .filter(|c| c.step_key == first.key)
            .filter_map(|c| c.outcome.as_ref())
            .any(|o| o.follow_up_requested);
        if first.state == StepState::Succeeded && run.steps.len() == 1 && requested {
            if let Some(leg) = self.follow_up_leg(&account, &primary)? {
                return Ok(Next::OpenStep(
                    new_step(&leg, 2, Some(first.key.clone())),
                    1,
                    leg,
                ));
            }
        }
        Ok(Next::Finish(None))
    }

    fn follow_up_leg(
        &self,
        account: &AccountRecord,
        primary: &SchemaVersionRecord,
    ) -> Result<Option<Arc<SchemaVersionRecord>>, OrchestrationError> {
        let Some(leg_id) = primary.definition.follow_up.as_deref() else {
            return Ok(None);
        };
        if !account.has(Feature::FollowUpCalls) {
            return Ok(None);
        }
        match self.shared.store.schema_head(leg_id)? {
            Some(head) => self.schema(leg_id, head.latest_version).map(Some),
            None => Ok(None),
        }
    }

    fn schema(
        &self,
        id: &str,
        version: u32,
    ) -> Result<Arc<SchemaVersionRecord>, OrchestrationError> {
        self.shared
            .store
            .schema_version(id, version)?
            .map(Arc::new)
            .ok_or_else(|| OrchestrationError::SchemaMissing {
                id: id.to_owned(),
                version,
            })
    }

    fn advance(&mut self, ctx: &mut Context<Self>) {
        if self.busy || self.finished || self.current_step.is_some() {
            return;
        }
        let next = match self.decide() {
            Ok(next) => next,
            Err(reason) => return self.fault(ctx, reason.to_string()),
        };
        match next {
            Next::Ended => self.end(ctx),
            Next::StartRun(version) => {
                let now = self.shared.clock.now();
                self.persist_then_advance(ctx, move |r| {
                    if r.run.is_none() {
                        r.run = Some(RunRecord {
                            started_at: Some(now),
                            schema_version: version,
                            ..RunRecord::default()
                        });
                    }
                });
                tracing::info!(schema_version = version, "run started");
            }
            Next::TryElectronic(schema) => self.try_electronic(ctx, schema),
            Next::OpenStep(step, index, schema) => {
                let opened = step.clone();
                self.persist_then(
                    ctx,
                    move |r| {
                        if let Some(run) = r.run.as_mut() {
                            if run.steps.len() == index {
                                run.steps.push(opened.clone());
                            }
                        }
                    },
                    move |act, ctx| act.spawn_step(ctx, step, index, schema),
                );
            }
            Next::RunStep(step, index, schema) => self.spawn_step(ctx, step, index, schema),
            Next::Finish(error) => self.finish(ctx, error),
        }
    }

    fn spawn_step(
        &mut self,
        ctx: &mut Context<Self>,
        step: StepRecord,
        index: usize,
        schema: Arc<SchemaVersionRecord>,
    ) {
        let restarts = self.restarts();
        let actor = StepActor::new(
            self.shared.clone(),
            ctx.address(),
            self.request_id.clone(),
            step.key.clone(),
            index,
            schema,
            restarts,
        )
        .start();
        self.current_step = Some((step.key, actor));
    }

    fn restarts(&self) -> u32 {
        self.shared
            .store
            .request(&self.request_id)
            .ok()
            .flatten()
            .and_then(|r| r.run)
            .map_or(0, |run| run.restarts.len() as u32)
    }

    fn try_electronic(&mut self, ctx: &mut Context<Self>, schema: Arc<SchemaVersionRecord>) {
        let Ok(Some(record)) = self.shared.store.request(&self.request_id) else {
            return self.fault(ctx, "request vanished".into());
        };
        let provider_name = self
            .shared
            .store
            .account(&record.account_id)
            .ok()
            .flatten()
            .and_then(|account| account.provider_name);
        let job = ElectronicJob {
            request_id: record.id.clone(),
            schema,
            inputs: record.inputs.clone(),
            payer_electronic: record.payer_electronic,
            electronic_payer_id: record.electronic_payer_id.clone(),
            provider_name,
            seed: self.shared.seed,
        };
        let channel = self.shared.electronic(record.environment);
        let name = channel.name();
        let lookup = channel.inquire(job);
        self.busy = true;
        // Nothing is written before the answer: a restart during the inquiry asks again (an inquiry has no
        // side effect) and places no call, because the step opens only after the answer is recorded.
        ctx.wait(lookup.into_actor(self).map(move |answer, act, ctx| {
            act.busy = false;
            let at = act.shared.clock.now();
            tracing::info!(
                channel = name,
                fields = answer.captured.len(),
                "electronic channel tried"
            );
            let record: ElectronicRecord = answer.into_record(name, at);
            act.persist_then_advance(ctx, move |r| {
                if let Some(run) = r.run.as_mut() {
                    run.electronic.get_or_insert_with(|| record.clone());
                }
            });
        }));
    }

    fn finish(
        &mut self,
        ctx: &mut Context<Self>,
        error: Option<switchboard_storage::FailureRecord>,
    ) {
        let now = self.shared.clock.now();
        let current = match self.shared.store.request(&self.request_id) {
            Ok(Some(record)) => record,
            Ok(None) => return self.end(ctx),
            Err(e) => return self.fault(ctx, e.to_string()),
        };
        let version = current
            .run
            .as_ref()
            .map_or(current.schema_version, |run| run.schema_version);
        let primary = self.schema(&current.schema_id, version).ok();
        let primary_required = primary.as_deref().map(required_fields).unwrap_or_default();
        // The webhook is decided on the terminal record and enqueued in the same write that makes it so.
        let mut terminal = current;
        finalize(
            &mut terminal,
            error.clone(),
            &primary_required,
            primary.as_deref(),
            now,
        );
        let delivery = match webhook_for(&self.shared.store, &terminal, now) {
            Ok(delivery) => delivery,
            Err(e) => return self.fault(ctx, e.to_string()),
        };
        tracing::info!(
            state = terminal.state.as_str(),
            webhook = delivery.is_some(),
            "request finished"
        );
        let state = terminal.state;
        self.persist_then_with(
            ctx,
            move |r| finalize(r, error.clone(), &primary_required, primary.as_deref(), now),
            delivery,
            move |act, ctx| {
                act.shared.metrics.request_finished(state);
                act.end(ctx)
            },
        );
    }

    /// Records a fault and restarts through the supervisor, or ends the request once the restart intensity
    /// is exceeded.
    fn fault(&mut self, ctx: &mut Context<Self>, reason: String) {
        tracing::error!(reason = %reason, "request fault");
        self.current_step = None;
        let now = self.shared.clock.now();
        let window_start = now - CalendarDuration::seconds(RESTART_WINDOW_SECONDS);
        let recent = self
            .shared
            .store
            .request(&self.request_id)
            .ok()
            .flatten()
            .and_then(|r| r.run)
            .map_or(0, |run| {
                run.restarts.iter().filter(|t| **t >= window_start).count()
            });
        if recent >= RESTART_LIMIT {
            tracing::error!(
                restarts = recent,
                "restart intensity exceeded; failing the request"
            );
            return self.finish(
                ctx,
                Some(failure(
                    "SYSTEM_ERROR",
                    "OTHER",
                    "The request failed repeatedly inside Switchboard",
                )),
            );
        }
        let recorded = self.shared.store.update_request(&self.request_id, |r| {
            if let Some(run) = r.run.as_mut() {
                run.faults += 1;
                run.restarts.retain(|t| *t >= window_start);
                run.restarts.push(now);
            }
        });
        self.shared.metrics.actor_restarted();
        let shared = self.shared.clone();
        self.busy = true;
        ctx.wait(
            async move {
                if recorded.is_ok() {
                    let _ = shared.store.durable().await;
                }
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    fn end(&mut self, ctx: &mut Context<Self>) {
        self.finished = true;
        let orchestrator = self.orchestrator.clone();
        let request_id = self.request_id.clone();
        ctx.wait(
            async move {
                let _ = orchestrator.send(RequestEnded { request_id }).await;
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    fn persist_then_advance(
        &mut self,
        ctx: &mut Context<Self>,
        change: impl Fn(&mut RequestRecord) + 'static,
    ) {
        self.persist_then(ctx, change, |_, ctx| ctx.notify(Advance));
    }

    /// Writes `change`, waits for the flush, then continues with `then`; any failure is a fault.
    fn persist_then(
        &mut self,
        ctx: &mut Context<Self>,
        change: impl Fn(&mut RequestRecord) + 'static,
        then: impl FnOnce(&mut Self, &mut Context<Self>) + 'static,
    ) {
        self.persist_then_with(ctx, change, None, then);
    }

    /// [`RequestActor::persist_then`], enqueueing a webhook delivery in the same write.
    fn persist_then_with(
        &mut self,
        ctx: &mut Context<Self>,
        change: impl Fn(&mut RequestRecord) + 'static,
        delivery: Option<DeliveryRecord>,
        then: impl FnOnce(&mut Self, &mut Context<Self>) + 'static,
    ) {
        let written = self.shared.store.update_request_with_delivery(
            &self.request_id,
            change,
            delivery.as_ref(),
        );
        if let Err(e) = written {
            return self.fault(ctx, e.to_string());
        }
        let shared = self.shared.clone();
        self.busy = true;
        ctx.wait(
            async move { shared.store.durable().await }
                .into_actor(self)
                .map(move |flushed, act, ctx| {
                    act.busy = false;
                    match flushed {
                        Ok(()) => then(act, ctx),
                        Err(e) => act.fault(ctx, e.to_string()),
                    }
                }),
        );
    }
}

/// The webhook of a terminal request (service-interface 6.1, 6.3): the request's frozen URL, else the
/// account's; signed with the account's webhook secret, else the API key that created the request, for
/// production; with the sandbox API key for sandbox. `None` when there is nowhere to send it.
fn webhook_for(
    store: &switchboard_storage::Store,
    record: &RequestRecord,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<DeliveryRecord>, OrchestrationError> {
    let account = store.account(&record.account_id)?;
    let Some(account) = account else {
        return Ok(None);
    };
    let Some(url) = record
        .webhook_url
        .clone()
        .or_else(|| account.webhook_url.clone())
    else {
        return Ok(None);
    };
    let api_key = account
        .credentials
        .iter()
        .find(|c| Some(&c.id) == record.credential_id.as_ref())
        .or_else(|| {
            account
                .credentials
                .iter()
                .find(|c| c.environment == record.environment)
        })
        .map(|c| c.key.clone());
    let secret = match record.environment {
        Environment::Production => account.webhook_secret.clone().or(api_key),
        Environment::Sandbox => api_key,
    };
    let Some(signing_secret) = secret else {
        tracing::warn!("no signing secret for the webhook; not sent");
        return Ok(None);
    };
    Ok(Some(DeliveryRecord {
        request_id: record.id.clone(),
        url,
        signing_secret,
        payload: crate::webhooks::payload(record),
        terminal_at: now,
        next_round: 0,
        next_at: now,
        status: DeliveryStatus::Pending,
        attempts: 0,
    }))
}

/// The terminal transition: state, results, completion time. The request leaves the active index in the
/// same write.
fn finalize(
    record: &mut RequestRecord,
    error: Option<switchboard_storage::FailureRecord>,
    primary_required: &[String],
    primary: Option<&SchemaVersionRecord>,
    now: chrono::DateTime<chrono::Utc>,
) {
    if record.state.is_terminal() {
        return;
    }
    let run = record.run.get_or_insert_with(RunRecord::default);
    let primary_succeeded = run
        .steps
        .first()
        .is_some_and(|s| s.state == StepState::Succeeded);
    let state = match error {
        // A fault during the follow-up leg fails the leg, not the request: the primary's answers stand.
        Some(error) if primary_succeeded => {
            for step in run
                .steps
                .iter_mut()
                .filter(|s| s.state == StepState::InProgress)
            {
                step.state = StepState::Failed;
                step.error = Some(error.clone());
            }
            finish(run, primary_required)
        }
        Some(error) => {
            for step in run
                .steps
                .iter_mut()
                .filter(|s| s.state == StepState::InProgress)
            {
                step.state = StepState::Failed;
                step.error = Some(error.clone());
            }
            run.error = Some(error);
            run.results.clear();
            run.result_sources.clear();
            run.missing_fields = primary_required.to_vec();
            if run.modality.is_none() {
                run.modality = Some(switchboard_storage::Modality::PhoneOnly);
            }
            RequestState::Failure
        }
        None => finish(run, primary_required),
    };
    let answered = matches!(state, RequestState::Success | RequestState::Partial);
    if answered && run.modality == Some(switchboard_storage::Modality::DigitalOnly) {
        if let Some(schema) = primary {
            run.result_summary = Some(result_summary(
                &schema.definition,
                &run.results,
                run.electronic.as_ref(),
            ));
        }
    }
    record.state = state;
    record.completed_at = Some(now);
}

fn new_step(
    schema: &SchemaVersionRecord,
    number: usize,
    triggered_by: Option<StepKey>,
) -> StepRecord {
    let required = required_fields(schema);
    StepRecord {
        key: StepKey::numbered(number),
        schema_id: schema.id.clone(),
        schema_version: schema.version,
        name: schema
            .definition
            .name
            .clone()
            .unwrap_or_else(|| schema.id.clone()),
        state: StepState::InProgress,
        triggered_by,
        fields_required: required.len() as u32,
        fields_captured: 0,
        missing_fields: required,
        error: None,
    }
}

impl Actor for RequestActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.shared.metrics.request_actor_started();
        ctx.notify(Advance);
        ctx.run_interval(Duration::from_millis(500), |act, ctx| {
            let gone = act
                .current_step
                .as_ref()
                .is_some_and(|(_, addr)| !addr.connected());
            if gone {
                act.current_step = None;
                act.fault(ctx, "step actor stopped without reporting".into());
            }
        });
    }
}

impl Supervised for RequestActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        tracing::warn!(parent: &self.span, "request actor restarting; reloading from the store");
        self.current_step = None;
        self.busy = false;
    }
}

impl Handler<Advance> for RequestActor {
    type Result = ();

    fn handle(&mut self, _: Advance, ctx: &mut Context<Self>) {
        let span = self.span.clone();
        let _entered = span.enter();
        self.advance(ctx);
    }
}

impl Handler<StepEnded> for RequestActor {
    type Result = ();

    fn handle(&mut self, ended: StepEnded, ctx: &mut Context<Self>) {
        if self
            .current_step
            .as_ref()
            .is_some_and(|(key, _)| *key == ended.key)
        {
            self.current_step = None;
            ctx.notify(Advance);
        }
    }
}

impl Handler<StepCrashed> for RequestActor {
    type Result = ();

    fn handle(&mut self, crashed: StepCrashed, ctx: &mut Context<Self>) {
        let span = self.span.clone();
        let _entered = span.enter();
        if self
            .current_step
            .as_ref()
            .is_some_and(|(key, _)| *key == crashed.key)
        {
            self.fault(
                ctx,
                format!("step {} crashed: {}", crashed.key, crashed.reason),
            );
        }
    }
}
