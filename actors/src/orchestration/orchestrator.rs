//! The orchestrator: starts request actors when their day comes, resumes them after a restart, and
//! revives any that vanished.
//!
//! Due work is looked for on events: the create path announces requests booked for a day that has begun
//! ([`DueWorkAdded`]), and a manual clock move may make booked days begin. A slow sweep covers days that
//! begin as wall time passes and actors that vanished.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use switchboard_storage::RequestId;

use super::error::OrchestrationError;
use super::messages::{
    Advance, DispatchDue, GetStats, Halt, RequestEnded, StatsSnapshot, StopForPurge,
};
use super::request::{record_restart, RequestActor};
use super::Shared;
use crate::supervision::{guarded, InjectPanic, Singleton};
use crate::Metrics;

mod dispatch;

/// How often due work is looked for without an event.
const SWEEP: Duration = Duration::from_secs(1);

/// How long an announcement of due work waits for the ones after it. Under a stream of creates on a business
/// day every create announced, and each dispatch cleared the flag at once, so every create woke this
/// actor's thread; gathered, a burst of creates is one dispatch per window, and a request starts at most
/// this much later.
const GATHER: Duration = Duration::from_millis(2);

/// How due runs start: at most `size` per dispatch, the rest `interval` later. Started all at once, a burst
/// of 10,000 due requests ran 10,000 at a time: webhooks waited behind them (p99 0.5 to 0.9 s after
/// `completedAt`) and the store's log grew to 9.2 to 9.6 KB per finished request. In waves of 500 every
/// 100 ms, about 3,000 ran at a time, finishing as soon: p99 0.4 s, 7.8 to 7.9 KB.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waves {
    pub(crate) size: usize,
    pub(crate) interval: Duration,
}

const WAVES: Waves = Waves {
    size: 500,
    interval: Duration::from_millis(100),
};

/// Owner of every running request actor.
pub struct Orchestrator {
    shared: Shared,
    running: HashMap<RequestId, Addr<RequestActor>>,
    /// A dispatch is queued and has not run yet: further events until then are the same dispatch.
    dispatch_queued: bool,
    /// Shared with [`DueWork`]: due work was announced and no dispatch has read the index since.
    announced: Arc<AtomicBool>,
    waves: Waves,
    /// A due pass awaits the store: another would start what it starts.
    pass_in_flight: bool,
}

/// Event from the create path: requests were stored whose booked day has begun.
#[derive(Message)]
#[rtype(result = "()")]
pub struct DueWorkAdded;

/// The create path's way to announce due work: at most one [`DueWorkAdded`] waits for the orchestrator at a
/// time. POSTs on a business day each booked requests for today, and each sent one, waking the actor
/// thread once per create to learn what the first wake-up had already arranged.
#[derive(Clone)]
pub struct DueWork {
    orchestrator: Addr<Orchestrator>,
    /// Shared with the orchestrator, which clears it when it dispatches.
    pub(super) announced: Arc<AtomicBool>,
}

impl DueWork {
    /// Requests whose day has begun are stored: the next dispatch will start them.
    pub fn announce(&self) {
        if !self.announced.swap(true, Ordering::AcqRel) {
            self.orchestrator.do_send(DueWorkAdded);
        }
    }
}

/// Command from start-up: resume every request whose run had started; replies with how many.
#[derive(Message)]
#[rtype(result = "Resumed")]
pub struct ResumeActive;

/// How many requests [`ResumeActive`] resumed.
pub type Resumed = Result<usize, OrchestrationError>;

impl Orchestrator {
    /// Starts the supervised orchestrator over the shared context, and the create path's [`DueWork`] to it.
    pub fn start(shared: Shared) -> (Addr<Orchestrator>, DueWork) {
        Orchestrator::start_in_waves(shared, WAVES)
    }

    /// An orchestrator that never runs, and its announcements, which go nowhere: for a node that runs
    /// no work ([`crate::supervision::closed_address`]).
    pub fn closed() -> (Addr<Orchestrator>, DueWork) {
        let orchestrator = crate::supervision::closed_address();
        let due_work = DueWork {
            orchestrator: orchestrator.clone(),
            announced: Arc::new(AtomicBool::new(false)),
        };
        (orchestrator, due_work)
    }

    pub(crate) fn start_in_waves(shared: Shared, waves: Waves) -> (Addr<Orchestrator>, DueWork) {
        let announced = Arc::new(AtomicBool::new(false));
        let orchestrator = {
            let announced = Arc::clone(&announced);
            Supervisor::start(move |_| Orchestrator {
                shared,
                running: HashMap::new(),
                dispatch_queued: false,
                announced,
                waves,
                pass_in_flight: false,
            })
        };
        let due_work = DueWork {
            orchestrator: orchestrator.clone(),
            announced,
        };
        (orchestrator, due_work)
    }

    /// Queues a dispatch `after` from now, unless one is queued: the events until it runs are the same
    /// dispatch.
    fn wake(&mut self, ctx: &mut Context<Self>, after: Duration) {
        if !self.dispatch_queued {
            self.dispatch_queued = true;
            ctx.notify_later(DispatchDue, after);
        }
    }

    /// Starts an actor for every request whose run had started, then a due pass; answers how many. At
    /// start-up and after a restart of this actor, both rare. No other message of this actor runs until
    /// it is done.
    fn resume_active(&mut self) -> ResponseActFuture<Self, Resumed> {
        let store = self.shared.store.clone();
        let read = async move { store.active_request_ids().await };
        Box::pin(read.into_actor(self).map(|ids, act, ctx| {
            let resumed = guarded(act, ctx, |act, ctx| {
                let ids = ids?;
                let count = ids.len();
                for id in ids {
                    act.start_request(ctx, id);
                }
                act.dispatch_due(ctx);
                Ok(count)
            });
            resumed.unwrap_or(Err(OrchestrationError::RestartedWhileResuming))
        }))
    }

    fn start_request(&mut self, ctx: &mut Context<Self>, request_id: RequestId) {
        if self.running.get(&request_id).is_some_and(Addr::connected) {
            return;
        }
        let shared = self.shared.clone();
        let me = ctx.address();
        let id = request_id.clone();
        let addr = Supervisor::start(move |_| RequestActor::new(shared, me, id));
        self.running.insert(request_id, addr);
    }

    fn dispatch_due(&mut self, ctx: &mut Context<Self>) {
        self.dispatch_queued = false;
        // Cleared before the index is read: a request stored after the read announces itself again.
        self.announced.store(false, Ordering::Release);
        let now = self.shared.clock.now();
        // The due index is keyed by the instant a booked day begins: only what has fallen due is read.
        if !self.shared.dispatch_paused {
            self.run_pass(ctx, now);
        }
        // An actor that panicked outside the caught paths is gone without a trace but the store's.
        let vanished: Vec<RequestId> = self
            .running
            .iter()
            .filter(|(_, addr)| !addr.connected())
            .map(|(id, _)| id.clone())
            .collect();
        for id in vanished {
            tracing::error!(request_id = %id, "request actor vanished; restarting it from the store");
            let now = self.shared.clock.now();
            let (store, vanished) = (self.shared.store.clone(), id.clone());
            let recorded = async move {
                store
                    .commit_update(&vanished, move |r| record_restart(r, now))
                    .await
            };
            self.shared.metrics.actor_restarted();
            self.running.remove(&id);
            // Started once the fault is on record, so the new actor counts it when it decides whether
            // to give up.
            ctx.spawn(recorded.into_actor(self).map(move |recorded, act, ctx| {
                if let Err(e) = recorded {
                    tracing::error!(error.message = %e, request_id = %id, "cannot record the restart");
                }
                act.start_request(ctx, id);
            }));
        }
    }
}

impl Actor for Orchestrator {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let me = ctx.address();
        let mut ticks = self.shared.clock.ticks();
        // A system clock's receiver ends at once; a manual clock's signals every move.
        ctx.spawn(
            async move {
                while ticks.changed().await.is_ok() {
                    me.do_send(DueWorkAdded);
                }
            }
            .into_actor(self),
        );
        ctx.run_interval(SWEEP, |act, ctx| act.wake(ctx, Duration::ZERO));
    }
}

impl Supervised for Orchestrator {
    /// Request actors keep running across a restart (each is supervised on its own); those that are gone
    /// are dropped, and the store's `active` and `due` indexes are read again.
    fn restarting(&mut self, ctx: &mut Context<Self>) {
        self.running.retain(|_, addr| addr.connected());
        self.dispatch_queued = false;
        // A pass in flight was the stopped context's, and ended with it.
        self.pass_in_flight = false;
        let resumed = self.resume_active().map(|resumed, _, _| {
            if let Err(e) = resumed {
                tracing::error!(error.message = %e, "cannot reload orchestration from the store");
            }
        });
        ctx.wait(resumed);
    }
}

impl Singleton for Orchestrator {
    const NAME: &'static str = "orchestrator";

    fn metrics(&self) -> &Metrics {
        &self.shared.metrics
    }
}

impl Handler<ResumeActive> for Orchestrator {
    type Result = AtomicResponse<Self, Resumed>;

    fn handle(&mut self, _: ResumeActive, _: &mut Context<Self>) -> Self::Result {
        let resumed = self.resume_active().map(|resumed, _, _| {
            let count = resumed?;
            tracing::info!(resumed = count, "orchestration resumed");
            Ok(count)
        });
        AtomicResponse::new(Box::pin(resumed))
    }
}

impl Handler<DueWorkAdded> for Orchestrator {
    type Result = ();

    fn handle(&mut self, _: DueWorkAdded, ctx: &mut Context<Self>) {
        self.wake(ctx, GATHER);
    }
}

impl Handler<DispatchDue> for Orchestrator {
    type Result = ();

    fn handle(&mut self, _: DispatchDue, ctx: &mut Context<Self>) {
        guarded(self, ctx, |orchestrator, ctx| {
            orchestrator.dispatch_due(ctx)
        });
    }
}

impl Handler<InjectPanic> for Orchestrator {
    type Result = ();

    fn handle(&mut self, fault: InjectPanic, ctx: &mut Context<Self>) {
        guarded(self, ctx, |_, _| fault.panic(Self::NAME));
    }
}

impl Handler<Halt> for Orchestrator {
    type Result = ();

    fn handle(&mut self, halt: Halt, _: &mut Context<Self>) {
        if let Some(actor) = self.running.remove(&halt.0) {
            actor.do_send(StopForPurge);
        }
    }
}

/// From the admin API: a person changed the task of this request (completed or gave it up): its actor
/// looks again at once, started when none runs.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TaskChanged(pub RequestId);

impl Handler<TaskChanged> for Orchestrator {
    type Result = ();

    fn handle(&mut self, changed: TaskChanged, ctx: &mut Context<Self>) {
        match self.running.get(&changed.0) {
            Some(actor) if actor.connected() => actor.do_send(Advance),
            _ => self.start_request(ctx, changed.0),
        }
    }
}

impl Handler<RequestEnded> for Orchestrator {
    type Result = ();

    fn handle(&mut self, ended: RequestEnded, _: &mut Context<Self>) {
        self.running.remove(&ended.request_id);
    }
}

impl Handler<GetStats> for Orchestrator {
    type Result = MessageResult<GetStats>;

    fn handle(&mut self, _: GetStats, _: &mut Context<Self>) -> Self::Result {
        let totals = self.shared.metrics.totals();
        MessageResult(StatsSnapshot {
            running: self.running.len(),
            requests_started: totals.request_actors_started,
            requests_finished: totals.requests_finished,
            calls_ended: totals.calls_ended,
            panics: totals.panics,
            restarts: totals.restarts,
        })
    }
}
