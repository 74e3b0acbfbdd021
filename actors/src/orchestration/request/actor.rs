//! The request actor: the actix glue around [`decide`]. An advance reads the record and the account once,
//! decides, writes the move's change in one store write and awaits its flush (the store's group commit),
//! and only then asks the electronic channel, starts a step actor or tells the orchestrator it is done.
//! Moves that change only the record (starting the run, the electronic answer, a step's close, opening
//! the next step) are not written on their own: they ride with the step's first write or the terminal
//! write (see [`Edges`]).

use actix::prelude::*;
use chrono_tz::Tz;
use std::future::Future;
use std::sync::Arc;
use tracing::Instrument;

use switchboard_storage::audit::{Actor as AuditActor, NewEvent, Target};
use switchboard_storage::{
    AccountRecord, Feature, RequestId, RequestRecord, StorageError, TaskRecord, TaskState,
};

use super::schemas::StoreSchemas;
use super::{
    after_fault, decide, finalize, give_up, record_restart, task_instead, webhook_for, AfterFault,
    Ending, Move, StepPlan,
};
use crate::calendar::local_date;
use crate::electronic::ElectronicJob;
use crate::orchestration::edges::{Edge, Edges};
use crate::orchestration::error::OrchestrationError;
use crate::orchestration::learning;
use crate::orchestration::messages::{RequestEnded, StepParent};
use crate::orchestration::orchestrator::Orchestrator;
use crate::orchestration::step::{StepActor, StepJob};
use crate::orchestration::Shared;

/// One running request, under an actix `Supervisor`: stopping after a fault restarts it, and a restart
/// resumes from the store.
pub(crate) struct RequestActor {
    pub(super) shared: Shared,
    orchestrator: Addr<Orchestrator>,
    request_id: RequestId,
    pub(super) activity: Activity,
    /// Step actors started so far by this actor, across its restarts: the next step's incarnation.
    steps_started: u64,
    pub(super) span: tracing::Span,
    /// The request was purged: nothing more is decided or written, across restarts; the actor idles until
    /// its children let go of it.
    pub(super) purged: bool,
    /// The next look at a task a person is working (its close is also announced at once, see
    /// [`crate::orchestration::TaskChanged`]; this catches its expiry).
    task_watch: Option<SpawnHandle>,
}

/// How often a request waiting for a person looks whether its task expired.
const TASK_WATCH: std::time::Duration = std::time::Duration::from_secs(5);

/// What the actor is doing between messages. Only `Idle` decides; every other activity ends in a
/// continuation (or a child's report) that moves it on.
pub(super) enum Activity {
    /// Nothing under way: the next advance reads the record and decides.
    Idle,
    /// A transition is written; its flush is awaited before anything else happens.
    Persisting,
    /// The electronic channel is asked; its answer is written before anything else happens.
    Inquiring,
    /// A step actor (the `incarnation`-th started) runs a step; its report (or its disappearance) moves the request on. The
    /// address is held only to keep the step alive while it idles between calls.
    InStep {
        incarnation: u64,
        _step: Addr<StepActor>,
    },
    /// A fault is being recorded; the actor then stops and its supervisor restarts it.
    Restarting,
    /// The request is terminal (or gone): the orchestrator is told, then the actor stops.
    Ending,
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
            activity: Activity::Idle,
            steps_started: 0,
            span,
            purged: false,
            task_watch: None,
        }
    }

    /// Decides and takes the next move. `known` is the record as it will be once `edges` are written, when
    /// nothing else can have written it since (no step runs): as this actor last wrote it, or with an edge
    /// it has just taken; otherwise the record is read and `edges` applied to it. Record-only moves are
    /// added to `edges`, which ride along with the next write that must happen anyway (see [`Edges`]).
    pub(super) fn advance(
        &mut self,
        ctx: &mut Context<Self>,
        known: Option<RequestRecord>,
        edges: Edges,
    ) {
        if self.purged || !matches!(self.activity, Activity::Idle) {
            return;
        }
        let (shared, id) = (self.shared.clone(), self.request_id.clone());
        let decided = async move {
            let record = match known {
                Some(known) => known,
                None => match shared.store.fetch_request(&id).await? {
                    Some(read) => {
                        let mut record = Arc::unwrap_or_clone(read);
                        edges.apply(&mut record);
                        record
                    }
                    None => return Ok(None),
                },
            };
            let account = shared.store.account(&record.account_id).await?;
            let now = shared.clock.now();
            let mut schemas = StoreSchemas::new(shared.store.clone());
            let next = decide(&record, account.as_ref(), &mut schemas, now).await?;
            Ok::<_, OrchestrationError>(Some(Decided {
                record,
                account,
                edges,
                next,
                now,
            }))
        }
        // In the request's span: the reads are polled outside this handler.
        .instrument(self.span.clone());
        // Nothing else of this actor runs until the move is taken (`ctx.wait`): the record it decided on
        // is still the stored one, as no other write of the request runs meanwhile.
        ctx.wait(decided.into_actor(self).map(|decided, act, ctx| {
            let span = act.span.clone();
            let _entered = span.enter();
            match decided {
                Ok(Some(decided)) => act.take(ctx, decided),
                Ok(None) => act.end(ctx),
                Err(e) => act.fault(ctx, e.to_string()),
            }
        }));
    }

    /// Takes the move [`RequestActor::advance`] decided.
    fn take(&mut self, ctx: &mut Context<Self>, decided: Decided) {
        let Decided {
            mut record,
            account,
            mut edges,
            next,
            now,
        } = decided;
        match next {
            // A run that starts goes on at once: its start rides with whatever it does first.
            Move::StartRun { schema_version } => {
                tracing::info!(schema_version, "run started");
                let edge = Edge::StartRun {
                    schema_version,
                    at: now,
                };
                edges.take(edge, &mut record);
                self.advance(ctx, Some(record), edges);
            }
            // The terminal record is `record` itself, edges included.
            Move::Finish(ending) => self.finish(ctx, record, account.as_ref(), ending),
            Move::OpenStep(plan) => {
                let edge = Edge::OpenStep {
                    step: plan.step.clone(),
                    index: plan.index,
                };
                edges.take(edge, &mut record);
                self.start_step(ctx, &record, plan, account.as_ref(), edges);
            }
            // Every other move acts outside the record: what was decided is written first.
            _ if !edges.is_empty() => {
                let (store, id) = (self.shared.store.clone(), self.request_id.clone());
                self.persist(
                    ctx,
                    async move { store.commit_update(&id, move |r| edges.apply(r)).await },
                    |act, ctx, written| act.advance(ctx, Some(written), Edges::default()),
                )
            }
            Move::End => self.end(ctx),
            Move::AwaitPerson => self.await_person(ctx),
            Move::ExpireTask(task_id) => self.expire_task(ctx, task_id),
            Move::TryElectronic { primary } => {
                let today = local_date(self.shared.clock.now(), zone(account.as_ref()));
                let job = ElectronicJob {
                    request_id: record.id.clone(),
                    schema: primary,
                    inputs: record.inputs.clone(),
                    payer_electronic: record.payer_electronic,
                    electronic_payer_id: record.electronic_payer_id.clone(),
                    provider_name: account.and_then(|account| account.provider_name),
                    seed: self.shared.seed,
                    today,
                };
                self.try_electronic(ctx, &record, job);
            }
            Move::ResumeStep(plan) => {
                self.start_step(ctx, &record, plan, account.as_ref(), Edges::default());
            }
        }
    }

    fn start_step(
        &mut self,
        ctx: &mut Context<Self>,
        record: &RequestRecord,
        plan: StepPlan,
        account: Option<&AccountRecord>,
        edges: Edges,
    ) {
        self.steps_started += 1;
        let incarnation = self.steps_started;
        let job = StepJob {
            incarnation,
            request_id: self.request_id.clone(),
            key: plan.step.key.clone(),
            index: plan.index,
            schema: plan.schema,
            asks: plan.asks,
            restarts: record
                .run
                .as_ref()
                .map_or(0, |run| run.restarts.len() as u32),
            zone: zone(account),
            dialer: account.and_then(|a| a.dialer.clone()),
            learned_windows: account.is_some_and(|a| a.has(Feature::LearnedCallWindows)),
            edges,
            trace: record.trace.clone(),
        };
        let parent = StepParent::of(&ctx.address());
        let step = StepActor::new(self.shared.clone(), parent, job).start();
        self.activity = Activity::InStep {
            incarnation,
            _step: step,
        };
    }

    fn try_electronic(
        &mut self,
        ctx: &mut Context<Self>,
        record: &RequestRecord,
        job: ElectronicJob,
    ) {
        let channel = self.shared.electronic(record.environment);
        let name = channel.name();
        let closes_request = channel.closes_request(&job);
        let prices = self.shared.prices.for_environment(record.environment);
        // Futures polled by the actor's context run outside its span: the inquiry's own logs and the answer's
        // are put back under it, so they carry the request id.
        let inquiry = channel.inquire(job).instrument(self.span.clone());
        let otel = crate::telemetry::child(
            record.trace.as_ref(),
            || tracing::info_span!(target: crate::telemetry::TARGET, parent: None, "electronic.inquiry", switchboard.channel = name),
        );
        self.activity = Activity::Inquiring;
        // Nothing is written before the answer: a restart during the inquiry asks again (an inquiry has no
        // side effect) and places no call, because the answer rides with the write that opens the step.
        ctx.wait(inquiry.into_actor(self).map(move |answer, act, ctx| {
            drop(otel);
            act.activity = Activity::Idle;
            let at = act.shared.clock.now();
            tracing::info!(
                parent: &act.span,
                channel = name,
                fields = answer.captured.len(),
                "electronic channel tried"
            );
            let mut electronic = answer.into_record(name, at, prices);
            electronic.closes_request = closes_request;
            let electronic = Edge::Electronic(electronic);
            act.advance(ctx, None, Edges::of(electronic));
        }));
    }

    /// Writes the terminal record, computed once from `record`, and its webhook in the same write.
    fn finish(
        &mut self,
        ctx: &mut Context<Self>,
        record: RequestRecord,
        account: Option<&AccountRecord>,
        ending: Ending,
    ) {
        let now = self.shared.clock.now();
        let fallback = account.is_some_and(|a| a.has(Feature::HumanFallback));
        let waiting = fallback.then(|| record.clone());
        let mut terminal = record;
        finalize(&mut terminal, ending, now);
        if let (Some(mut waiting), Some(task)) = (waiting, task_instead(&terminal, account, now)) {
            return self.open_task(ctx, &mut waiting, task, now);
        }
        let delivery = webhook_for(&terminal, account, now);
        tracing::info!(
            state = terminal.state.as_str(),
            webhook = delivery.is_some(),
            "request finished"
        );
        let state = terminal.state;
        let traced = terminal.trace.is_some().then(|| terminal.clone());
        let completed = self.shared.metrics.completion_channel(&terminal);
        let cost = crate::cost::RequestCost::of(&terminal, self.shared.prices);
        let account_zone = zone(account);
        // Nothing else writes a request that finishes (its step has ended, or is given up on), so the
        // stored record is the one finalized; a record already terminal is left as it is.
        let store = self.shared.store.clone();
        self.persist(
            ctx,
            async move {
                let learning = match learning::payer_of(&store, &terminal).await {
                    Some(payer) => {
                        let payer_zone = learning::payer_zone(Some(&payer), account_zone);
                        learning::learning_of(&terminal, &payer, payer_zone)
                    }
                    None => None,
                };
                store.commit_final(terminal, delivery, learning).await
            },
            move |act, ctx, stored| {
                act.shared.metrics.request_finished(state);
                // Only the write that made the request terminal adds its cost: the one that found it
                // terminal already (another writer finished it) would count it twice.
                if stored {
                    act.shared.metrics.request_cost(cost);
                }
                if let Some(channel) = completed {
                    act.shared.metrics.request_completed(channel);
                }
                if let Some(terminal) = traced {
                    let modality = terminal.run.as_ref().and_then(|run| run.modality);
                    let modality = modality.map(|m| m.as_str());
                    crate::telemetry::finish_request(&terminal, modality, now);
                }
                act.end(ctx)
            },
        );
    }

    /// Keeps the request `PROCESSING` with `task` open for a person, in place of the ending it would have
    /// had: the record as it stands (edges included), the task, its index entry and `task.open` in one
    /// write.
    fn open_task(
        &mut self,
        ctx: &mut Context<Self>,
        waiting: &mut RequestRecord,
        task: TaskRecord,
        now: chrono::DateTime<chrono::Utc>,
    ) {
        tracing::info!(reason = %task.reason, "task opened for a person");
        let event = NewEvent {
            at: now,
            actor: AuditActor::system(),
            action: "task.open".into(),
            target: Some(Target::new("task", task.id.clone())),
            outcome: "ok".into(),
            ip: None,
            count: None,
        };
        if let Some(run) = waiting.run.as_mut() {
            run.task = Some(task);
        }
        let (store, record) = (self.shared.store.clone(), waiting.clone());
        self.persist(
            ctx,
            async move { store.open_task(record, event).await },
            |act, ctx, opened| {
                if !opened {
                    tracing::debug!(parent: &act.span, "task already opened");
                }
                act.advance(ctx, None, Edges::default())
            },
        );
    }

    /// A person is working the request's task: look again later for its expiry.
    fn await_person(&mut self, ctx: &mut Context<Self>) {
        if let Some(watch) = self.task_watch.take() {
            ctx.cancel_future(watch);
        }
        self.task_watch = Some(ctx.run_later(TASK_WATCH, |act, ctx| {
            act.task_watch = None;
            act.advance(ctx, None, Edges::default())
        }));
    }

    /// The task ran out of time: it expires, and the next advance ends the request as it would have.
    fn expire_task(&mut self, ctx: &mut Context<Self>, task_id: String) {
        let now = self.shared.clock.now();
        let (store, id) = (self.shared.store.clone(), self.request_id.clone());
        let event = Some(NewEvent {
            at: now,
            actor: AuditActor::system(),
            action: "task.expire".into(),
            target: Some(Target::new("task", task_id)),
            outcome: "ok".into(),
            ip: None,
            count: None,
        });
        self.persist(
            ctx,
            async move {
                let expired = store.change_task(&id, event, move |r| {
                    match r.run.as_mut().and_then(|run| run.task.as_mut()) {
                        Some(task) if !task.state.is_closed() => {
                            task.close(TaskState::Expired, None, now);
                            Ok(())
                        }
                        _ => Err(()),
                    }
                });
                expired.await.map(drop)
            },
            |act, ctx, ()| {
                tracing::info!(parent: &act.span, "task expired");
                act.advance(ctx, None, Edges::default())
            },
        );
    }

    /// Records a fault and restarts through the supervisor, or ends the request once the restart intensity
    /// is exceeded.
    pub(super) fn fault(&mut self, ctx: &mut Context<Self>, reason: String) {
        if self.purged {
            return;
        }
        tracing::error!(reason = %reason, "request fault");
        let now = self.shared.clock.now();
        let (store, id) = (self.shared.store.clone(), self.request_id.clone());
        self.activity = Activity::Restarting;
        let giving_up = async move {
            let record = store.request(&id).await.ok().flatten();
            let record = record.filter(|r| after_fault(r, now) == AfterFault::GiveUp)?;
            // Without its account the webhook could not be decided: restart instead and try again.
            let account = store.account(&record.account_id).await.ok()?;
            let ending = give_up(&record, &mut StoreSchemas::new(store)).await;
            Some((record, account, ending))
        };
        ctx.wait(giving_up.into_actor(self).map(move |giving_up, act, ctx| {
            match giving_up {
                Some((record, account, ending)) => {
                    tracing::error!(parent: &act.span, "restart intensity exceeded; failing the request");
                    act.activity = Activity::Idle;
                    act.finish(ctx, record, account.as_ref(), ending)
                }
                None => act.restart(ctx, now),
            }
        }));
    }

    /// Records the fault's restart, then stops: the supervisor starts the actor again.
    fn restart(&mut self, ctx: &mut Context<Self>, now: chrono::DateTime<chrono::Utc>) {
        self.shared.metrics.actor_restarted();
        let (store, id) = (self.shared.store.clone(), self.request_id.clone());
        ctx.wait(
            async move {
                let recorded = store.commit_update(&id, move |r| record_restart(r, now));
                if let Err(e) = recorded.await {
                    tracing::error!(error.message = %e, "cannot record the restart");
                }
            }
            .into_actor(self)
            .map(|_, _, ctx| ctx.stop()),
        );
    }

    fn end(&mut self, ctx: &mut Context<Self>) {
        self.activity = Activity::Ending;
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

    /// Waits for `write` and its flush with nothing else handled meanwhile, then continues with `then` and
    /// what the write returned; any failure is a fault.
    fn persist<T: 'static>(
        &mut self,
        ctx: &mut Context<Self>,
        write: impl Future<Output = Result<T, StorageError>> + 'static,
        then: impl FnOnce(&mut Self, &mut Context<Self>, T) + 'static,
    ) {
        self.activity = Activity::Persisting;
        ctx.wait(write.into_actor(self).map(move |written, act, ctx| {
            act.activity = Activity::Idle;
            match written {
                Ok(written) => then(act, ctx, written),
                Err(e) => act.fault(ctx, e.to_string()),
            }
        }));
    }
}

/// What an advance read and decided, for [`RequestActor::take`].
struct Decided {
    /// The record as it will be once `edges` are written.
    record: RequestRecord,
    account: Option<AccountRecord>,
    edges: Edges,
    next: Move,
    now: chrono::DateTime<chrono::Utc>,
}

/// The account's time zone, in which its step reads a payer's calling hours.
fn zone(account: Option<&AccountRecord>) -> Tz {
    account
        .and_then(|a| a.timezone.parse().ok())
        .unwrap_or(chrono_tz::America::New_York)
}
