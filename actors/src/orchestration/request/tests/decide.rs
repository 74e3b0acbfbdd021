//! Every edge of the request's lifecycle, decided from a record, an account and the schemas.

use super::*;
use crate::orchestration::outcome::failure;
use crate::orchestration::request::{
    after_fault, open_step, record_electronic, record_restart, start_run, AfterFault, Ending, Move,
    Phase, Progress, StepPlan,
};
use crate::orchestration::RESTART_LIMIT;

/// [`crate::orchestration::request::decide`] over a test catalog, which answers at once: the decision
/// is ready at its first poll.
fn decide(
    record: &RequestRecord,
    account: Option<&AccountRecord>,
    schemas: &mut Catalog,
    now: DateTime<Utc>,
) -> Result<Move, OrchestrationError> {
    let decided = crate::orchestration::request::decide(record, account, schemas, now);
    futures::FutureExt::now_or_never(decided).expect("a test catalog answers at once")
}

fn decide_with(record: &RequestRecord, features: &[Feature]) -> Move {
    decide(
        record,
        Some(&account(features)),
        &mut Catalog::full(),
        now(),
    )
    .unwrap()
}

fn finishes_as_the_calls_decide(next: Move, why: &str) {
    match next {
        Move::Finish(Ending {
            error: None,
            primary,
        }) => {
            assert_eq!(primary, Some(schema("vob", 2)), "{why}")
        }
        other => panic!("{why}: expected Finish, got {other:?}"),
    }
}

#[test]
fn the_phase_is_read_from_the_record() {
    assert_eq!(Phase::of(&request()), Phase::Due);
    let fresh = running(vec![], vec![]);
    let run = fresh.run.as_ref().unwrap();
    assert_eq!(
        Phase::of(&fresh),
        Phase::Running(run, Progress::BeforeSteps)
    );
    let stepping = running(vec![step(1, "vob", StepState::InProgress)], vec![]);
    assert!(matches!(
        Phase::of(&stepping),
        Phase::Running(_, Progress::InStep)
    ));
    let closed = running(vec![step(1, "vob", StepState::Failed)], vec![]);
    assert!(matches!(
        Phase::of(&closed),
        Phase::Running(_, Progress::StepsClosed)
    ));
    let terminal = RequestRecord {
        state: RequestState::Success,
        ..closed
    };
    assert_eq!(Phase::of(&terminal), Phase::Ended);
}

#[test]
fn a_due_request_starts_its_run_on_the_schemas_latest_version() {
    assert!(matches!(
        decide_with(&request(), &[]),
        Move::StartRun { schema_version: 2 }
    ));
    // A schema gone from the store leaves the run on the version booked at creation.
    let gone = decide(
        &request(),
        Some(&account(&[])),
        &mut Catalog::default(),
        now(),
    )
    .unwrap();
    assert!(matches!(gone, Move::StartRun { schema_version: 1 }));
}

#[test]
fn a_started_run_tries_the_electronic_channel_first_on_accounts_that_have_it() {
    let next = decide_with(&running(vec![], vec![]), &[Feature::ElectronicChannels]);
    match next {
        Move::TryElectronic { primary } => assert_eq!(primary, schema("vob", 2)),
        other => panic!("expected TryElectronic, got {other:?}"),
    }
}

#[test]
fn an_electronic_answer_that_filled_every_required_field_finishes_without_a_step() {
    let answered = with_electronic(running(vec![], vec![]), &["a", "b"]);
    finishes_as_the_calls_decide(
        decide_with(&answered, &[Feature::ElectronicChannels]),
        "every required field answered electronically",
    );
}

#[test]
fn the_primary_step_asks_only_for_what_the_electronic_channel_left_open() {
    let answered = with_electronic(running(vec![], vec![]), &["a", "c"]);
    let Move::OpenStep(plan) = decide_with(&answered, &[Feature::ElectronicChannels]) else {
        panic!("expected the primary step to open");
    };
    assert_eq!(plan.index, 0);
    assert_eq!(plan.schema, schema("vob", 2));
    assert_eq!(plan.asks, strings(&["b"]));
    assert_eq!(plan.step.key, "step-1");
    assert_eq!(plan.step.name, "vob v2");
    assert_eq!(plan.step.state, StepState::InProgress);
    assert_eq!(plan.step.triggered_by, None);
    assert_eq!(plan.step.fields_required, 1);
    assert_eq!(plan.step.missing_fields, strings(&["b"]));
}

#[test]
fn an_electronic_answer_that_closes_the_request_finishes_without_a_step_even_with_fields_open() {
    let mut closing = with_electronic(running(vec![], vec![]), &["a"]);
    closing
        .run
        .as_mut()
        .unwrap()
        .electronic
        .as_mut()
        .unwrap()
        .closes_request = true;
    finishes_as_the_calls_decide(
        decide_with(&closing, &[Feature::ElectronicChannels]),
        "the answer closed the request",
    );
    // An answer that closes the request but filled nothing still leaves everything to the phone.
    let mut empty = with_electronic(running(vec![], vec![]), &[]);
    empty
        .run
        .as_mut()
        .unwrap()
        .electronic
        .as_mut()
        .unwrap()
        .closes_request = true;
    assert!(matches!(
        decide_with(&empty, &[Feature::ElectronicChannels]),
        Move::OpenStep(_)
    ));
}

#[test]
fn without_electronic_channels_the_primary_step_asks_for_every_required_field() {
    let Move::OpenStep(plan) = decide_with(&running(vec![], vec![]), &[]) else {
        panic!("expected the primary step to open");
    };
    assert_eq!(plan.asks, strings(&["a", "b"]));
    assert_eq!(plan.step.fields_required, 2);
}

#[test]
fn a_step_in_progress_is_resumed_not_opened_again() {
    let stepping = with_electronic(
        running(vec![step(1, "vob", StepState::InProgress)], vec![]),
        &["a"],
    );
    let next = decide_with(&stepping, &[Feature::ElectronicChannels]);
    let expected = StepPlan {
        step: step(1, "vob", StepState::InProgress),
        index: 0,
        schema: schema("vob", 2),
        asks: strings(&["b"]),
    };
    assert!(matches!(next, Move::ResumeStep(plan) if plan == expected));
    // A follow-up leg in progress asks for all of its own fields.
    let leg = running(
        vec![
            step(1, "vob", StepState::Succeeded),
            step(2, "leg", StepState::InProgress),
        ],
        vec![call(1, "step-1", &["a", "b"], true)],
    );
    let Move::ResumeStep(plan) = decide_with(&leg, &[Feature::FollowUpCalls]) else {
        panic!("expected the leg to resume");
    };
    assert_eq!((plan.index, plan.asks), (1, strings(&["x", "y"])));
    assert_eq!(plan.schema, schema("leg", 1));
}

fn asked_for_a_follow_up() -> RequestRecord {
    running(
        vec![step(1, "vob", StepState::Succeeded)],
        vec![
            call(1, "step-1", &["a"], false),
            call(2, "step-1", &["b"], true),
        ],
    )
}

#[test]
fn a_follow_up_leg_opens_when_a_call_asks_the_account_allows_and_the_leg_exists() {
    let Move::OpenStep(plan) = decide_with(&asked_for_a_follow_up(), &[Feature::FollowUpCalls])
    else {
        panic!("expected the follow-up leg to open");
    };
    assert_eq!(plan.index, 1);
    assert_eq!(plan.schema, schema("leg", 1));
    assert_eq!(plan.asks, strings(&["x", "y"]));
    assert_eq!(plan.step.key, "step-2");
    assert_eq!(
        plan.step.triggered_by.as_ref().map(|k| k.as_str()),
        Some("step-1")
    );
    assert_eq!(plan.step.missing_fields, strings(&["x", "y"]));
}

#[test]
fn every_step_closed_without_a_follow_up_to_open_finishes() {
    let follow_up = [Feature::FollowUpCalls];
    let not_asked = running(
        vec![step(1, "vob", StepState::Succeeded)],
        vec![call(1, "step-1", &["a", "b"], false)],
    );
    finishes_as_the_calls_decide(decide_with(&not_asked, &follow_up), "no call asked");
    finishes_as_the_calls_decide(
        decide_with(&asked_for_a_follow_up(), &[]),
        "the account has no follow-up calls",
    );
    let mut failed = asked_for_a_follow_up();
    failed.run.as_mut().unwrap().steps[0].state = StepState::Failed;
    finishes_as_the_calls_decide(decide_with(&failed, &follow_up), "the primary step failed");
    let mut leg_done = asked_for_a_follow_up();
    let steps = &mut leg_done.run.as_mut().unwrap().steps;
    steps.push(step(2, "leg", StepState::Failed));
    finishes_as_the_calls_decide(
        decide_with(&leg_done, &follow_up),
        "the leg ran already: never a second one",
    );
    let mut no_leg = Catalog::with(&[("vob", &[1, 2])]);
    let next = decide(
        &asked_for_a_follow_up(),
        Some(&account(&follow_up)),
        &mut no_leg,
        now(),
    );
    finishes_as_the_calls_decide(next.unwrap(), "the leg schema does not exist");
}

#[test]
fn restarts_beyond_the_intensity_within_the_window_end_the_request_in_failure() {
    let mut record = running(vec![step(1, "vob", StepState::InProgress)], vec![]);
    let run = record.run.as_mut().unwrap();
    run.restarts = (0..=RESTART_LIMIT as i64)
        .map(|i| seconds_ago(10 + i))
        .collect();
    match decide_with(&record, &[]) {
        Move::Finish(Ending { error, primary }) => {
            assert_eq!(
                error,
                Some(failure(
                    "SYSTEM_ERROR",
                    "OTHER",
                    "The request failed repeatedly inside Switchboard"
                ))
            );
            assert_eq!(primary, Some(schema("vob", 2)));
        }
        other => panic!("expected the request to fail, got {other:?}"),
    }
    // The same restarts spread beyond the window are forgiven: the step resumes.
    let run = record.run.as_mut().unwrap();
    run.restarts = (0..=RESTART_LIMIT as i64)
        .map(|i| seconds_ago(61 + i))
        .collect();
    assert!(matches!(decide_with(&record, &[]), Move::ResumeStep(_)));
}

#[test]
fn a_request_whose_account_is_gone_fails_whatever_its_phase() {
    for record in [request(), running(vec![], vec![])] {
        let next = decide(&record, None, &mut Catalog::full(), now()).unwrap();
        let Move::Finish(Ending { error, primary }) = next else {
            panic!("expected the request to fail, got {next:?}");
        };
        let error = error.expect("an account gone is a failure");
        assert_eq!(
            (
                error.category.as_str(),
                error.code.as_str(),
                error.message.as_str()
            ),
            ("SYSTEM_ERROR", "OTHER", "The account no longer exists")
        );
        // The version the run is pinned to, else the one booked at creation.
        let pinned = record.run.as_ref().map_or(1, |run| run.schema_version);
        assert_eq!(primary, Some(schema("vob", pinned)));
    }
}

#[test]
fn a_terminal_request_has_ended_even_without_its_account() {
    let terminal = RequestRecord {
        state: RequestState::Failure,
        ..running(vec![step(1, "vob", StepState::Failed)], vec![])
    };
    assert!(matches!(decide_with(&terminal, &[]), Move::End));
    let next = decide(&terminal, None, &mut Catalog::default(), now()).unwrap();
    assert!(matches!(next, Move::End));
}

#[test]
fn a_missing_pinned_schema_is_an_error_not_a_guess() {
    let mut only_v1 = Catalog::with(&[("vob", &[1])]);
    let next = decide(
        &running(vec![], vec![]),
        Some(&account(&[])),
        &mut only_v1,
        now(),
    );
    assert!(matches!(
        next,
        Err(OrchestrationError::SchemaMissing { version: 2, .. })
    ));
}

#[test]
fn a_fault_restarts_the_actor_until_the_recent_restarts_reach_the_limit() {
    let mut record = running(vec![], vec![]);
    assert_eq!(after_fault(&request(), now()), AfterFault::Restart);
    for _ in 0..RESTART_LIMIT {
        assert_eq!(after_fault(&record, now()), AfterFault::Restart);
        record_restart(&mut record, now());
    }
    assert_eq!(after_fault(&record, now()), AfterFault::GiveUp);
    let run = record.run.as_ref().unwrap();
    assert_eq!(
        (run.faults, run.restarts.len()),
        (RESTART_LIMIT as u32, RESTART_LIMIT)
    );
}

#[test]
fn recording_a_restart_forgets_the_restarts_outside_the_window() {
    let mut record = running(vec![], vec![]);
    record.run.as_mut().unwrap().restarts = vec![seconds_ago(120), seconds_ago(30)];
    record_restart(&mut record, now());
    let run = record.run.as_ref().unwrap();
    assert_eq!(run.restarts, vec![seconds_ago(30), now()]);
    assert_eq!(run.faults, 1);
}

#[test]
fn every_write_applied_again_changes_nothing_more() {
    let mut record = request();
    start_run(&mut record, 2, now());
    start_run(&mut record, 3, seconds_ago(5));
    let run = record.run.as_ref().unwrap();
    assert_eq!((run.schema_version, run.started_at), (2, Some(now())));

    let answer = with_electronic(running(vec![], vec![]), &["a"])
        .run
        .unwrap()
        .electronic
        .unwrap();
    let later = ElectronicRecord {
        captured: BTreeMap::new(),
        ..answer.clone()
    };
    record_electronic(&mut record, &answer);
    record_electronic(&mut record, &later);
    assert_eq!(record.run.as_ref().unwrap().electronic, Some(answer));

    let primary = step(1, "vob", StepState::InProgress);
    open_step(&mut record, &primary, 0);
    open_step(&mut record, &primary, 0);
    assert_eq!(record.run.as_ref().unwrap().steps, vec![primary]);
}
