//! `human_fallback`: a request the calls could not finish waits for a person instead of ending. Pure, like
//! [`super::decide`]: whether an ending becomes a task ([`task_instead`]) and what a request with a task
//! does next ([`after_task`]).

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use switchboard_storage::{
    AccountRecord, FailureCategory, FailureCode, Feature, RequestRecord, RequestState,
    SchemaVersionRecord, StepState, TaskRecord, TaskState,
};

use super::{Ending, Move};

/// Hours a task stays open when the account names none.
pub(crate) const DEFAULT_TASK_TIMEOUT_HOURS: u32 = 72;

/// The `SYSTEM_ERROR` codes a person may still get past; the others (and every `NOT_FOUND`) are answers.
const PERSON_MAY_FINISH: [FailureCode; 5] = [
    FailureCode::IvrFailure,
    FailureCode::PayerRefusal,
    FailureCode::UnableToReachHumanInTime,
    FailureCode::RequiresOtherChannel,
    FailureCode::Other,
];

/// The task that opens instead of `terminal`, the request's ending as computed, when its account has
/// `human_fallback`, no task was opened before (a request a person finished ends there) and the ending is
/// `PARTIAL` or a `FAILURE` a person may still turn around.
pub(crate) fn task_instead(
    terminal: &RequestRecord,
    account: Option<&AccountRecord>,
    now: DateTime<Utc>,
) -> Option<TaskRecord> {
    let account = account.filter(|a| a.has(Feature::HumanFallback))?;
    let run = terminal.run.as_ref()?;
    if run.task.is_some() {
        return None;
    }
    let reason = match terminal.state {
        RequestState::Partial => "PARTIAL".to_owned(),
        RequestState::Failure => {
            let error = run.error.as_ref()?;
            let retryable = error.category == FailureCategory::SystemError
                && PERSON_MAY_FINISH.contains(&error.code);
            if !retryable {
                return None;
            }
            error.code.as_str().to_owned()
        }
        _ => return None,
    };
    // The person's call answers the step that failed: the follow-up leg of a `PARTIAL`, else the first.
    let step = run
        .steps
        .iter()
        .find(|s| s.state == StepState::Failed)
        .or(run.steps.last())?;
    let hours = account
        .task_timeout_hours
        .unwrap_or(DEFAULT_TASK_TIMEOUT_HOURS);
    Some(TaskRecord {
        id: uuid::Uuid::now_v7().to_string(),
        state: TaskState::Open,
        reason,
        step_key: step.key.clone(),
        missing_fields: run.missing_fields.clone(),
        opened_at: now,
        expires_at: now + Duration::hours(i64::from(hours)),
        claimed_by: None,
        claim_expires_at: None,
        closed_at: None,
        closed_by: None,
        call_seq: None,
        give_up: None,
    })
}

/// The next move of a request whose run has `task`: wait for the person, expire, or end as the person
/// (or the timeout) decided.
pub(crate) fn after_task(
    task: &TaskRecord,
    primary: Arc<SchemaVersionRecord>,
    now: DateTime<Utc>,
) -> Move {
    match task.state {
        TaskState::Open | TaskState::Claimed if now >= task.expires_at => {
            Move::ExpireTask(task.id.clone())
        }
        TaskState::Open | TaskState::Claimed => Move::AwaitPerson,
        TaskState::Abandoned => Move::Finish(Ending {
            error: task.give_up.clone(),
            primary: Some(primary),
        }),
        TaskState::Done | TaskState::Expired => Move::Finish(Ending {
            error: None,
            primary: Some(primary),
        }),
    }
}
