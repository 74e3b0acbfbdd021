//! The dispatcher actor: finds due deliveries and runs their rounds, isolated per destination.
//!
//! It wakes on events: a delivery enqueued (the store signals the outbox), a manual clock move (later
//! rounds fall due), a round ending while a backlog waits. A slow sweep is the safety net for rounds that
//! fall due as wall time passes (15 minutes and more apart), not the latency of a new delivery.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use switchboard_storage::{DeliveryRecord, QueuePosition, RequestId, Store};
use tokio::sync::{oneshot, Semaphore};

mod redelivery;

pub use redelivery::{Redeliver, Redelivery};

use super::round::run_round;
use super::target::GuardedResolver;
use super::WebhookConfig;
use crate::supervision::{guarded, InjectPanic, Singleton};
use crate::{Clock, Metrics};

/// How often the outbox is swept without an event.
const SWEEP: Duration = Duration::from_secs(1);
/// The shortest time between two ticks.
const GAP: Duration = Duration::from_millis(5);
/// Deliveries started per tick, so a backlog drains without a thundering herd.
const BATCH: usize = 512;
/// How long a redelivery asked during a round of the same delivery waits for that round to end. A round
/// is one attempt with its inline retries (under a minute by default), but may first wait for a slot of a
/// slow destination.
const ROUND_WAIT: Duration = Duration::from_secs(60);

/// Drains the webhook outbox.
pub struct WebhookDispatcher {
    store: Store,
    clock: Clock,
    config: Arc<WebhookConfig>,
    client: reqwest::Client,
    metrics: Arc<Metrics>,
    in_flight: HashSet<RequestId>,
    destinations: HashMap<String, Arc<Semaphore>>,
    /// A tick is queued and has not run yet: further wake-ups until then are the same tick.
    tick_queued: bool,
    /// The last tick left due deliveries behind (its batch was full).
    backlog: bool,
    /// Where the last tick stopped in the outbox queue. Everything before it was started or is in flight,
    /// and new deliveries queue after it, so an event-driven tick resumes there instead of walking past
    /// every round in flight again. `None`: the next tick scans from the oldest entry.
    resume_after: Option<QueuePosition>,
    last_tick: Instant,
    /// Redeliveries asked for while a round of the same delivery ran, told when it has ended.
    after_round: HashMap<RequestId, Vec<oneshot::Sender<()>>>,
}

#[derive(Message)]
#[rtype(result = "()")]
struct Tick;

impl WebhookDispatcher {
    /// A dispatcher with its own HTTP client: no redirects followed, the configured attempt timeout.
    /// Every attempt's outcome is counted in `metrics`.
    pub fn new(
        store: Store,
        clock: Clock,
        config: WebhookConfig,
        metrics: Arc<Metrics>,
    ) -> Result<WebhookDispatcher, reqwest::Error> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(config.attempt_timeout)
            .user_agent(concat!("Switchboard-Webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: config.allow_private_targets,
            }))
            .build()?;
        Ok(WebhookDispatcher {
            store,
            clock,
            config: Arc::new(config),
            client,
            metrics,
            in_flight: HashSet::new(),
            destinations: HashMap::new(),
            tick_queued: false,
            backlog: false,
            resume_after: None,
            last_tick: Instant::now(),
            after_round: HashMap::new(),
        })
    }

    fn destination(&mut self, url: &str) -> Arc<Semaphore> {
        let key = url::Url::parse(url)
            .ok()
            .map(|u| {
                format!(
                    "{}:{}",
                    u.host_str().unwrap_or_default(),
                    u.port_or_known_default().unwrap_or(0)
                )
            })
            .unwrap_or_default();
        let permits = self.config.per_destination_concurrency.max(1);
        Arc::clone(
            self.destinations
                .entry(key)
                .or_insert_with(|| Arc::new(Semaphore::new(permits))),
        )
    }

    /// Runs one round (or redelivery) of `delivery` as a task of its own, which saves the delivery and
    /// reports [`RoundEnded`]. The caller has marked it in flight.
    fn spawn_round(&self, ctx: &mut Context<Self>, gate: Arc<Semaphore>, delivery: DeliveryRecord) {
        let (store, clock, client, config, metrics) = (
            self.store.clone(),
            self.clock.clone(),
            self.client.clone(),
            Arc::clone(&self.config),
            Arc::clone(&self.metrics),
        );
        let ended = RoundEnds {
            dispatcher: ctx.address(),
            request_id: Some(delivery.request_id.clone()),
        };
        // Each round is its own task, not an item of this actor's context: actix polls every item of a
        // context on each wake-up, so thousands of rounds waiting for a destination's slot would make
        // every wake-up cost thousands of polls. Only the bookkeeping comes back, as a message; the
        // address outlives restarts, so a round running across one still reports.
        actix::spawn(async move {
            let _ended = ended;
            let previous_queued_at = delivery.queued_at();
            let updated = {
                let _permit = gate.acquire_owned().await;
                run_round(&store, &clock, &client, &config, &metrics, delivery).await
            };
            if let Err(e) = store.commit_delivery(previous_queued_at, &updated).await {
                tracing::error!(error.message = %e, request_id = %updated.request_id, "cannot save a webhook delivery");
            }
        });
    }

    fn wake(&mut self, ctx: &mut Context<Self>) {
        // A stopped arbiter drops this actor outside any runtime, after one last poll that may still handle
        // a queued wake-up: a timer created then would panic. Nothing is lost: the next start rescans.
        if ctx.state() != ActorState::Running {
            return;
        }
        if !self.tick_queued {
            self.tick_queued = true;
            // Ticks are at least GAP apart: a burst of completions becomes batches, not a tick per webhook.
            let wait = GAP.saturating_sub(self.last_tick.elapsed());
            ctx.notify_later(Tick, wait);
        }
    }

    /// A wake-up that scans the whole queue: rounds may have fallen due before the resume position (a
    /// clock moved on, a round rescheduled), and the periodic sweep is the safety net for anything missed.
    fn rescan(&mut self, ctx: &mut Context<Self>) {
        self.resume_after = None;
        self.wake(ctx);
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        self.tick_queued = false;
        self.last_tick = Instant::now();
        // Deliveries in flight keep their queue entries until their round ends: they are passed over by key,
        // or a backlog waiting on one slow destination would fill every batch and starve the others.
        let in_flight = self.in_flight.clone();
        let (store, now, after) = (
            self.store.clone(),
            self.clock.now(),
            self.resume_after.clone(),
        );
        let read = async move {
            let skip = |id: &RequestId| in_flight.contains(id);
            store
                .due_deliveries_except(now, after.as_ref(), BATCH, skip)
                .await
        };
        // Nothing else of this actor runs until the page is handed out: no round ends or starts meanwhile.
        ctx.wait(read.into_actor(self).map(|due, act, ctx| match due {
            Ok(due) => act.start_rounds(ctx, due),
            Err(e) => tracing::error!(error.message = %e, "cannot read the webhook outbox"),
        }));
    }

    /// Starts a round of each of `due`, an outbox page, unless one runs already.
    fn start_rounds(&mut self, ctx: &mut Context<Self>, due: Vec<DeliveryRecord>) {
        self.backlog = due.len() >= BATCH;
        if let Some(last) = due.last() {
            self.resume_after = Some(QueuePosition::of(last));
        }
        for delivery in due {
            if !self.in_flight.insert(delivery.request_id.clone()) {
                continue;
            }
            let gate = self.destination(&delivery.url);
            self.spawn_round(ctx, gate, delivery);
        }
    }
}

impl Actor for WebhookDispatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let me = ctx.address();
        let (store, mut ticks) = (self.store.clone(), self.clock.ticks());
        // Each waiter only forwards the event; the actor coalesces them into ticks.
        ctx.spawn(
            async move {
                loop {
                    store.outbox_enqueued().await;
                    me.do_send(Wake);
                }
            }
            .into_actor(self),
        );
        let me = ctx.address();
        ctx.spawn(
            async move {
                while ticks.changed().await.is_ok() {
                    me.do_send(Rescan);
                }
            }
            .into_actor(self),
        );
        ctx.run_interval(SWEEP, |act, ctx| act.rescan(ctx));
        self.wake(ctx);
    }
}

impl Supervised for WebhookDispatcher {
    /// Rounds in flight run on as their own tasks and report their end to the restarted actor, so they stay
    /// marked in flight: none is started twice.
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.tick_queued = false;
        self.resume_after = None;
        self.backlog = false;
    }
}

impl Singleton for WebhookDispatcher {
    const NAME: &'static str = "webhook_dispatcher";

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}

/// An event that may have made deliveries due anywhere in the queue.
#[derive(Message)]
#[rtype(result = "()")]
struct Rescan;

impl Handler<Rescan> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, _: Rescan, ctx: &mut Context<Self>) {
        self.rescan(ctx);
    }
}

/// Reports a round's end when dropped: at the end of its task, and also when the task panicked, so its
/// delivery does not stay in flight (and a redelivery waiting on it does not wait forever).
struct RoundEnds {
    dispatcher: Addr<WebhookDispatcher>,
    request_id: Option<RequestId>,
}

impl Drop for RoundEnds {
    fn drop(&mut self) {
        if let Some(request_id) = self.request_id.take() {
            self.dispatcher.do_send(RoundEnded { request_id });
        }
    }
}

/// A round has ended and its delivery is saved: it may be picked up again when its next round falls due.
#[derive(Message)]
#[rtype(result = "()")]
struct RoundEnded {
    request_id: RequestId,
}

impl Handler<RoundEnded> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, ended: RoundEnded, ctx: &mut Context<Self>) {
        self.in_flight.remove(&ended.request_id);
        for waiting in self
            .after_round
            .remove(&ended.request_id)
            .into_iter()
            .flatten()
        {
            let _ = waiting.send(());
        }
        if self.backlog {
            self.wake(ctx);
        }
    }
}

/// An event that may have made deliveries due.
#[derive(Message)]
#[rtype(result = "()")]
struct Wake;

impl Handler<Wake> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, _: Wake, ctx: &mut Context<Self>) {
        self.wake(ctx);
    }
}

impl Handler<Tick> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, _: Tick, ctx: &mut Context<Self>) {
        guarded(self, ctx, |dispatcher, ctx| dispatcher.tick(ctx));
    }
}

impl Handler<InjectPanic> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, fault: InjectPanic, ctx: &mut Context<Self>) {
        guarded(self, ctx, |_, _| fault.panic(Self::NAME));
    }
}
