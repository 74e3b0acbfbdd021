//! [`OrchestrationError`]: why the orchestration actors could not take their next step.
//!
//! Each variant is a fault the request, step or orchestrator actor reports and recovers from through its
//! supervisor; the store's own failures pass through unchanged as [`StorageError`], so their text (what the
//! logs and the recorded crash reasons show) stays the store's.

use switchboard_storage::StorageError;

/// A failure of the orchestration actors.
#[derive(Debug, thiserror::Error)]
pub enum OrchestrationError {
    /// The store could not read or write.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The request record is gone from the store while an actor still works for it.
    #[error("request vanished")]
    RequestVanished,
    /// A step actor runs for a request that has no run recorded.
    #[error("request has no run")]
    RunMissing,
    /// The step an actor runs is no longer part of the request's run.
    #[error("step vanished")]
    StepVanished,
    /// A schema version the run refers to is missing from the store.
    #[error("schema {id} v{version} is missing")]
    SchemaMissing {
        /// The schema's id.
        id: String,
        /// The version the run needs.
        version: u32,
    },
    /// The orchestrator was restarted by its guard before it finished resuming.
    #[error("the orchestrator restarted while resuming")]
    RestartedWhileResuming,
}
