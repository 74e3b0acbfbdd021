//! Single calls: determinism, the mix of outcomes, what each outcome reports.

use std::collections::BTreeMap;

use switchboard_storage::Disposition;

use super::*;

/// Rates high enough that 500 seeds show every outcome, low enough that most calls complete.
fn busy() -> PayerProfile {
    PayerProfile {
        ivr_failure_rate: 0.04,
        hold_minutes_median: 15.0,
        hold_timeout_rate: 0.06,
        voicemail_rate: 0.05,
        refusal_rate: 0.05,
        referral_rate: 0.08,
        not_found_rate: 0.06,
        missing_input_rate: 0.15,
        wrong_number_rate: 0.03,
    }
}

/// The kind of a report: its disposition, or for failures its code (not-found and missing-input codes
/// grouped).
fn kind(report: &CallReport) -> String {
    match (&report.disposition, &report.failure) {
        (Disposition::Failed, Some(f)) if f.code.as_str().ends_with("_NOT_FOUND") => {
            "NOT_FOUND".into()
        }
        (Disposition::Failed, Some(f)) if f.code.as_str().ends_with("_MISSING") => "MISSING".into(),
        (Disposition::Failed, Some(f)) => f.code.to_string(),
        (disposition, _) => format!("{disposition:?}"),
    }
}

#[tokio::test]
async fn the_same_job_gives_the_same_report() {
    let dialer = SimulatedPayerDialer::new();
    let mut differs = false;
    for seed in 0..40 {
        let one = job(claim_status(), inputs("Aetna", &[]), 0, 1, seed);
        let first = place(&dialer, one.clone()).await;
        assert_eq!(first, place(&dialer, one.clone()).await, "seed {seed}");
        let redial = CallJob { attempt: 2, ..one };
        differs |= first != place(&dialer, redial).await;
    }
    assert!(differs, "a redial rolls new dice");
}

#[tokio::test]
async fn every_outcome_occurs_and_most_calls_complete() {
    let dialer = SimulatedPayerDialer::with_profile_override(busy());
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for seed in 0..500 {
        let report = place(
            &dialer,
            job(claim_status(), inputs("Aetna", &[]), 0, 1, seed),
        )
        .await;
        *counts.entry(kind(&report)).or_default() += 1;
    }
    for expected in [
        "Completed",
        "Voicemail",
        "HoldTimeout",
        "Referred",
        "IVR_FAILURE",
        "PAYER_REFUSAL",
        "PHONE_NUMBER_INCORRECT",
        "NOT_FOUND",
        "MISSING",
    ] {
        assert!(
            counts.contains_key(expected),
            "{expected} never happened: {counts:?}"
        );
    }
    let completed = counts["Completed"];
    assert!(completed > 250, "completed is the majority: {counts:?}");
    assert_eq!(counts.values().sum::<u32>(), 500, "{counts:?}");
}

#[tokio::test]
async fn a_profile_that_always_refuses_always_refuses() {
    let profile = PayerProfile {
        refusal_rate: 1.0,
        ..quiet()
    };
    let dialer = SimulatedPayerDialer::with_profile_override(profile);
    for seed in 0..100 {
        let report = place(
            &dialer,
            job(vob(), inputs("Cigna", &[]), 0, 1 + (seed % 3) as u32, seed),
        )
        .await;
        assert_eq!(report.disposition, Disposition::Failed);
        let failure = report.failure.expect("failure");
        assert_eq!(
            (failure.category.as_str(), failure.code.as_str()),
            ("SYSTEM_ERROR", "PAYER_REFUSAL")
        );
        assert!(report.captured.is_empty());
        let transcript = report.transcript.expect("the representative was reached");
        assert!(transcript.contains("Representative:"), "{transcript}");
    }
}

#[tokio::test]
async fn completed_calls_capture_every_required_field_and_tell_the_hold() {
    let dialer = SimulatedPayerDialer::with_profile_override(quiet());
    for seed in 0..60 {
        for (schema, step) in [
            (claim_status(), 0),
            (vob(), 0),
            (prior_auth(), 0),
            (appeal_leg(), 1),
        ] {
            let report = place(
                &dialer,
                job(schema.clone(), inputs("Humana", &[]), step, 1, seed),
            )
            .await;
            assert_eq!(report.disposition, Disposition::Completed);
            assert_well_formed(&schema, &report.captured);
            assert!(
                report.recording && report.failure.is_none() && report.referral_number.is_none()
            );
            let from = report.from_number.as_deref().expect("caller id");
            assert!(from.starts_with("+1") && from.len() == 12, "{from}");
            let transcript = report.transcript.as_deref().expect("transcript");
            assert!(
                transcript.contains("on hold") && transcript.contains("my name is"),
                "{transcript}"
            );
            assert!(report
                .transcript_post_call
                .as_deref()
                .unwrap()
                .contains("hold"));
            assert!(report.summary.is_some() && report.audit_summary.is_some());
            assert!(
                (5 * 60..=80 * 60).contains(&report.duration_seconds),
                "{}",
                report.duration_seconds
            );
        }
    }
}

#[tokio::test]
async fn a_denied_claim_requests_the_follow_up_leg() {
    let dialer = SimulatedPayerDialer::with_profile_override(quiet());
    let (mut denied, mut other) = (0, 0);
    for seed in 0..200 {
        let report = place(
            &dialer,
            job(claim_status(), inputs("Aetna", &[]), 0, 1, seed),
        )
        .await;
        let is_denied = report.captured["claimStatus"] == "DENIED";
        assert_eq!(report.follow_up_requested, is_denied, "seed {seed}");
        if is_denied {
            denied += 1
        } else {
            other += 1
        }
        let leg = place(&dialer, job(appeal_leg(), inputs("Aetna", &[]), 1, 1, seed)).await;
        assert!(!leg.follow_up_requested, "a leg never chains another");
        let vob_call = place(&dialer, job(vob(), inputs("Aetna", &[]), 0, 1, seed)).await;
        assert!(
            !vob_call.follow_up_requested,
            "no follow-up schema, no follow-up"
        );
    }
    assert!(denied > 0 && other > 0);
}

#[tokio::test]
async fn follow_up_legs_fail_less_often() {
    let dialer = SimulatedPayerDialer::with_profile_override(busy());
    let (mut primary, mut leg) = (0, 0);
    for seed in 0..400 {
        let first = place(
            &dialer,
            job(claim_status(), inputs("Aetna", &[]), 0, 1, seed),
        )
        .await;
        let second = place(&dialer, job(appeal_leg(), inputs("Aetna", &[]), 1, 1, seed)).await;
        primary += u32::from(first.disposition != Disposition::Completed);
        leg += u32::from(second.disposition != Disposition::Completed);
    }
    assert!(leg * 3 < primary * 2, "primary {primary}, leg {leg}");
}

#[test]
fn failures_carry_the_table_categories() {
    let cases = [
        (
            PayerProfile {
                ivr_failure_rate: 1.0,
                ..quiet()
            },
            "SYSTEM_ERROR",
            "IVR_FAILURE",
        ),
        (
            PayerProfile {
                refusal_rate: 1.0,
                ..quiet()
            },
            "SYSTEM_ERROR",
            "PAYER_REFUSAL",
        ),
        (
            PayerProfile {
                wrong_number_rate: 1.0,
                ..quiet()
            },
            "NOT_FOUND",
            "PHONE_NUMBER_INCORRECT",
        ),
    ];
    for (profile, category, code) in cases {
        let dialer = SimulatedPayerDialer::with_profile_override(profile);
        let report = dialer.simulate(&job(claim_status(), inputs("Aetna", &[]), 0, 1, 1));
        assert_eq!(report.disposition, Disposition::Failed);
        let failure = report.failure.unwrap();
        assert_eq!(
            (failure.category.as_str(), failure.code.as_str()),
            (category, code)
        );
        assert!(report.transcript_post_call.is_some() && report.summary.is_some());
    }
    let ivr = SimulatedPayerDialer::with_profile_override(PayerProfile {
        ivr_failure_rate: 1.0,
        ..quiet()
    })
    .simulate(&job(vob(), inputs("Aetna", &[]), 0, 1, 2));
    assert!(
        ivr.transcript.is_none(),
        "no representative, no conversation"
    );
    assert!(ivr.transcript_post_call.unwrap().contains("menu"));
    assert!((150..=300).contains(&ivr.duration_seconds));
    let not_found = SimulatedPayerDialer::with_profile_override(PayerProfile {
        not_found_rate: 1.0,
        ..quiet()
    });
    for seed in 0..40 {
        let report = not_found.simulate(&job(claim_status(), inputs("Aetna", &[]), 0, 1, seed));
        let failure = report.failure.unwrap();
        assert_eq!(failure.category, "NOT_FOUND");
        assert!(
            ["CLAIM_NOT_FOUND", "MEMBER_NOT_FOUND", "PROVIDER_NOT_FOUND"]
                .contains(&failure.code.as_str())
        );
        assert!(report.transcript.is_some());
    }
}
