//! Dialers: what places a call and reports how it went. One trait; the sandbox generator (sandbox keys),
//! the seeded payer simulator, and the platform driver for calls placed by a voice platform (Retell, Vapi)
//! or a voice agent of the operator's own (production keys, chosen by `[dialer] kind`). Redials, follow-ups, state and webhooks stay with the
//! orchestration actors; a dialer only runs one call.

pub mod http;
pub mod platform;
pub mod retell;
pub mod sandbox;
pub mod simulated;
pub mod vapi;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
pub use switchboard_storage::CallReport;
use switchboard_storage::{CallId, RequestId, SchemaVersionRecord, StepKey};

/// Everything a dialer needs to run one call.
#[derive(Clone, Debug)]
pub struct CallJob {
    /// Opaque call id.
    pub call_id: CallId,
    /// The request it serves.
    pub request_id: RequestId,
    /// Placement order within the request, from 1.
    pub seq: u32,
    /// Attempt within its step, from 1.
    pub attempt: u32,
    /// Step key.
    pub step_key: StepKey,
    /// 0 for the primary step, 1 for a follow-up leg.
    pub step_index: usize,
    /// The schema version the step runs: its fields are the questions.
    pub schema: Arc<SchemaVersionRecord>,
    /// The request's validated inputs (context for the call).
    pub inputs: BTreeMap<String, String>,
    /// Ten-digit number to dial.
    pub number: String,
    /// When the call was placed (its record's `placed_at`, from the clock).
    pub placed_at: DateTime<Utc>,
    /// The payer's zone (the directory's, else the account's): the simulator reads the hour of the week
    /// of `placed_at` in it.
    pub payer_zone: chrono_tz::Tz,
    /// What was learned of the payer's line, for the voice agent (the prompt variable `payer_notes`);
    /// empty when nothing was, or for a sandbox call.
    pub payer_notes: String,
    /// Restarts the request has been through; fault injection uses it to fail only the first time.
    pub restarts: u32,
    /// `simulation.seed`.
    pub seed: u64,
    /// `simulation.time_scale`.
    pub time_scale: f64,
    /// Automated agent only.
    pub ai_only: bool,
    /// US-based agents only.
    pub onshore_only: bool,
    /// Answers the request already holds from the electronic channel (primary step only): the call asks
    /// only for the rest, and what it reports agrees with them.
    pub known: BTreeMap<String, String>,
}

/// Places calls. Implementations must be deterministic where they simulate (same seed and inputs, same
/// outcome) and must never block the thread: the returned future waits.
pub trait Dialer: Send + Sync {
    /// Runs one call to its end. A future that never resolves is a call that never ends (the `stuck`
    /// scenario); the request then stays `PROCESSING`.
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport>;
}
