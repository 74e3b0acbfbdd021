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
pub(crate) mod actor_tests;
mod call;
mod edges;
mod error;
mod learning;
pub mod limits;
mod messages;
mod notes;
mod orchestrator;
pub mod outcome;
mod request;
mod step;
pub mod windows;

use std::collections::BTreeMap;
use std::sync::Arc;

use switchboard_storage::{Environment, Store};

pub use error::OrchestrationError;
pub use messages::{GetStats, Halt, StatsSnapshot};
pub use orchestrator::{DueWork, Orchestrator, ResumeActive, TaskChanged};

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
    /// Dialers of production requests: the server's default and those an account may name.
    pub production: ProductionDialers,
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
    /// Concurrency and calling-hours limits of production calls, when a production dialer places real
    /// calls (`http`, `retell`, `vapi`); `None` with the simulator alone. Only calls on a dialer that
    /// places real calls wait on them; sandbox calls are never limited.
    pub limits: Option<Arc<limits::CallLimits>>,
    /// The configured rates (`[dialer] cost_per_minute`, `[electronic] cost_per_transaction`): each
    /// call is priced when it ends, each electronic attempt when it answers.
    pub prices: crate::cost::Prices,
    /// What was learned of each payer's line, for accounts with `learned_call_windows`.
    pub learned: windows::LearnedWeeks,
}

/// One production dialer and whether its calls are real (held to calling hours and call slots).
#[derive(Clone)]
pub struct ProductionDialer {
    /// The dialer.
    pub dialer: Arc<dyn Dialer>,
    /// It places real calls (`http`, `retell`, `vapi`); the simulator does not.
    pub real_calls: bool,
}

/// The production dialers by kind (`simulated`, `http`, `retell`, `vapi`): `[dialer] kind` for accounts
/// that name none, and the others an account may name (`[[accounts]] dialer`).
#[derive(Clone)]
pub struct ProductionDialers {
    default_kind: String,
    by_kind: BTreeMap<String, ProductionDialer>,
}

impl ProductionDialers {
    /// Only `dialer`, of `kind`, for every account.
    pub fn single(kind: &str, dialer: ProductionDialer) -> ProductionDialers {
        ProductionDialers {
            default_kind: kind.to_owned(),
            by_kind: BTreeMap::from([(kind.to_owned(), dialer)]),
        }
    }

    /// Adds the dialer of `kind` an account may name.
    pub fn with(mut self, kind: &str, dialer: ProductionDialer) -> ProductionDialers {
        self.by_kind.insert(kind.to_owned(), dialer);
        self
    }

    /// The dialer of one call: the platform that already holds it (`platform`, so a restart re-attaches
    /// where the call was placed whatever the account says now), else the account's own (`account`), else
    /// the default. A kind this server no longer has falls back to the default.
    pub fn route(&self, platform: Option<&str>, account: Option<&str>) -> ProductionDialer {
        let default = || self.by_kind[&self.default_kind].clone();
        if let Some(platform) = platform {
            return match self.by_kind.get(platform) {
                Some(dialer) => dialer.clone(),
                None => {
                    tracing::warn!(
                        platform,
                        "the platform holding this call is no longer configured; the default dialer takes it"
                    );
                    default()
                }
            };
        }
        account
            .and_then(|kind| self.by_kind.get(kind))
            .cloned()
            .unwrap_or_else(default)
    }
}

impl Orchestration {
    /// The electronic channel for a request of `environment`.
    pub fn electronic(&self, environment: Environment) -> Arc<dyn ElectronicChannel> {
        match environment {
            Environment::Sandbox => Arc::clone(&self.sandbox_electronic),
            Environment::Production => Arc::clone(&self.production_electronic),
        }
    }
}

pub(crate) type Shared = Arc<Orchestration>;

#[cfg(test)]
mod routing_tests {
    use super::*;
    use crate::dialer::sandbox::SandboxDialer;
    use crate::dialer::simulated::SimulatedPayerDialer;

    #[test]
    fn a_call_goes_to_the_platform_holding_it_then_the_accounts_dialer_then_the_default() {
        let simulated: Arc<dyn Dialer> = Arc::new(SimulatedPayerDialer::new());
        let retell: Arc<dyn Dialer> = Arc::new(SandboxDialer::new());
        let dialers = ProductionDialers::single(
            "simulated",
            ProductionDialer {
                dialer: Arc::clone(&simulated),
                real_calls: false,
            },
        )
        .with(
            "retell",
            ProductionDialer {
                dialer: Arc::clone(&retell),
                real_calls: true,
            },
        );
        let goes_to = |platform, account| {
            let route = dialers.route(platform, account);
            match (Arc::ptr_eq(&route.dialer, &retell), route.real_calls) {
                (true, true) => "retell",
                (false, false) => "simulated",
                _ => panic!("a dialer and its kind disagree"),
            }
        };
        assert_eq!(goes_to(None, None), "simulated");
        assert_eq!(goes_to(None, Some("retell")), "retell");
        // A call Retell already holds re-attaches there, whatever the account says now.
        assert_eq!(goes_to(Some("retell"), None), "retell");
        assert_eq!(goes_to(Some("retell"), Some("simulated")), "retell");
        // A kind the server no longer has falls back to the default.
        assert_eq!(goes_to(None, Some("vapi")), "simulated");
        assert_eq!(goes_to(Some("vapi"), Some("retell")), "simulated");
    }
}
