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
use switchboard_storage::{CallOutcomeRecord, Disposition, FailureRecord, SchemaVersionRecord};

/// Everything a dialer needs to run one call.
#[derive(Clone, Debug)]
pub struct CallJob {
    /// Opaque call id.
    pub call_id: String,
    /// The request it serves.
    pub request_id: String,
    /// Placement order within the request, from 1.
    pub seq: u32,
    /// Attempt within its step, from 1.
    pub attempt: u32,
    /// Step key.
    pub step_key: String,
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

/// How a call went, as the dialer reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallReport {
    /// The disposition.
    pub disposition: Disposition,
    /// Length of the call in (simulated) seconds.
    pub duration_seconds: u32,
    /// Captured values by field name (schema field names of the job's schema).
    pub captured: BTreeMap<String, String>,
    /// Conversation with the representative.
    pub transcript: Option<String>,
    /// Agent's post-call notes.
    pub transcript_post_call: Option<String>,
    /// Summary of the call.
    pub summary: Option<String>,
    /// Audit summary.
    pub audit_summary: Option<String>,
    /// Whether a recording exists.
    pub recording: bool,
    /// E.164 caller id used.
    pub from_number: Option<String>,
    /// For `Failed`: category and code (service-interface 7.3).
    pub failure: Option<FailureRecord>,
    /// For `Referred`: the ten-digit number the representative gave.
    pub referral_number: Option<String>,
    /// The call surfaced a matter for the schema's follow-up leg (a denied claim to appeal, say): on
    /// accounts with follow-up calls the leg runs as a second step.
    pub follow_up_requested: bool,
}

impl CallReport {
    /// The stored outcome, stamped with the time the call ended.
    pub fn into_outcome(self, ended_at: DateTime<Utc>) -> CallOutcomeRecord {
        CallOutcomeRecord {
            ended_at,
            disposition: self.disposition,
            duration_seconds: self.duration_seconds,
            captured: self.captured,
            transcript: self.transcript,
            transcript_post_call: self.transcript_post_call,
            summary: self.summary,
            audit_summary: self.audit_summary,
            recording: self.recording,
            from_number: self.from_number,
            failure: self.failure,
            referral_number: self.referral_number,
            follow_up_requested: self.follow_up_requested,
        }
    }
}

/// Places calls. Implementations must be deterministic where they simulate (same seed and inputs, same
/// outcome) and must never block the thread: the returned future waits.
pub trait Dialer: Send + Sync {
    /// Runs one call to its end. A future that never resolves is a call that never ends (the `stuck`
    /// scenario); the request then stays `PROCESSING`.
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport>;
}
