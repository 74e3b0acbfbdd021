//! The terminal record a finishing request writes, and the webhook enqueued with it.

use switchboard_storage::{DeliveryStatus, Modality};

use super::*;
use crate::orchestration::outcome::failure;
use crate::orchestration::request::{finalize, webhook_for, Ending};

fn fault() -> switchboard_storage::FailureRecord {
    failure(
        "SYSTEM_ERROR",
        "OTHER",
        "The request failed repeatedly inside Switchboard",
    )
}

fn ending(error: Option<switchboard_storage::FailureRecord>) -> Ending {
    Ending {
        error,
        primary: Some(schema("vob", 2)),
    }
}

#[test]
fn a_fault_during_the_follow_up_fails_the_leg_and_keeps_the_primary_answers() {
    let mut record = running(
        vec![
            step(1, "vob", StepState::Succeeded),
            step(2, "leg", StepState::InProgress),
        ],
        vec![
            call(1, "step-1", &["a", "b"], true),
            call(2, "step-2", &["x"], false),
        ],
    );
    finalize(&mut record, ending(Some(fault())), now());
    assert_eq!(record.state, RequestState::Partial);
    assert_eq!(record.completed_at, Some(now()));
    let run = record.run.as_ref().unwrap();
    assert_eq!(run.steps[0].state, StepState::Succeeded);
    assert_eq!(run.steps[1].state, StepState::Failed);
    assert_eq!(run.steps[1].error, Some(fault()));
    assert_eq!(run.error, None, "the request itself did not fail");
    assert_eq!(run.results["a"], "a-by-phone");
    assert_eq!(run.results["b"], "b-by-phone");
    assert_eq!(run.missing_fields, strings(&["x", "y"]));
}

#[test]
fn a_fault_before_the_primary_step_succeeds_fails_the_request_with_nothing_kept() {
    let mut record = running(
        vec![step(1, "vob", StepState::InProgress)],
        vec![call(1, "step-1", &["a"], false)],
    );
    finalize(&mut record, ending(Some(fault())), now());
    assert_eq!(record.state, RequestState::Failure);
    let run = record.run.as_ref().unwrap();
    assert_eq!(run.steps[0].state, StepState::Failed);
    assert_eq!(run.steps[0].error, Some(fault()));
    assert_eq!(run.error, Some(fault()));
    assert!(run.results.is_empty() && run.result_sources.is_empty());
    assert_eq!(run.missing_fields, strings(&["a", "b"]));
    assert_eq!(run.modality, Some(Modality::PhoneOnly));
}

#[test]
fn a_failure_whose_schema_is_gone_reports_no_field_missing() {
    let mut record = request();
    let gone = Ending {
        error: Some(failure(
            "SYSTEM_ERROR",
            "OTHER",
            "The account no longer exists",
        )),
        primary: None,
    };
    finalize(&mut record, gone, now());
    assert_eq!(record.state, RequestState::Failure);
    let run = record
        .run
        .as_ref()
        .expect("a run is recorded to hold the failure");
    assert!(run.missing_fields.is_empty());
    assert_eq!(run.modality, Some(Modality::PhoneOnly));
}

#[test]
fn a_digital_only_result_carries_a_summary_naming_the_transaction() {
    let mut record = with_electronic(running(vec![], vec![]), &["a", "b"]);
    finalize(&mut record, ending(None), now());
    assert_eq!(record.state, RequestState::Success);
    let run = record.run.as_ref().unwrap();
    assert_eq!(run.modality, Some(Modality::DigitalOnly));
    let summary = run
        .result_summary
        .as_deref()
        .expect("a digital-only summary");
    assert!(summary.contains("(transaction tx-9)"), "{summary}");
    assert!(summary.contains("A: a-value; B: b-value"), "{summary}");
}

#[test]
fn a_result_with_a_call_has_no_summary_and_keeps_the_electronic_answers() {
    let mut record = with_electronic(
        running(
            vec![step(1, "vob", StepState::Succeeded)],
            vec![call(1, "step-1", &["a", "b"], false)],
        ),
        &["a"],
    );
    finalize(&mut record, ending(None), now());
    assert_eq!(record.state, RequestState::Success);
    let run = record.run.as_ref().unwrap();
    assert_eq!(run.modality, Some(Modality::DigitalPlusPhone));
    assert_eq!(run.result_summary, None);
    assert_eq!(run.results["a"], "a-value");
    assert_eq!(run.results["b"], "b-by-phone");
}

#[test]
fn a_terminal_record_is_left_as_it_is() {
    let mut record = RequestRecord {
        state: RequestState::Success,
        completed_at: Some(seconds_ago(30)),
        ..running(vec![step(1, "vob", StepState::Succeeded)], vec![])
    };
    let before = record.clone();
    finalize(&mut record, ending(Some(fault())), now());
    assert_eq!(record, before);
}

#[test]
fn the_webhook_carries_the_terminal_state_to_the_accounts_url_signed_with_its_secret() {
    let mut record = with_electronic(running(vec![], vec![]), &["a", "b"]);
    finalize(&mut record, ending(None), now());
    let delivery = webhook_for(&record, Some(&account(&[])), now()).expect("a webhook");
    assert_eq!(delivery.url, "https://hooks.example/acme");
    assert_eq!(delivery.signing_secret, "whsec_acme");
    assert_eq!(delivery.payload, crate::webhooks::payload(&record));
    assert!(delivery.payload.contains("\"state\":\"SUCCESS\""));
    assert_eq!((delivery.terminal_at, delivery.next_at), (now(), now()));
    assert_eq!((delivery.next_round, delivery.attempts), (0, 0));
    assert_eq!(delivery.status, DeliveryStatus::Pending);
}

#[test]
fn the_webhook_prefers_the_requests_url_and_signs_sandbox_with_the_sandbox_key() {
    let record = RequestRecord {
        environment: Environment::Sandbox,
        credential_id: Some("cred-test".into()),
        webhook_url: Some("https://hooks.example/request".into()),
        ..request()
    };
    let delivery = webhook_for(&record, Some(&account(&[])), now()).unwrap();
    assert_eq!(delivery.url, "https://hooks.example/request");
    assert_eq!(delivery.signing_secret, "pk_test");
}

#[test]
fn no_webhook_without_an_account_or_anywhere_to_send_it() {
    assert_eq!(webhook_for(&request(), None, now()), None);
    let quiet = AccountRecord {
        webhook_url: None,
        ..account(&[])
    };
    assert_eq!(webhook_for(&request(), Some(&quiet), now()), None);
}
