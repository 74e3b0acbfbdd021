//! Scenario names, the failure-code table, wall-time scaling and the electronic channel.

use super::*;
use switchboard_storage::{ClaimElement, ElectronicSource};

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
async fn electronic_fills_only_mapped_fields_all_part_or_none_of_them() {
    // The claim-status answer carries the status, the billed amount and, for a paid claim, the paid amount;
    // the representative's name and the call reference number only a call can give.
    let mapped = {
        let mut schema = (*claim_status()).clone();
        schema.definition.electronic.fields = BTreeMap::from([
            (
                "claimStatus".to_string(),
                ElectronicSource::Claim(ClaimElement::Status),
            ),
            (
                "billedAmount".to_string(),
                ElectronicSource::Claim(ClaimElement::SubmittedAmount),
            ),
            (
                "paidAmount".to_string(),
                ElectronicSource::Claim(ClaimElement::PaidAmount),
            ),
            // Mapped, but its condition is on `isAppealable`, which no electronic answer gives.
            (
                "appealDeadline".to_string(),
                ElectronicSource::Claim(ClaimElement::PaidDate),
            ),
        ]);
        Arc::new(schema)
    };
    let electronic =
        |schema: &Arc<SchemaVersionRecord>, scenario: Option<&str>, seed: u64| ElectronicJob {
            request_id: "req-1".to_string().into(),
            schema: schema.clone(),
            inputs: inputs(scenario),
            payer_electronic: true,
            electronic_payer_id: None,
            provider_name: None,
            seed,
            today: chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap(),
        };
    let channel = SandboxElectronic;
    for seed in 0..20 {
        let digital = electronic(&mapped, Some("digital"), seed);
        assert!(
            channel.closes_request(&digital),
            "no call follows a digital answer"
        );
        let all = channel.inquire(digital).await.captured;
        let mut expected = vec!["billedAmount", "claimStatus"];
        if all.get("claimStatus").map(String::as_str) == Some("PAID") {
            expected.push("paidAmount");
        }
        expected.sort();
        assert_eq!(all.keys().collect::<Vec<_>>(), expected, "seed {seed}");
        let part = electronic(&mapped, Some("digital_plus_phone"), seed);
        assert!(!channel.closes_request(&part), "a call takes the rest");
        let part = channel.inquire(part).await.captured;
        assert_eq!(
            part.len(),
            1,
            "half of the two mapped required fields: {part:?}"
        );
        for (name, value) in all.iter().chain(&part) {
            let field = mapped
                .definition
                .fields
                .iter()
                .find(|f| &f.name == name)
                .unwrap();
            assert!(typed(field, value), "{name} = {value}");
        }
        for phone_only in ["representativeName", "callReferenceNumber"] {
            assert!(!all.contains_key(phone_only) && !part.contains_key(phone_only));
        }
    }
    // A schema that maps nothing is answered as if it mapped every field: `digital` fills every
    // unconditional field, `digital_plus_phone` part of the required ones and never all of them.
    let unmapped = claim_status();
    assert!(unmapped.definition.electronic.fields.is_empty());
    let required: Vec<&str> = unmapped
        .definition
        .fields
        .iter()
        .filter(|f| f.required && f.when.is_none())
        .map(|f| f.name.as_str())
        .collect();
    let all = channel
        .inquire(electronic(&unmapped, Some("digital"), 7))
        .await
        .captured;
    for name in &required {
        assert!(all.contains_key(*name), "digital fills {name}: {all:?}");
    }
    let part = channel
        .inquire(electronic(&unmapped, Some("digital_plus_phone"), 7))
        .await
        .captured;
    assert!(!part.is_empty() && part.len() < required.len(), "{part:?}");
    assert!(channel
        .inquire(electronic(&mapped, None, 7))
        .await
        .captured
        .is_empty());
    assert!(channel
        .inquire(electronic(&mapped, Some("failure:IVR_FAILURE"), 7))
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
