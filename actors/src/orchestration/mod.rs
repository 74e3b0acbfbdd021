//! Orchestration: running a request, once its day has come, to a terminal state.
//!
//! The [`Orchestrator`] starts one supervised [`request::RequestActor`] per running request (from the due
//! index when a booked day arrives, from the active index at start-up). A request actor opens steps (the
//! primary effort, then a follow-up leg) and runs each in a [`step::StepActor`]; a step places calls, each
//! run by a [`call::CallActor`] through a [`Dialer`]. Every transition is written to the store and flushed
//! before the next action, so a crash resumes from the last persisted transition: no capture is lost, no
//! finished call is placed again, no second follow-up is opened. Transitions that change only the record
//! (starting the run, the electronic answer, opening or closing a step) ride along with the next write as
//! [`edges::Edges`]. What a request does next is decided by the pure `request::decide` from its record;
//! the actors are the glue that reads, writes and starts.
//!
//! Faults: a panic in a dialer is caught and reported as a crash; a child that vanishes without reporting
//! (a panic in its handler drops it) reports its own crash from `Drop`. Either way the request actor records the fault and stops, its
//! supervisor restarts it, and it reloads from storage, up to [`RESTART_LIMIT`] restarts within
//! [`RESTART_WINDOW_SECONDS`], after which the request ends in `FAILURE` (`SYSTEM_ERROR`/`OTHER`). Other
//! requests never notice.

#[cfg(test)]
mod actor_tests;
mod call;
mod edges;
mod error;
pub mod limits;
mod messages;
mod orchestrator;
pub mod outcome;
mod request;
mod step;

use std::sync::Arc;

use switchboard_storage::{Environment, Store};

pub use error::OrchestrationError;
pub use messages::{GetStats, Halt, StatsSnapshot};
pub use orchestrator::{DueWork, Orchestrator, ResumeActive};

use crate::dialer::Dialer;
use crate::electronic::ElectronicChannel;
use crate::{Clock, Metrics};

/// Restarts of one request's actors tolerated within [`RESTART_WINDOW_SECONDS`].
pub const RESTART_LIMIT: usize = 3;
/// Window of the restart intensity, in seconds of the clock.
pub const RESTART_WINDOW_SECONDS: i64 = 60;

/// What every orchestration actor shares.
pub struct Orchestration {
    /// The store.
    pub store: Store,
    /// The clock.
    pub clock: Clock,
    /// Dialer of sandbox requests.
    pub sandbox: Arc<dyn Dialer>,
    /// Dialer of production requests.
    pub production: Arc<dyn Dialer>,
    /// Electronic channel of sandbox requests (never a real clearinghouse).
    pub sandbox_electronic: Arc<dyn ElectronicChannel>,
    /// Electronic channel of production requests (`[electronic] kind`).
    pub production_electronic: Arc<dyn ElectronicChannel>,
    /// `simulation.seed`.
    pub seed: u64,
    /// `simulation.time_scale`.
    pub time_scale: f64,
    /// When set, requests whose day has come are not started (requests already running carry on).
    pub dispatch_paused: bool,
    /// Prometheus metrics: call dispositions, terminal states, restarts, panics; the admin API's counters
    /// are read from them.
    pub metrics: Arc<Metrics>,
    /// Concurrency and calling-hours limits of production calls, when the production dialer places real
    /// calls (`http`, `retell`, `vapi`); `None` for the simulator. Sandbox calls are never limited.
    pub limits: Option<Arc<limits::CallLimits>>,
}

impl Orchestration {
    /// The dialer for a request of `environment`.
    pub fn dialer(&self, environment: Environment) -> Arc<dyn Dialer> {
        match environment {
            Environment::Sandbox => Arc::clone(&self.sandbox),
            Environment::Production => Arc::clone(&self.production),
        }
    }

    /// The electronic channel for a request of `environment`.
    pub fn electronic(&self, environment: Environment) -> Arc<dyn ElectronicChannel> {
        match environment {
            Environment::Sandbox => Arc::clone(&self.sandbox_electronic),
            Environment::Production => Arc::clone(&self.production_electronic),
        }
    }
}

pub(crate) type Shared = Arc<Orchestration>;
