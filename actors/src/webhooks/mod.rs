//! Webhook delivery: a durable outbox drained by the [`WebhookDispatcher`] actor.
//!
//! A request's webhook is enqueued in the transaction that makes the request terminal. The dispatcher
//! runs each due delivery round in its own task: one attempt, then up to three inline retries (0.5 s, 1 s,
//! 2 s by default, in wall time) on 5xx, timeouts and connection failures; a 2xx acknowledges; 400 and 404
//! stop delivery for good; any other 4xx ends the round. A failed round schedules the next one at the
//! configured delay from the terminal state (on the injected clock, so a manual clock can fast-forward
//! rounds); after the last, the delivery is exhausted and the client recovers by polling. Every attempt is
//! logged. Deliveries to one destination share a small concurrency limit, so a slow or dead endpoint holds
//! up only its own webhooks.

mod dispatcher;
pub mod payload;
mod round;
pub mod target;

use std::time::Duration;

pub use dispatcher::{Redeliver, Redelivery, WebhookDispatcher};
pub use payload::{payload, signature};
pub use target::{check_target, TargetError};

/// `[webhooks]` as the dispatcher needs it.
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    /// Loopback and private-range targets allowed.
    pub allow_private_targets: bool,
    /// Per-attempt timeout.
    pub attempt_timeout: Duration,
    /// Waits before each inline retry.
    pub inline_backoff: Vec<Duration>,
    /// Delayed rounds, counted from the terminal state.
    pub round_delays: Vec<Duration>,
    /// Attempts in flight at once to one destination (host and port).
    pub per_destination_concurrency: usize,
}
