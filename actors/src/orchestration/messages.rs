//! Messages between orchestration actors. Commands are imperative, reports past tense.

use std::sync::Arc;

use actix::dev::ToEnvelope;
use actix::{Actor, Addr, Handler, Message, Recipient};
use serde::Serialize;
use switchboard_storage::{CallId, CallOutcomeRecord, RequestId, StepKey};

use super::edges::Edges;

/// Internal: re-read the persisted state and take the next action.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Advance;

/// A purge removed the request: its actor stops where it is. A restart by its supervisor finds no record
/// and ends it.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StopForPurge;

/// A purge removed `0`: the orchestrator forgets it and stops its actor, if one runs.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Halt(pub RequestId);

/// Step actor → its parent (the request actor): the step is over; its close (and any edge it was given
/// and has not written) is for the parent's next write.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StepEnded {
    pub key: StepKey,
    /// Which step actor reports (see [`crate::orchestration::step::StepJob::incarnation`]).
    pub incarnation: u64,
    pub edges: Edges,
}

/// Step actor → its parent (the request actor): the step could not go on (a call panicked, a write
/// failed); the step has stopped.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct StepCrashed {
    pub key: StepKey,
    pub incarnation: u64,
    pub reason: String,
}

/// Call actor → its parent (the step actor): the call ended with `outcome`, not written yet (the step's
/// next write carries it).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CallEnded {
    pub call_id: CallId,
    pub outcome: Arc<CallOutcomeRecord>,
}

/// Call actor → its parent (the step actor): the dialer panicked.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct CallCrashed {
    pub call_id: CallId,
    pub reason: String,
}

/// Where a step actor reports: its request actor, or a test's stand-in.
#[derive(Clone)]
pub(crate) struct StepParent {
    pub ended: Recipient<StepEnded>,
    pub crashed: Recipient<StepCrashed>,
}

impl StepParent {
    /// The reports of a step go to `parent`.
    pub(crate) fn of<A>(parent: &Addr<A>) -> StepParent
    where
        A: Actor + Handler<StepEnded> + Handler<StepCrashed>,
        A::Context: ToEnvelope<A, StepEnded> + ToEnvelope<A, StepCrashed>,
    {
        StepParent {
            ended: parent.clone().recipient(),
            crashed: parent.clone().recipient(),
        }
    }
}

/// Where a call actor reports: its step actor, or a test's stand-in.
#[derive(Clone)]
pub(crate) struct CallParent {
    pub ended: Recipient<CallEnded>,
    pub crashed: Recipient<CallCrashed>,
}

impl CallParent {
    /// The reports of a call go to `parent`.
    pub(crate) fn of<A>(parent: &Addr<A>) -> CallParent
    where
        A: Actor + Handler<CallEnded> + Handler<CallCrashed>,
        A::Context: ToEnvelope<A, CallEnded> + ToEnvelope<A, CallCrashed>,
    {
        CallParent {
            ended: parent.clone().recipient(),
            crashed: parent.clone().recipient(),
        }
    }
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
