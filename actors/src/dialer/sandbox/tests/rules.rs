//! Scenario names, the failure-code table, wall-time scaling and the electronic channel.

use super::*;

#[test]
fn failure_codes_map_to_their_categories() {
    for (code, category, reported) in [
        ("MEMBER_NOT_FOUND", "NOT_FOUND", "MEMBER_NOT_FOUND"),
        ("CLAIM_NUMBER_MISSING", "NOT_FOUND", "CLAIM_NUMBER_MISSING"),
        (
            "INPUT_PHONE_NUMBER_INCORRECT",
            "NOT_FOUND",
            "INPUT_PHONE_NUMBER_INCORRECT",
        ),
        (
            "PROVIDER_ADDRESS_INCORRECT",
            "NOT_FOUND",
            "PROVIDER_ADDRESS_INCORRECT",
        ),
        ("IVR_FAILURE", "SYSTEM_ERROR", "IVR_FAILURE"),
        (
            "MATCHED_PHONE_NUMBER_INCORRECT",
            "SYSTEM_ERROR",
            "MATCHED_PHONE_NUMBER_INCORRECT",
        ),
        ("OTHER", "SYSTEM_ERROR", "OTHER"),
        ("WHATEVER_UNKNOWN", "SYSTEM_ERROR", "OTHER"),
    ] {
        let failure = failure_for_code(&code.into());
        assert_eq!(
            (failure.category.as_str(), failure.code.as_str()),
            (category, reported),
            "{code}"
        );
        assert!(!failure.message.is_empty());
    }
}

#[tokio::test]
async fn electronic_fills_all_part_or_none_of_the_required_fields() {
    let electronic = |scenario: Option<&str>| ElectronicJob {
        request_id: "req-1".to_string().into(),
        schema: claim_status(),
        inputs: inputs(scenario),
        payer_electronic: true,
        electronic_payer_id: None,
        provider_name: None,
        seed: 7,
        today: chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap(),
    };
    let required = claim_status()
        .definition
        .fields
        .iter()
        .filter(|f| f.required)
        .count();
    let channel = SandboxElectronic;
    let all = channel.inquire(electronic(Some("digital"))).await.captured;
    assert_eq!(all.len(), required);
    let part = channel
        .inquire(electronic(Some("digital_plus_phone")))
        .await
        .captured;
    assert_eq!(part.len(), required / 2);
    let schema = claim_status();
    for (name, value) in all.iter().chain(&part) {
        let field = schema
            .definition
            .fields
            .iter()
            .find(|f| &f.name == name)
            .unwrap();
        assert!(field.required && typed(field, value), "{name} = {value}");
    }
    let call = place(job(Some("digital_plus_phone"), 0, 1, 7)).await;
    assert!(part
        .iter()
        .all(|(name, value)| call.captured.get(name) == Some(value)));
    assert!(channel.inquire(electronic(None)).await.captured.is_empty());
    assert!(channel
        .inquire(electronic(Some("failure:IVR_FAILURE")))
        .await
        .captured
        .is_empty());
}

#[test]
fn scenario_names_parse() {
    let named = |name: &str| Scenario::from_inputs(&inputs(Some(name)));
    assert_eq!(Scenario::from_inputs(&BTreeMap::new()), Scenario::Success);
    assert_eq!(named("success"), Scenario::Success);
    assert_eq!(named("redial"), Scenario::Redial);
    assert_eq!(named("follow_up"), Scenario::FollowUp);
    assert_eq!(named("partial"), Scenario::Partial);
    assert_eq!(
        named("failure:CLAIM_NOT_FOUND"),
        Scenario::Failure("CLAIM_NOT_FOUND".into())
    );
    assert_eq!(named(" Cannot_Answer "), Scenario::CannotAnswer);
    assert_eq!(named("digital"), Scenario::Digital);
    assert_eq!(named("digital_plus_phone"), Scenario::DigitalPlusPhone);
    assert_eq!(named("stuck"), Scenario::Stuck);
    assert_eq!(named("fault:call_panic"), Scenario::CallPanic);
    assert_eq!(named("fault:call_panic_once"), Scenario::CallPanicOnce);
    assert_eq!(named("bogus"), Scenario::Success);
}

#[test]
fn calls_wait_scaled_and_capped_wall_time() {
    assert_eq!(wall_wait(600, 60.0), Some(Duration::from_millis(1_250)));
    assert_eq!(wall_wait(60, 60.0), Some(Duration::from_secs(1)));
    assert!(wall_wait(600, 100_000.0).unwrap() < Duration::from_millis(1));
    assert_eq!(wall_wait(0, 60.0), None);
}
