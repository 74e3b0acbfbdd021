//! Process metrics for Prometheus: one [`Metrics`] per server, shared as an `Arc` by the HTTP layer, the
//! scheduler, the orchestration actors and the webhook dispatcher, each recording what only it sees.
//!
//! This module owns the metric names, labels and help texts and renders the text exposition format
//! (0.0.4); serving it over HTTP is left to the API crate. Each `Metrics` has its own registry rather than
//! the `prometheus` crate's process-global one, so servers started side by side in one test process count
//! apart. Counters count since start-up, as Prometheus counters do.

mod cost;
mod disposition;
mod http_series;
mod tasks;
mod webhook_attempt;

pub(crate) use disposition::disposition_label;

use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use switchboard_storage::{Disposition, Environment, RequestState, Store};

pub use http_series::HttpSeries;
pub use tasks::TASK_STATES;
pub use webhook_attempt::WebhookAttempt;

/// Content type of [`Metrics::render`]'s output.
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;

/// Route label of HTTP requests that matched no route, so probes of random paths add no series.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Label of calls whose dialer panicked, next to the dispositions.
const PANICKED: &str = "panicked";

const DISPOSITIONS: [Disposition; 5] = [
    Disposition::Completed,
    Disposition::Voicemail,
    Disposition::HoldTimeout,
    Disposition::Referred,
    Disposition::Failed,
];

const TERMINAL_STATES: [RequestState; 3] = [
    RequestState::Success,
    RequestState::Partial,
    RequestState::Failure,
];

/// The counts of failed sign-ins that refuse calls, as labelled in `switchboard_throttled_total`.
pub const THROTTLES: [&str; 3] = ["auth_key", "auth_address", "admin_address"];

/// The supervised singleton actors, as labelled in `switchboard_singleton_restarts_total`.
pub const SINGLETONS: [&str; 3] = ["capacity_scheduler", "webhook_dispatcher", "orchestrator"];

/// The metrics of one server. Recording is lock-free; rendering reads every series once.
pub struct Metrics {
    registry: Registry,
    http_requests: IntCounterVec,
    http_duration: HistogramVec,
    requests_created: IntCounterVec,
    requests_finished: IntCounterVec,
    requests_running: IntGauge,
    calls: IntCounterVec,
    webhook_attempts: IntCounterVec,
    webhook_redeliveries: IntCounter,
    actor_restarts: IntCounter,
    panics: IntCounter,
    request_actors_started: IntCounter,
    singleton_restarts: IntCounterVec,
    call_slots: IntGaugeVec,
    calls_waiting: IntGaugeVec,
    throttled: IntCounterVec,
    tasks: tasks::TaskMetrics,
    cost: cost::CostMetrics,
}

/// Orchestration counters since start-up, read from the metrics so the admin API and `/metrics` never
/// disagree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Request actors started.
    pub request_actors_started: u64,
    /// Requests that reached a terminal state.
    pub requests_finished: u64,
    /// Calls that ended (any disposition, or a panic).
    pub calls_ended: u64,
    /// Panics caught in dialer code.
    pub panics: u64,
    /// Request-actor restarts after a fault.
    pub restarts: u64,
}

impl Metrics {
    /// Metrics registered in a fresh registry, with the store's flush-latency histogram among them. Every
    /// known label value starts at zero, so a series exists before its first event.
    pub fn new(store: &Store) -> Metrics {
        let registry = Registry::new();
        let http_requests = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_http_requests_total",
                    "HTTP requests answered, by method, route pattern (not the raw path) and status",
                ),
                &["method", "route", "status"],
            ),
        );
        let http_duration = register(
            &registry,
            HistogramVec::new(
                HistogramOpts::new(
                    "switchboard_http_request_duration_seconds",
                    "Time from receiving an HTTP request to its response head, by method and route pattern",
                ),
                &["method", "route"],
            ),
        );
        let requests_created = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_requests_created_total",
                    "Requests booked since start-up (replays of an idempotency key excluded), by environment; \
                     with switchboard_requests_finished_total it gives the flow through PROCESSING",
                ),
                &["environment"],
            ),
        );
        let requests_finished = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_requests_finished_total",
                    "Requests that reached a terminal state since start-up, by state (SUCCESS, PARTIAL, FAILURE); \
                     a count, not a gauge of stored requests, so a scrape never scans the store",
                ),
                &["state"],
            ),
        );
        let requests_running = register(
            &registry,
            IntGauge::new(
                "switchboard_requests_running",
                "Requests in PROCESSING whose day has come and whose actors are running now (read at scrape)",
            ),
        );
        let calls = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_calls_total",
                    "Calls placed since start-up, by how they ended: the dialer's disposition, or panicked",
                ),
                &["disposition"],
            ),
        );
        let webhook_attempts = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_webhook_attempts_total",
                    "Webhook HTTP attempts, by outcome: delivered (2xx), rejected (400, 404), server_error (5xx), \
                     other_status, transport_error (timeout, connection), target_refused (never sent)",
                ),
                &["outcome"],
            ),
        );
        let webhook_redeliveries = register(
            &registry,
            IntCounter::new(
                "switchboard_webhook_redeliveries_total",
                "Webhook redeliveries an operator asked for that have run (their attempts also count in \
                 switchboard_webhook_attempts_total)",
            ),
        );
        let actor_restarts = register(
            &registry,
            IntCounter::new(
                "switchboard_actor_restarts_total",
                "Request-actor restarts after a fault (a crash, a vanished child, a failed write)",
            ),
        );
        let panics = register(
            &registry,
            IntCounter::new(
                "switchboard_panics_total",
                "Panics caught in orchestration (dialer code) and turned into reported crashes",
            ),
        );
        let request_actors_started = register(
            &registry,
            IntCounter::new(
                "switchboard_request_actors_started_total",
                "Request actors started: one per request run, plus one per restart or resumption",
            ),
        );
        let singleton_restarts = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_singleton_restarts_total",
                    "Restarts of a supervised singleton actor after a panic inside it, by actor",
                ),
                &["actor"],
            ),
        );
        for actor in SINGLETONS {
            singleton_restarts.with_label_values(&[actor]);
        }
        let call_slots = register(
            &registry,
            IntGaugeVec::new(
                Opts::new(
                    "switchboard_call_slots",
                    "Concurrent real calls ([dialer] max_concurrent_calls): state=limit is the cap, \
                     state=in_use the slots held by calls now",
                ),
                &["state"],
            ),
        );
        let calls_waiting = register(
            &registry,
            IntGaugeVec::new(
                Opts::new(
                    "switchboard_calls_waiting",
                    "Call attempts waiting to be placed, by reason: calling_hours (outside the payer's \
                     hours) or slot (every call slot taken)",
                ),
                &["reason"],
            ),
        );
        let throttled = register(
            &registry,
            IntCounterVec::new(
                Opts::new(
                    "switchboard_throttled_total",
                    "Calls refused with 429 after too many failed sign-ins, by the count that refused them: \
                     auth_key and auth_address (GET /v1/auth), admin_address (admin API and console)",
                ),
                &["kind"],
            ),
        );
        for kind in THROTTLES {
            throttled.with_label_values(&[kind]);
        }
        for state in ["limit", "in_use"] {
            call_slots.with_label_values(&[state]);
        }
        for reason in ["calling_hours", "slot"] {
            calls_waiting.with_label_values(&[reason]);
        }
        register(&registry, Ok(store.flush_latency()));
        register(&registry, Ok(store.group_sizes()));

        for environment in [Environment::Production, Environment::Sandbox] {
            requests_created.with_label_values(&[environment.as_str()]);
        }
        for state in TERMINAL_STATES {
            requests_finished.with_label_values(&[state.as_str()]);
        }
        for disposition in DISPOSITIONS {
            calls.with_label_values(&[disposition_label(disposition)]);
        }
        calls.with_label_values(&[PANICKED]);
        for outcome in WebhookAttempt::ALL {
            webhook_attempts.with_label_values(&[outcome.as_str()]);
        }
        let tasks = tasks::TaskMetrics::register(&registry);
        let cost = cost::CostMetrics::register(&registry);
        Metrics {
            tasks,
            cost,
            registry,
            http_requests,
            http_duration,
            requests_created,
            requests_finished,
            requests_running,
            calls,
            webhook_attempts,
            webhook_redeliveries,
            actor_restarts,
            panics,
            request_actors_started,
            singleton_restarts,
            call_slots,
            calls_waiting,
            throttled,
        }
    }

    /// A call was refused by the throttle of `kind` (one of [`THROTTLES`]).
    pub fn throttled(&self, kind: &str) {
        self.throttled.with_label_values(&[kind]).inc();
    }

    /// The call-slot cap and the slots held now.
    pub fn set_call_slots(&self, limit: usize, in_use: usize) {
        self.call_slots
            .with_label_values(&["limit"])
            .set(limit as i64);
        self.call_slots
            .with_label_values(&["in_use"])
            .set(in_use as i64);
    }

    /// Attempts waiting for `reason` (`calling_hours`, `slot`) now.
    pub fn set_calls_waiting(&self, reason: &str, count: usize) {
        self.calls_waiting
            .with_label_values(&[reason])
            .set(count as i64);
    }

    /// An HTTP request answered with `status` after `elapsed`. `route` is the matched pattern, or
    /// [`UNMATCHED_ROUTE`].
    pub fn http_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        self.http_requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
        self.http_duration
            .with_label_values(&[method, route])
            .observe(elapsed.as_secs_f64());
    }

    /// A request was booked.
    pub fn request_created(&self, environment: Environment) {
        self.requests_created
            .with_label_values(&[environment.as_str()])
            .inc();
    }

    /// A request's terminal state is persisted.
    pub fn request_finished(&self, state: RequestState) {
        self.requests_finished
            .with_label_values(&[state.as_str()])
            .inc();
    }

    /// A request's final cost, added once its terminal record is written (a request resumed after a
    /// restart was not terminal before it, so it is never added twice).
    pub fn request_cost(&self, cost: crate::cost::RequestCost) {
        self.cost.add(cost);
    }

    /// The channel that finished `terminal` (`electronic`, `automated_call`, `person`), when it ends
    /// `SUCCESS` or `PARTIAL`.
    pub fn completion_channel(
        &self,
        terminal: &switchboard_storage::RequestRecord,
    ) -> Option<&'static str> {
        tasks::completion_channel(terminal)
    }

    /// A request answered through `channel` is persisted terminal.
    pub fn request_completed(&self, channel: &'static str) {
        self.tasks.completed(channel);
    }

    /// The tasks stored now, by state, and the age of the oldest open one.
    pub fn set_tasks(
        &self,
        counts: &[(switchboard_storage::TaskState, usize)],
        oldest_open_seconds: i64,
    ) {
        self.tasks.set_tasks(counts, oldest_open_seconds);
    }

    /// How many request actors are running, as the orchestrator last reported.
    pub fn set_requests_running(&self, running: usize) {
        self.requests_running
            .set(i64::try_from(running).unwrap_or(i64::MAX));
    }

    /// A call ended with `disposition`.
    pub fn call_ended(&self, disposition: Disposition) {
        self.calls
            .with_label_values(&[disposition_label(disposition)])
            .inc();
    }

    /// A call's dialer panicked: counted as a call and as a panic.
    pub fn call_panicked(&self) {
        self.calls.with_label_values(&[PANICKED]).inc();
        self.panics.inc();
    }

    /// A webhook attempt ended with `outcome`.
    pub fn webhook_attempt(&self, outcome: WebhookAttempt) {
        self.webhook_attempts
            .with_label_values(&[outcome.as_str()])
            .inc();
    }

    /// A redelivery an operator asked for is being sent.
    pub fn webhook_redelivery(&self) {
        self.webhook_redeliveries.inc();
    }

    /// A request actor started (a new run, a resumption or a restart).
    pub fn request_actor_started(&self) {
        self.request_actors_started.inc();
    }

    /// The orchestration counters since start-up, summed over their labels, for the admin API.
    pub fn totals(&self) -> Totals {
        let sum = |counter: &IntCounterVec, labels: &[&str]| -> u64 {
            labels
                .iter()
                .map(|l| counter.with_label_values(&[l]).get())
                .sum()
        };
        let states: Vec<&str> = TERMINAL_STATES.iter().map(|s| s.as_str()).collect();
        let mut dispositions: Vec<&str> =
            DISPOSITIONS.iter().map(|d| disposition_label(*d)).collect();
        dispositions.push(PANICKED);
        Totals {
            request_actors_started: self.request_actors_started.get(),
            requests_finished: sum(&self.requests_finished, &states),
            calls_ended: sum(&self.calls, &dispositions),
            panics: self.panics.get(),
            restarts: self.actor_restarts.get(),
        }
    }

    /// A request actor is restarted after a fault.
    pub fn actor_restarted(&self) {
        self.actor_restarts.inc();
    }

    /// A supervised singleton actor (one of [`SINGLETONS`]) is restarted after a panic.
    pub fn singleton_restarted(&self, actor: &str) {
        self.singleton_restarts.with_label_values(&[actor]).inc();
    }

    /// Every metric in the text exposition format, served as [`CONTENT_TYPE`].
    pub fn render(&self) -> Result<String, prometheus::Error> {
        let mut buffer = Vec::new();
        TextEncoder::new().encode(&self.registry.gather(), &mut buffer)?;
        // The text encoder writes only UTF-8 (names and labels are validated, values are numbers).
        Ok(String::from_utf8_lossy(&buffer).into_owned())
    }
}

/// Registers a metric whose options are fixed at compile time; a failure is a programming error.
fn register<M>(registry: &Registry, metric: prometheus::Result<M>) -> M
where
    M: prometheus::core::Collector + Clone + 'static,
{
    let metric = metric.expect("metric options are valid");
    registry
        .register(Box::new(metric.clone()))
        .expect("metric names are unique");
    metric
}

#[cfg(test)]
mod tests;
