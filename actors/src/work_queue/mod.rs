//! What a person does to a task (operator contract section 10): claim, release, complete, give up. Each is
//! a change of the request's record, handed to [`switchboard_storage::Store::change_task`], which applies
//! it inside the transaction on the record as stored: a change that finds the task in another state
//! refuses, and nothing is written. None of them ends the request: the request actor, told by
//! [`crate::orchestration::TaskChanged`], ends it through the same terminal write as a call's outcome.

mod answers;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use switchboard_storage::{
    CallId, CallOutcomeRecord, CallRecord, CallReport, Disposition, FailureRecord, NumberSource,
    RequestRecord, SchemaVersionRecord, StepState, TaskRecord, TaskState,
};

pub use answers::{check_answers, AnswerErrors};

use crate::orchestration::outcome::{close_step, required_fields};

/// Why a change of a task was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaskRefusal {
    /// The request has no task (or no longer exists).
    NoTask,
    /// Another operator holds the claim (or, to complete, the caller holds none).
    Claimed,
    /// The task is done, abandoned or expired.
    Closed,
}

/// The person's call, as they report it.
#[derive(Clone, Debug, Default)]
pub struct PersonCall {
    /// The number they dialed.
    pub phone_number: String,
    /// When they placed it.
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended.
    pub ended_at: Option<DateTime<Utc>>,
    /// Who answered at the payer.
    pub representative_name: Option<String>,
    /// The payer's reference number of the call.
    pub reference_number: Option<String>,
    /// What they noted: the call's summary.
    pub notes: Option<String>,
}

fn open_task(record: &mut RequestRecord) -> Result<&mut TaskRecord, TaskRefusal> {
    let task = record
        .run
        .as_mut()
        .and_then(|run| run.task.as_mut())
        .ok_or(TaskRefusal::NoTask)?;
    if task.state.is_closed() {
        return Err(TaskRefusal::Closed);
    }
    Ok(task)
}

/// `operator` claims the task for 30 minutes (again: renews); refused while another operator's claim is
/// live.
pub fn claim(
    record: &mut RequestRecord,
    operator: &str,
    now: DateTime<Utc>,
) -> Result<TaskRecord, TaskRefusal> {
    let task = open_task(record)?;
    match task.claim_holder(now) {
        Some(holder) if holder != operator => Err(TaskRefusal::Claimed),
        _ => {
            task.claim(operator, now);
            Ok(task.clone())
        }
    }
}

/// The claim is dropped. An operator may release only their own claim (an `admin` anyone's).
pub fn release(
    record: &mut RequestRecord,
    operator: &str,
    any_claim: bool,
    now: DateTime<Utc>,
) -> Result<TaskRecord, TaskRefusal> {
    let task = open_task(record)?;
    match task.claim_holder(now) {
        Some(holder) if holder != operator && !any_claim => Err(TaskRefusal::Claimed),
        _ => {
            task.release();
            Ok(task.clone())
        }
    }
}

/// The task is done with `values` (already checked against `schema`, the schema of the task's step), found
/// on `call` by `operator`, who must hold the claim: the call joins the run as the step's next call, and
/// the step is closed again with it.
pub fn complete(
    record: &mut RequestRecord,
    operator: &str,
    schema: &SchemaVersionRecord,
    values: BTreeMap<String, String>,
    call: &PersonCall,
    now: DateTime<Utc>,
) -> Result<TaskRecord, TaskRefusal> {
    let task = open_task(record)?;
    if task.claim_holder(now) != Some(operator) {
        return Err(TaskRefusal::Claimed);
    }
    task.close(TaskState::Done, Some(operator), now);
    let step_key = task.step_key.clone();
    let run = record.run.as_mut().expect("a task lives in a run");
    let seq = run.calls.len() as u32 + 1;
    let attempt = run.calls.iter().filter(|c| c.step_key == step_key).count() as u32 + 1;
    let started = call.started_at.unwrap_or(now);
    let ended = call.ended_at.unwrap_or(now).max(started);
    let mut report = CallReport::new(Disposition::Completed);
    report.duration_seconds = (ended - started).num_seconds().clamp(0, u32::MAX.into()) as u32;
    report.captured = values;
    report.summary = call.notes.clone();
    report.audit_summary = Some(audit_summary(operator, call));
    // A person's call is not billed by a voice platform and no rate of people's time is configured: it
    // adds nothing to the request's cost (the minutes are on the operator's own phone).
    report.cost_cents = Some(0);
    run.calls.push(CallRecord {
        id: CallId::new(),
        seq,
        step_key: step_key.clone(),
        attempt,
        to: digits(&call.phone_number),
        number_source: NumberSource::Input,
        placed_at: started,
        outcome: Some(Arc::new(CallOutcomeRecord {
            ended_at: ended,
            report,
        })),
        platform: None,
    });
    let required = required_fields(schema);
    if let Some(index) = run.steps.iter().position(|s| s.key == step_key) {
        let calls: Vec<&CallRecord> = run
            .calls
            .iter()
            .filter(|c| c.step_key == step_key)
            .collect();
        let mut step = run.steps[index].clone();
        let error = step.error.clone();
        let all = required.iter().all(|field| {
            calls
                .iter()
                .filter_map(|c| c.outcome.as_ref())
                .any(|o| o.captured.contains_key(field))
        });
        let (state, error) = if all {
            (StepState::Succeeded, None)
        } else {
            (StepState::Failed, error)
        };
        close_step(&mut step, &calls, &required, state, error);
        run.steps[index] = step;
    }
    let task = run.task.as_mut().expect("checked above");
    task.call_seq = Some(seq);
    Ok(task.clone())
}

/// The person gives up: the request ends `FAILURE` with `failure`. Open to whoever holds the claim, or
/// when nobody does.
pub fn give_up(
    record: &mut RequestRecord,
    operator: &str,
    failure: FailureRecord,
    now: DateTime<Utc>,
) -> Result<TaskRecord, TaskRefusal> {
    let task = open_task(record)?;
    if task
        .claim_holder(now)
        .is_some_and(|holder| holder != operator)
    {
        return Err(TaskRefusal::Claimed);
    }
    task.close(TaskState::Abandoned, Some(operator), now);
    task.give_up = Some(failure);
    Ok(task.clone())
}

/// Who placed the person's call and what the payer said to identify it, kept as the call's audit summary.
fn audit_summary(operator: &str, call: &PersonCall) -> String {
    let mut text = format!("Placed by the operator {operator} from the work queue.");
    if let Some(name) = call
        .representative_name
        .as_deref()
        .filter(|n| !n.trim().is_empty())
    {
        text.push_str(&format!(" Representative: {}.", name.trim()));
    }
    if let Some(reference) = call
        .reference_number
        .as_deref()
        .filter(|r| !r.trim().is_empty())
    {
        text.push_str(&format!(" Reference number: {}.", reference.trim()));
    }
    text
}

/// The ten digits of a U.S. number as dialed (`+1 (800) 555-0142` → `8005550142`).
fn digits(number: &str) -> String {
    let digits: String = number.chars().filter(char::is_ascii_digit).collect();
    match digits.len() {
        11 if digits.starts_with('1') => digits[1..].to_owned(),
        _ => digits,
    }
}
