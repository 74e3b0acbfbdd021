//! `human_fallback`: which endings become a task, what a request with a task does next, and how a person's
//! answers end it.

use switchboard_storage::{TaskRecord, TaskState};

use super::*;
use crate::orchestration::outcome::failure;
use crate::orchestration::request::fallback::after_task;
use crate::orchestration::request::{finalize, task_instead, Ending, Move};

fn failed(code: &str, category: &str) -> RequestRecord {
    let mut record = running(vec![step(1, "vob", StepState::Failed)], vec![]);
    record.run.as_mut().unwrap().steps[0].error = Some(failure(category, code, "no"));
    finalize(
        &mut record,
        Ending {
            error: None,
            primary: Some(schema("vob", 2)),
        },
        now(),
    );
    record
}

fn task(state: TaskState) -> TaskRecord {
    let record = failed("IVR_FAILURE", "SYSTEM_ERROR");
    let mut task = task_instead(&record, Some(&account(&[Feature::HumanFallback])), now()).unwrap();
    task.state = state;
    task
}

#[test]
fn a_system_failure_a_person_may_get_past_opens_a_task_on_fallback_accounts_only() {
    let fallback = account(&[Feature::HumanFallback]);
    let record = failed("IVR_FAILURE", "SYSTEM_ERROR");
    let task = task_instead(&record, Some(&fallback), now()).unwrap();
    assert_eq!(task.reason, "IVR_FAILURE");
    assert_eq!(task.step_key, "step-1");
    assert_eq!(task.missing_fields, strings(&["a", "b"]));
    assert_eq!(task.expires_at, now() + Duration::hours(72));
    assert_eq!(task_instead(&record, Some(&account(&[])), now()), None);
    let not_found = failed("MEMBER_NOT_FOUND", "NOT_FOUND");
    assert_eq!(task_instead(&not_found, Some(&fallback), now()), None);
    let mut once = record.clone();
    once.run.as_mut().unwrap().task = Some(task);
    assert_eq!(
        task_instead(&once, Some(&fallback), now()),
        None,
        "never a second task"
    );
}

#[test]
fn a_task_waits_expires_or_ends_the_request_as_the_person_decided() {
    let primary = schema("vob", 2);
    let open = task(TaskState::Open);
    assert!(matches!(
        after_task(&open, primary.clone(), now()),
        Move::AwaitPerson
    ));
    let late = open.expires_at + Duration::seconds(1);
    assert!(matches!(
        after_task(&open, primary.clone(), late),
        Move::ExpireTask(_)
    ));
    let mut abandoned = task(TaskState::Abandoned);
    abandoned.give_up = Some(failure("SYSTEM_ERROR", "PAYER_REFUSAL", "refused"));
    match after_task(&abandoned, primary.clone(), now()) {
        Move::Finish(ending) => assert_eq!(ending.error.unwrap().code, "PAYER_REFUSAL"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        after_task(&task(TaskState::Done), primary, now()),
        Move::Finish(Ending { error: None, .. })
    ));
}

#[test]
fn a_person_who_answered_part_of_the_fields_ends_the_request_partial() {
    let mut record = running(
        vec![step(1, "vob", StepState::Failed)],
        vec![call(1, "step-1", &["a"], false)],
    );
    let mut done = task(TaskState::Done);
    done.call_seq = Some(1);
    record.run.as_mut().unwrap().task = Some(done);
    finalize(
        &mut record,
        Ending {
            error: None,
            primary: Some(schema("vob", 2)),
        },
        now(),
    );
    assert_eq!(record.state, RequestState::Partial);
    let run = record.run.as_ref().unwrap();
    assert_eq!(run.missing_fields, strings(&["b"]));
    assert_eq!(run.results["a"], "a-by-phone");
    assert_eq!(run.result_sources["a"], 1);
    assert_eq!(run.error, None);
}
