//! Unit tests of the pure orchestration decisions.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use switchboard_storage::{CallOutcomeRecord, CallReport, ElectronicRecord};

use super::*;

fn now() -> DateTime<Utc> {
    "2026-11-23T14:00:00Z".parse().unwrap()
}

fn call(seq: u32, step: &str, disposition: Disposition, captured: &[(&str, &str)]) -> CallRecord {
    CallRecord {
        id: format!("c{seq}").into(),
        seq,
        step_key: step.into(),
        attempt: seq,
        to: "8005550123".into(),
        number_source: NumberSource::Input,
        placed_at: now(),
        outcome: Some(Arc::new(CallOutcomeRecord {
            ended_at: now(),
            report: CallReport {
                duration_seconds: 60,
                captured: captured
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect(),
                failure: (disposition == Disposition::Failed)
                    .then(|| failure("NOT_FOUND", "MEMBER_NOT_FOUND", "no member")),
                referral_number: (disposition == Disposition::Referred)
                    .then(|| "8885550111".to_owned()),
                ..CallReport::new(disposition)
            },
        })),
        platform: None,
    }
}

fn required() -> Vec<String> {
    vec!["a".into(), "b".into()]
}

fn step(key: &str, state: StepState) -> StepRecord {
    StepRecord {
        key: key.into(),
        schema_id: "s".into(),
        schema_version: 1,
        name: "S".into(),
        state,
        triggered_by: None,
        fields_required: 2,
        fields_captured: 0,
        missing_fields: vec!["x".into()],
        error: None,
    }
}

#[test]
fn a_fresh_step_dials_the_requests_number_or_fails_without_one() {
    assert_eq!(
        next_step_move(
            &[],
            &required(),
            Some(("8005550123", NumberSource::Directory)),
            Environment::Production,
        ),
        StepDecision::Dial {
            number: "8005550123".into(),
            source: NumberSource::Directory
        }
    );
    assert!(matches!(
        next_step_move(&[], &required(), None, Environment::Production),
        StepDecision::Fail(_)
    ));
}

#[test]
fn voicemail_and_hold_timeouts_redial_until_the_budget_is_spent() {
    let one = call(1, "s", Disposition::Voicemail, &[]);
    assert!(matches!(
        next_step_move(&[&one], &required(), None, Environment::Production),
        StepDecision::Dial { .. }
    ));
    let two = call(2, "s", Disposition::HoldTimeout, &[]);
    let three = call(3, "s", Disposition::Voicemail, &[]);
    match next_step_move(
        &[&one, &two, &three],
        &required(),
        None,
        Environment::Production,
    ) {
        StepDecision::Fail(f) => assert_eq!(
            (f.category.as_str(), f.code.as_str()),
            ("SYSTEM_ERROR", "UNABLE_TO_REACH_HUMAN_IN_TIME")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_referral_redials_the_given_number_as_a_referral() {
    let referred = call(1, "s", Disposition::Referred, &[]);
    assert_eq!(
        next_step_move(&[&referred], &required(), None, Environment::Production),
        StepDecision::Dial {
            number: "8885550111".into(),
            source: NumberSource::Referral
        }
    );
}

#[test]
fn a_completed_call_with_every_required_field_succeeds_the_step() {
    let done = call(1, "s", Disposition::Completed, &[("a", "1"), ("b", "2")]);
    assert_eq!(
        next_step_move(&[&done], &required(), None, Environment::Production),
        StepDecision::Succeed
    );
    let partial = call(1, "s", Disposition::Completed, &[("a", "1")]);
    assert!(matches!(
        next_step_move(&[&partial], &required(), None, Environment::Production),
        StepDecision::Dial { .. }
    ));
    let rest = call(2, "s", Disposition::Completed, &[("b", "2")]);
    assert_eq!(
        next_step_move(
            &[&partial, &rest],
            &required(),
            None,
            Environment::Production
        ),
        StepDecision::Succeed,
        "captures add up across redials"
    );
}

#[test]
fn a_failed_call_fails_the_step_with_its_code() {
    let failed = call(1, "s", Disposition::Failed, &[]);
    match next_step_move(&[&failed], &required(), None, Environment::Production) {
        StepDecision::Fail(f) => assert_eq!(f.code, "MEMBER_NOT_FOUND"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_number_failures_are_attributed_by_where_the_number_came_from() {
    let generic = failure("SYSTEM_ERROR", "PHONE_NUMBER_INCORRECT", "wrong number");
    let cases = [
        (
            NumberSource::Directory,
            "SYSTEM_ERROR",
            "MATCHED_PHONE_NUMBER_INCORRECT",
        ),
        (
            NumberSource::Referral,
            "NOT_FOUND",
            "REPRESENTATIVE_PHONE_NUMBER_INCORRECT",
        ),
        (
            NumberSource::Input,
            "NOT_FOUND",
            "INPUT_PHONE_NUMBER_INCORRECT",
        ),
        (
            NumberSource::PhoneBook,
            "NOT_FOUND",
            "INPUT_PHONE_NUMBER_INCORRECT",
        ),
    ];
    for (source, category, code) in cases {
        let attributed = attribute(generic.clone(), source, Environment::Production);
        assert_eq!(
            (attributed.category.as_str(), attributed.code.as_str()),
            (category, code),
            "{source:?}"
        );
    }
    let other = failure("NOT_FOUND", "MEMBER_NOT_FOUND", "m");
    assert_eq!(
        attribute(
            other.clone(),
            NumberSource::Directory,
            Environment::Production
        ),
        other
    );
}

#[test]
fn a_scripted_sandbox_wrong_number_keeps_the_generic_code_under_its_sources_category() {
    let generic = failure("NOT_FOUND", "PHONE_NUMBER_INCORRECT", "wrong number");
    for (source, category) in [
        (NumberSource::Directory, "SYSTEM_ERROR"),
        (NumberSource::Referral, "NOT_FOUND"),
        (NumberSource::Input, "NOT_FOUND"),
        (NumberSource::PhoneBook, "NOT_FOUND"),
    ] {
        let kept = attribute(generic.clone(), source, Environment::Sandbox);
        assert_eq!(
            (
                kept.category.as_str(),
                kept.code.as_str(),
                kept.message.as_str()
            ),
            (category, "PHONE_NUMBER_INCORRECT", "wrong number"),
            "{source:?}"
        );
    }
    let specific = failure("NOT_FOUND", "INPUT_PHONE_NUMBER_INCORRECT", "i");
    assert_eq!(
        attribute(
            specific.clone(),
            NumberSource::Directory,
            Environment::Sandbox
        ),
        specific
    );
}

#[test]
fn closing_a_step_counts_its_required_captures() {
    let mut record = step("s", StepState::InProgress);
    let one = call(
        1,
        "s",
        Disposition::Completed,
        &[("a", "1"), ("extra", "x")],
    );
    close_step(&mut record, &[&one], &required(), StepState::Failed, None);
    assert_eq!((record.fields_required, record.fields_captured), (2, 1));
    assert_eq!(record.missing_fields, ["b"]);
}

fn run_with(steps: Vec<StepRecord>, calls: Vec<CallRecord>) -> RunRecord {
    RunRecord {
        steps,
        calls,
        ..RunRecord::default()
    }
}

#[test]
fn success_merges_results_with_later_calls_winning_and_sources_pointing_at_them() {
    let mut run = run_with(
        vec![step("step-1", StepState::Succeeded)],
        vec![
            call(1, "step-1", Disposition::Completed, &[("a", "old")]),
            call(
                2,
                "step-1",
                Disposition::Completed,
                &[("a", "new"), ("b", "2")],
            ),
        ],
    );
    assert_eq!(finish(&mut run, &required()), RequestState::Success);
    assert_eq!(
        run.results,
        BTreeMap::from([("a".into(), "new".into()), ("b".into(), "2".into())])
    );
    assert_eq!(
        run.result_sources,
        BTreeMap::from([("a".into(), 2), ("b".into(), 2)])
    );
    assert!(run.missing_fields.is_empty());
    assert_eq!(run.modality, Some(Modality::PhoneOnly));
}

#[test]
fn a_failed_follow_up_is_partial_with_the_legs_missing_fields() {
    let mut leg = step("step-2", StepState::Failed);
    leg.missing_fields = vec!["appealDeadline".into()];
    let mut run = run_with(
        vec![step("step-1", StepState::Succeeded), leg],
        vec![
            call(
                1,
                "step-1",
                Disposition::Completed,
                &[("a", "1"), ("b", "2")],
            ),
            call(2, "step-2", Disposition::Failed, &[]),
        ],
    );
    assert_eq!(finish(&mut run, &required()), RequestState::Partial);
    assert_eq!(run.missing_fields, ["appealDeadline"]);
    assert_eq!(run.results.len(), 2);
    assert!(run.error.is_none());
}

#[test]
fn a_failed_primary_step_is_failure_with_empty_results_and_its_error() {
    let mut primary = step("step-1", StepState::Failed);
    primary.error = Some(failure("NOT_FOUND", "MEMBER_NOT_FOUND", "m"));
    let mut run = run_with(
        vec![primary],
        vec![call(1, "step-1", Disposition::Failed, &[])],
    );
    assert_eq!(finish(&mut run, &required()), RequestState::Failure);
    assert!(run.results.is_empty() && run.result_sources.is_empty());
    assert_eq!(run.error.as_ref().unwrap().code, "MEMBER_NOT_FOUND");
    assert_eq!(run.missing_fields, required());
}

#[test]
fn the_electronic_channel_sets_the_modality() {
    let captured: BTreeMap<String, String> = [
        ("a".to_owned(), "1".to_owned()),
        ("b".to_owned(), "2".to_owned()),
    ]
    .into();
    let mut digital = RunRecord {
        electronic: Some(ElectronicRecord {
            at: now(),
            captured: captured.clone(),
            ..ElectronicRecord::default()
        }),
        ..RunRecord::default()
    };
    assert_eq!(finish(&mut digital, &required()), RequestState::Success);
    assert_eq!(digital.modality, Some(Modality::DigitalOnly));
    assert!(
        digital.result_sources.is_empty(),
        "no phone-call source for electronic values"
    );

    let mut mixed = run_with(
        vec![step("step-1", StepState::Succeeded)],
        vec![call(1, "step-1", Disposition::Completed, &[("b", "2")])],
    );
    mixed.electronic = Some(ElectronicRecord {
        at: now(),
        captured: [("a".to_owned(), "1".to_owned())].into(),
        ..ElectronicRecord::default()
    });
    assert_eq!(finish(&mut mixed, &required()), RequestState::Success);
    assert_eq!(mixed.modality, Some(Modality::DigitalPlusPhone));
    assert_eq!(mixed.result_sources, BTreeMap::from([("b".into(), 1)]));
}

#[test]
fn an_electronic_answer_that_closes_the_request_succeeds_without_the_fields_it_left_open() {
    let closing = |closes_request: bool| RunRecord {
        electronic: Some(ElectronicRecord {
            at: now(),
            captured: [("a".to_owned(), "1".to_owned())].into(),
            closes_request,
            ..ElectronicRecord::default()
        }),
        ..RunRecord::default()
    };
    let mut closed = closing(true);
    assert_eq!(finish(&mut closed, &required()), RequestState::Success);
    assert_eq!(closed.modality, Some(Modality::DigitalOnly));
    assert_eq!(closed.results, BTreeMap::from([("a".into(), "1".into())]));
    assert!(closed.missing_fields.is_empty() && closed.error.is_none());

    // Without the flag, an answer that leaves a required field open and no call is not a success.
    let mut open = closing(false);
    assert_eq!(finish(&mut open, &required()), RequestState::Failure);
}
