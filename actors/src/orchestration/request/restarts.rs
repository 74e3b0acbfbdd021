//! The restart intensity of a request: which faults restart its actor, and when the request ends instead.
//! Restarts are stamped on the run, so they survive the restarts they count.

use chrono::{DateTime, Duration, Utc};
use switchboard_storage::{RequestRecord, RunRecord};

use crate::orchestration::{RESTART_LIMIT, RESTART_WINDOW_SECONDS};

/// What a fault leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AfterFault {
    /// Record the restart and stop; the supervisor restarts the actor, which resumes from the record.
    Restart,
    /// The restart intensity is spent: the request ends in `FAILURE`.
    GiveUp,
}

/// Whether a fault restarts the request's actor or ends the request: the restart it would record must stay
/// within [`RESTART_LIMIT`] in [`RESTART_WINDOW_SECONDS`].
pub(crate) fn after_fault(record: &RequestRecord, now: DateTime<Utc>) -> AfterFault {
    let recent = record
        .run
        .as_ref()
        .map_or(0, |run| recent_restarts(run, now));
    match recent >= RESTART_LIMIT {
        true => AfterFault::GiveUp,
        false => AfterFault::Restart,
    }
}

pub(super) fn recent_restarts(run: &RunRecord, now: DateTime<Utc>) -> usize {
    let window_start = now - Duration::seconds(RESTART_WINDOW_SECONDS);
    run.restarts.iter().filter(|t| **t >= window_start).count()
}

/// The write of a fault that restarts the actor: counted, and stamped among the recent restarts.
pub(crate) fn record_restart(record: &mut RequestRecord, now: DateTime<Utc>) {
    let window_start = now - Duration::seconds(RESTART_WINDOW_SECONDS);
    if let Some(run) = record.run.as_mut() {
        run.faults += 1;
        run.restarts.retain(|t| *t >= window_start);
        run.restarts.push(now);
    }
}
