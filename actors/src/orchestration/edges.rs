//! Edges decided but not yet written, carried to the next write that must happen anyway.
//!
//! Starting a run, recording the electronic answer, opening a step, ending a call and closing a step
//! change only the record: nothing outside the store acts on them until the next call is placed or the
//! request finishes. So each such edge rides along with that next write (the step's next call, the
//! terminal record) instead of paying for a grouped write and a flush of its own. "Persisted before acted
//! on" still holds: the write that carries the edges lands before the call it enables is placed, and a
//! restart before it finds the edges unwritten and decides them again from the same record.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use switchboard_storage::{
    CallId, CallOutcomeRecord, CallRecord, ElectronicRecord, FailureRecord, RequestRecord, StepKey,
    StepRecord, StepState,
};

use super::outcome::close_step;
use super::request::{open_step, record_electronic, start_run};

/// One record-only transition; applying it twice changes nothing more.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Edge {
    StartRun {
        schema_version: u32,
        at: DateTime<Utc>,
    },
    Electronic(ElectronicRecord),
    OpenStep {
        step: StepRecord,
        index: usize,
    },
    /// A call's outcome. Lost in a crash, it is taken again: the call runs again under the same record,
    /// and a platform's call is re-attached, not placed twice.
    EndCall {
        call_id: CallId,
        outcome: Arc<CallOutcomeRecord>,
    },
    /// The step's verdict; its counts are taken from the calls as stored when the edge is written.
    CloseStep {
        key: StepKey,
        asks: Vec<String>,
        state: StepState,
        error: Option<FailureRecord>,
    },
}

impl Edge {
    fn apply(&self, record: &mut RequestRecord) {
        match self {
            Edge::StartRun { schema_version, at } => start_run(record, *schema_version, *at),
            Edge::Electronic(electronic) => record_electronic(record, electronic),
            Edge::OpenStep { step, index } => open_step(record, step, *index),
            Edge::EndCall { call_id, outcome } => end_call(record, call_id, outcome),
            Edge::CloseStep {
                key,
                asks,
                state,
                error,
            } => close(record, key, asks, *state, error),
        }
    }
}

/// Edges in the order they were decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Edges(Vec<Edge>);

impl Edges {
    pub(crate) fn of(edge: Edge) -> Edges {
        Edges(vec![edge])
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds `edge` for whoever applies these edges next.
    pub(crate) fn push(&mut self, edge: Edge) {
        self.0.push(edge);
    }

    /// Adds `edge` and applies it to `record`, the decider's copy of what the store will hold.
    pub(crate) fn take(&mut self, edge: Edge, record: &mut RequestRecord) {
        edge.apply(record);
        self.0.push(edge);
    }

    /// Applies every edge, in order: inside the write that carries them, or to a record just read.
    pub(crate) fn apply(&self, record: &mut RequestRecord) {
        for edge in &self.0 {
            edge.apply(record);
        }
    }
}

/// Records the outcome of call `call_id`; the first outcome stands.
fn end_call(record: &mut RequestRecord, call_id: &CallId, outcome: &Arc<CallOutcomeRecord>) {
    let calls = record.run.as_mut().map(|run| run.calls.iter_mut());
    if let Some(call) = calls.into_iter().flatten().find(|c| &c.id == call_id) {
        call.outcome.get_or_insert_with(|| Arc::clone(outcome));
    }
}

/// Closes step `key` of the run, counting what its calls captured.
fn close(
    record: &mut RequestRecord,
    key: &StepKey,
    asks: &[String],
    state: StepState,
    error: &Option<FailureRecord>,
) {
    let Some(run) = record.run.as_mut() else {
        return;
    };
    let calls: Vec<&CallRecord> = run.calls.iter().filter(|c| &c.step_key == key).collect();
    if let Some(step) = run.steps.iter_mut().find(|s| &s.key == key) {
        close_step(step, &calls, asks, state, error.clone());
    }
}
