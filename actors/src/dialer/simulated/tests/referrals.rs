//! Referrals and wrong numbers: when a representative refers, to which numbers, and how often a referred
//! number turns out wrong.

use switchboard_storage::Disposition;

use super::*;
use referral::{is_referral_number, referral_number};

#[tokio::test]
async fn referrals_come_on_first_attempts_only_with_valid_numbers() {
    let profile = PayerProfile {
        referral_rate: 1.0,
        ..quiet()
    };
    let dialer = SimulatedPayerDialer::with_profile_override(profile);
    for seed in 0..100 {
        let first = place(&dialer, job(vob(), inputs("Aetna", &[]), 0, 1, seed)).await;
        assert_eq!(first.disposition, Disposition::Referred);
        let number = first.referral_number.clone().expect("a referral number");
        assert!(
            number.len() == 10 && number.bytes().all(|b| b.is_ascii_digit()),
            "{number}"
        );
        assert!(
            number.starts_with('8') && &number[3..6] == "555",
            "{number}"
        );
        assert!(
            ["800", "888", "877", "866", "855"].contains(&&number[..3]),
            "{number}"
        );
        assert!(first
            .transcript
            .as_deref()
            .unwrap()
            .contains(&texts::display_number(&number)));
        let second = place(&dialer, job(vob(), inputs("Aetna", &[]), 0, 2, seed)).await;
        assert_eq!(
            second.disposition,
            Disposition::Completed,
            "no referral on a redial"
        );
        let referred = CallJob {
            number,
            ..job(vob(), inputs("Aetna", &[]), 0, 2, seed)
        };
        let third = place(
            &dialer,
            CallJob {
                attempt: 1,
                ..referred
            },
        )
        .await;
        assert_eq!(
            third.disposition,
            Disposition::Completed,
            "no referral from a referred number"
        );
    }
}

#[tokio::test]
async fn a_blue_plan_refers_a_member_to_the_same_home_plan() {
    let profile = PayerProfile {
        referral_rate: 1.0,
        ..quiet()
    };
    let dialer = SimulatedPayerDialer::with_profile_override(profile);
    let call = |member: &str, dob: &str| {
        let extra = [("memberId", member), ("patientDateOfBirth", dob)];
        job(
            vob(),
            inputs("Blue Cross Blue Shield of Texas", &extra),
            0,
            1,
            7,
        )
    };
    let one = place(&dialer, call("ZGT123456789", "1970-01-01")).await;
    let two = place(&dialer, call("ZGT987654321", "1990-05-05")).await;
    assert_eq!(one.referral_number, two.referral_number);
    assert!(one.transcript.unwrap().contains("home plan"));
}

#[tokio::test]
async fn wrong_numbers_are_generic_and_likelier_on_referred_numbers() {
    let profile = PayerProfile {
        wrong_number_rate: 0.05,
        ..quiet()
    };
    let dialer = SimulatedPayerDialer::with_profile_override(profile);
    let (mut listed, mut referred) = (0, 0);
    for seed in 0..400 {
        let call = job(vob(), inputs("Aetna", &[]), 0, 2, seed);
        let to_referral = CallJob {
            number: "8665550187".to_string(),
            ..call.clone()
        };
        for (count, call) in [(&mut listed, call), (&mut referred, to_referral)] {
            let report = place(&dialer, call).await;
            if report.disposition == Disposition::Failed {
                let failure = report.failure.expect("failure");
                assert_eq!(failure.code, "PHONE_NUMBER_INCORRECT");
                assert!(report.transcript.unwrap().contains("wrong department"));
                *count += 1;
            }
        }
    }
    assert!(
        listed > 0 && referred > 3 * listed,
        "listed {listed}, referred {referred}"
    );
}

#[test]
fn referral_numbers_are_valid_toll_free_fiction() {
    for seed in 0..300 {
        let number = referral_number(&dice(seed));
        assert_eq!(number.len(), 10, "{number}");
        assert!(number.bytes().all(|b| b.is_ascii_digit()), "{number}");
        assert!(
            ["800", "888", "877", "866", "855"].contains(&&number[..3]),
            "{number}"
        );
        assert_eq!(&number[3..6], "555", "{number}");
        let line: u32 = number[6..].parse().unwrap();
        assert!((180..=199).contains(&line), "{number}");
        assert!(is_referral_number(&number));
    }
    for listed in [
        "8005550101",
        "8775550100",
        "8005550179",
        "6175550180",
        "800555018",
        "80055501x0",
    ] {
        assert!(!is_referral_number(listed), "{listed}");
    }
}
