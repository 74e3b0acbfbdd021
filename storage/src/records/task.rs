use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::FailureRecord;
use crate::StepKey;

/// How long a claim holds a task for its operator, unless claimed again.
pub const CLAIM_MINUTES: i64 = 30;

/// A task for a person: the request's calls could not finish it, so it waits, `PROCESSING`, for an
/// operator to place the call (operator contract section 10). Kept inside the request's run, so the task
/// and the request change in one write and a change to one is never seen without the other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Opaque id (UUID v7, so the index orders tasks by their opening).
    pub id: String,
    /// `open`, `done`, `abandoned` or `expired`; a held claim reads `claimed` (see [`TaskRecord::state_at`]).
    pub state: TaskState,
    /// The failure code the request would have ended with, or `PARTIAL`.
    pub reason: String,
    /// The step whose fields the person's call answers.
    pub step_key: StepKey,
    /// The fields still open when the task opened.
    pub missing_fields: Vec<String>,
    /// When it opened.
    pub opened_at: DateTime<Utc>,
    /// Past this instant an open task ends the request as it would have ended.
    pub expires_at: DateTime<Utc>,
    /// The operator holding the claim, while `claim_expires_at` is ahead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    /// When the claim lapses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_expires_at: Option<DateTime<Utc>>,
    /// When it was completed, given up or expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_at: Option<DateTime<Utc>>,
    /// The operator who completed it or gave it up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_by: Option<String>,
    /// The `seq` of the person's call among the run's calls, once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_seq: Option<u32>,
    /// The failure the operator chose when giving up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub give_up: Option<FailureRecord>,
}

/// The stored state of a task. `Claimed` is never stored: it is an open task with a live claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Waiting for a person (claimed while a claim is live).
    Open,
    /// Held by an operator's live claim.
    Claimed,
    /// A person completed it.
    Done,
    /// A person gave up.
    Abandoned,
    /// Nobody finished it in time.
    Expired,
}

impl TaskState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Open => "open",
            TaskState::Claimed => "claimed",
            TaskState::Done => "done",
            TaskState::Abandoned => "abandoned",
            TaskState::Expired => "expired",
        }
    }

    /// The state of that wire name.
    pub fn parse(name: &str) -> Option<TaskState> {
        [
            TaskState::Open,
            TaskState::Claimed,
            TaskState::Done,
            TaskState::Abandoned,
            TaskState::Expired,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// Done, abandoned or expired: nothing more happens to it.
    pub fn is_closed(self) -> bool {
        matches!(
            self,
            TaskState::Done | TaskState::Abandoned | TaskState::Expired
        )
    }
}

impl TaskRecord {
    /// The state as seen at `now`: an open task whose claim is live reads `claimed`.
    pub fn state_at(&self, now: DateTime<Utc>) -> TaskState {
        match self.state {
            TaskState::Open | TaskState::Claimed if self.claim_holder(now).is_some() => {
                TaskState::Claimed
            }
            TaskState::Claimed => TaskState::Open,
            state => state,
        }
    }

    /// The operator whose claim is live at `now`.
    pub fn claim_holder(&self, now: DateTime<Utc>) -> Option<&str> {
        match (&self.claimed_by, self.claim_expires_at) {
            (Some(name), Some(until)) if until > now && !self.state.is_closed() => {
                Some(name.as_str())
            }
            _ => None,
        }
    }

    /// A claim for `operator` from `now`, renewed when it already holds one.
    pub fn claim(&mut self, operator: &str, now: DateTime<Utc>) {
        self.state = TaskState::Open;
        self.claimed_by = Some(operator.to_owned());
        self.claim_expires_at = Some(now + Duration::minutes(CLAIM_MINUTES));
    }

    /// The claim is dropped: the task is open to anyone.
    pub fn release(&mut self) {
        self.state = TaskState::Open;
        self.claimed_by = None;
        self.claim_expires_at = None;
    }

    /// Closes the task in `state`, by `operator` (none: the system).
    pub fn close(&mut self, state: TaskState, operator: Option<&str>, now: DateTime<Utc>) {
        self.state = state;
        self.closed_at = Some(now);
        self.closed_by = operator.map(str::to_owned);
        self.claim_expires_at = None;
    }
}
