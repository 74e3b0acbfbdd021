//! The dispatcher actor: finds due deliveries and runs their rounds, isolated per destination.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use switchboard_storage::Store;
use tokio::sync::Semaphore;

use super::round::run_round;
use super::target::GuardedResolver;
use super::WebhookConfig;
use crate::{Clock, Metrics};

/// How often the outbox is looked at. Deliveries enqueued in between wait at most this long.
const TICK: Duration = Duration::from_millis(100);
/// Deliveries started per tick, so a backlog drains without a thundering herd.
const BATCH: usize = 512;

/// Drains the webhook outbox.
pub struct WebhookDispatcher {
    store: Store,
    clock: Clock,
    config: Arc<WebhookConfig>,
    client: reqwest::Client,
    metrics: Arc<Metrics>,
    in_flight: HashSet<String>,
    destinations: HashMap<String, Arc<Semaphore>>,
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

    fn tick(&mut self, ctx: &mut Context<Self>) {
        // Deliveries in flight keep their queue entries until their round ends: look past them, or a
        // backlog waiting on one slow destination would fill every batch and starve the others.
        let limit = BATCH + self.in_flight.len();
        let due = match self.store.due_deliveries(self.clock.now(), limit) {
            Ok(due) => due,
            Err(e) => return tracing::error!(error.message = %e, "cannot read the webhook outbox"),
        };
        for delivery in due {
            if !self.in_flight.insert(delivery.request_id.clone()) {
                continue;
            }
            let gate = self.destination(&delivery.url);
            let (store, clock, client, config, metrics) = (
                self.store.clone(),
                self.clock.clone(),
                self.client.clone(),
                Arc::clone(&self.config),
                Arc::clone(&self.metrics),
            );
            let request_id = delivery.request_id.clone();
            let work = async move {
                let _permit = gate.acquire_owned().await;
                // The delivery was enqueued by the terminal write, possibly not flushed yet: no webhook may
                // announce a state that a crash could still undo.
                if delivery.next_round == 0 {
                    if let Err(e) = store.durable().await {
                        tracing::error!(error.message = %e, "cannot flush before a webhook");
                        return;
                    }
                }
                let previous_next_at = delivery.next_at;
                let updated = run_round(&store, &clock, &client, &config, &metrics, delivery).await;
                if let Err(e) = store.save_delivery(previous_next_at, &updated) {
                    tracing::error!(error.message = %e, request_id = %updated.request_id, "cannot save a webhook delivery");
                }
                if let Err(e) = store.durable().await {
                    tracing::error!(error.message = %e, "cannot flush a webhook delivery");
                }
            };
            // Each round runs on its own; only bookkeeping comes back to the actor.
            ctx.spawn(work.into_actor(self).map(move |_, act, _| {
                act.in_flight.remove(&request_id);
            }));
        }
    }
}

impl Actor for WebhookDispatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(TICK, |_, ctx| ctx.notify(Tick));
    }
}

impl Handler<Tick> for WebhookDispatcher {
    type Result = ();

    fn handle(&mut self, _: Tick, ctx: &mut Context<Self>) {
        self.tick(ctx);
    }
}
