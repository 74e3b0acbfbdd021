//! Every call scenario: dispositions, captured values, conditional fields, determinism and faults.

use super::*;

#[tokio::test]
async fn success_captures_every_required_field_with_a_typed_value() {
    for seed in 0..5 {
        let report = place(job(None, 0, 1, seed)).await;
        assert_completed_call(&report);
        assert_well_formed(&claim_status(), &report.captured);
        let transcript = report.transcript.as_deref().unwrap();
        assert!(
            transcript.contains(&report.captured["callReferenceNumber"]),
            "{transcript}"
        );
        assert!(transcript.contains("What is the claimStatus?"));
        assert!(report.captured["callReferenceNumber"].starts_with("REF-"));
    }
    let unknown = place(job(Some("no_such_scenario"), 0, 1, 3)).await;
    assert_completed_call(&unknown);
    assert_well_formed(&claim_status(), &unknown.captured);
}

#[tokio::test]
async fn conditional_and_optional_fields_vary_with_the_answers() {
    let mut statuses = BTreeMap::new();
    let (mut optional_seen, mut optional_skipped) = (false, false);
    for seed in 0..60 {
        let report = place(job(None, 0, 1, seed)).await;
        assert_well_formed(&claim_status(), &report.captured);
        *statuses
            .entry(report.captured["claimStatus"].clone())
            .or_insert(0) += 1;
        let optional = report.captured.contains_key("payerClaimNumber");
        optional_seen |= optional;
        optional_skipped |= !optional;
    }
    assert_eq!(statuses.len(), 3, "{statuses:?}");
    assert!(optional_seen && optional_skipped);
}

#[tokio::test]
async fn redial_reaches_no_one_on_the_first_attempt_then_completes() {
    let first = place(job(Some("redial"), 0, 1, 7)).await;
    assert!(matches!(
        first.disposition,
        Disposition::Voicemail | Disposition::HoldTimeout
    ));
    assert!(first.captured.is_empty() && first.transcript.is_none() && first.failure.is_none());
    assert!((45..=120).contains(&first.duration_seconds));
    assert!(first.transcript_post_call.is_some());
    let second = place(job(Some("redial"), 0, 2, 7)).await;
    assert_completed_call(&second);
    assert_well_formed(&claim_status(), &second.captured);
}

#[tokio::test]
async fn follow_up_completes_the_primary_step_and_the_leg() {
    let primary = place(job(Some("follow_up"), 0, 1, 7)).await;
    assert_completed_call(&primary);
    assert_well_formed(&claim_status(), &primary.captured);
    assert_eq!(primary.captured["claimStatus"], "DENIED");
    let leg = place(job(Some("follow_up"), 1, 1, 7)).await;
    assert_completed_call(&leg);
    assert_well_formed(&appeal_leg(), &leg.captured);
    assert!(leg.captured.contains_key("appealCallReferenceNumber"));
}

#[tokio::test]
async fn partial_completes_the_primary_step_and_fails_the_leg() {
    let primary = place(job(Some("partial"), 0, 1, 7)).await;
    assert_completed_call(&primary);
    assert_well_formed(&claim_status(), &primary.captured);
    let leg = place(job(Some("partial"), 1, 1, 7)).await;
    assert_eq!(leg.disposition, Disposition::Failed);
    assert!(leg.captured.is_empty());
    let failure = leg.failure.unwrap();
    assert_eq!(
        (failure.category.as_str(), failure.code.as_str()),
        ("SYSTEM_ERROR", "PAYER_REFUSAL")
    );
}

#[tokio::test]
async fn failure_fails_the_primary_step_with_the_code_and_its_category() {
    let report = place(job(Some("failure:MEMBER_NOT_FOUND"), 0, 1, 7)).await;
    assert_eq!(report.disposition, Disposition::Failed);
    assert!(report.captured.is_empty());
    let failure = report.failure.clone().unwrap();
    assert_eq!(
        (failure.category.as_str(), failure.code.as_str()),
        ("NOT_FOUND", "MEMBER_NOT_FOUND")
    );
    let transcript = report.transcript.unwrap();
    assert!(
        transcript.contains("not finding a member") && transcript.contains("W123456789"),
        "{transcript}"
    );
    let ivr = place(job(Some("failure:ivr_failure"), 0, 1, 7)).await;
    assert_eq!(ivr.failure.unwrap().code, "IVR_FAILURE");
    assert!(ivr.transcript.is_none() && ivr.transcript_post_call.is_some());
    let unknown = place(job(Some("failure:WHATEVER_UNKNOWN"), 0, 1, 7))
        .await
        .failure
        .unwrap();
    assert_eq!(
        (unknown.category.as_str(), unknown.code.as_str()),
        ("SYSTEM_ERROR", "OTHER")
    );
}

#[tokio::test]
async fn cannot_answer_puts_exactly_one_non_answer_in_a_required_field() {
    for seed in 0..10 {
        let report = place(job(Some("cannot_answer"), 0, 1, seed)).await;
        assert_completed_call(&report);
        assert_well_formed(&claim_status(), &report.captured);
        let non_answers: Vec<&String> = report
            .captured
            .iter()
            .filter(|(_, v)| v.starts_with("CANNOT ANSWER - "))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(non_answers.len(), 1, "{:?}", report.captured);
        assert!(claim_status()
            .definition
            .fields
            .iter()
            .any(|f| f.required && &f.name == non_answers[0]));
    }
}

#[tokio::test]
async fn reports_are_deterministic_and_follow_the_seed() {
    assert_eq!(
        place(job(Some("cannot_answer"), 0, 1, 7)).await,
        place(job(Some("cannot_answer"), 0, 1, 7)).await
    );
    assert_eq!(
        place(job(Some("failure:CLAIM_NOT_FOUND"), 0, 1, 7)).await,
        place(job(Some("failure:CLAIM_NOT_FOUND"), 0, 1, 7)).await
    );
    let (a, b) = (
        place(job(None, 0, 1, 7)).await,
        place(job(None, 0, 1, 8)).await,
    );
    assert_ne!(a.captured, b.captured);
    assert_ne!(a.transcript, b.transcript);
}

#[tokio::test]
async fn stuck_never_resolves() {
    let call = SandboxDialer::new().place(job(Some("stuck"), 0, 1, 7));
    assert!(tokio::time::timeout(Duration::from_millis(50), call)
        .await
        .is_err());
}

#[tokio::test]
async fn call_panic_panics_when_polled() {
    let call = SandboxDialer::new().place(job(Some("fault:call_panic"), 0, 1, 7));
    let panic = AssertUnwindSafe(call).catch_unwind().await.unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("fault injection"), "{message}");
    let mut restarted = job(Some("fault:call_panic"), 0, 1, 7);
    restarted.restarts = 3;
    assert!(AssertUnwindSafe(place(restarted))
        .catch_unwind()
        .await
        .is_err());
}

#[tokio::test]
async fn call_panic_once_panics_only_before_a_restart() {
    let first = SandboxDialer::new().place(job(Some("fault:call_panic_once"), 0, 1, 7));
    assert!(AssertUnwindSafe(first).catch_unwind().await.is_err());
    let mut restarted = job(Some("fault:call_panic_once"), 0, 1, 7);
    restarted.restarts = 1;
    let report = place(restarted).await;
    assert_completed_call(&report);
    assert_well_formed(&claim_status(), &report.captured);
}
