//! Messages between orchestration actors. Commands are imperative, reports past tense.

use actix::Message;
use serde::Serialize;
use switchboard_storage::{CallId, RequestId, StepKey};

/// Internal: re-read the persisted state and take the next action.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Advance;

/// Step actor → request actor: the step's final state is persisted.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StepEnded {
    pub key: StepKey,
}

/// Step actor → request actor: a call of the step panicked; the step has stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StepCrashed {
    pub key: StepKey,
    pub reason: String,
}

/// Call actor → step actor: the call's outcome is persisted.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CallEnded {
    pub call_id: CallId,
}

/// Call actor → step actor: the dialer panicked.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CallCrashed {
    pub call_id: CallId,
    pub reason: String,
}

/// Request actor → orchestrator: the request is terminal (or gone); forget its actor.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct RequestEnded {
    pub request_id: RequestId,
}

/// Internal tick of the orchestrator: start what has fallen due, revive actors that vanished.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct DispatchDue;

/// Query: orchestration counters.
#[derive(Message)]
#[rtype(result = "StatsSnapshot")]
pub struct GetStats;

/// Orchestration counters at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StatsSnapshot {
    /// Request actors alive now.
    pub running: usize,
    /// Request actors started since start-up.
    pub requests_started: u64,
    /// Requests that reached a terminal state since start-up.
    pub requests_finished: u64,
    /// Calls that ended since start-up (any disposition, or a panic).
    pub calls_ended: u64,
    /// Panics caught in step and call logic since start-up.
    pub panics: u64,
    /// Request-actor restarts after a fault since start-up.
    pub restarts: u64,
}
