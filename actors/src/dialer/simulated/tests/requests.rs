//! Whole requests through the simulator, driven the way the step actor drives them (redial the same number
//! after voicemail or a hold timeout, follow a referral, attribute a generic wrong number by the number's
//! source, at most three calls a step, a follow-up leg when a call asks for one), and the distribution of
//! how requests end.

use std::collections::BTreeMap;

use switchboard_storage::{Disposition, Environment, FailureRecord, NumberSource};

use super::*;
use crate::dialer::sandbox::dice::Dice;
use crate::orchestration::outcome::{attribute, failure, MAX_ATTEMPTS_PER_STEP};

/// How a step ended: succeeded (and whether it asked for the follow-up leg), or its failure.
async fn run_step(
    dialer: &SimulatedPayerDialer,
    schema: Arc<SchemaVersionRecord>,
    inputs: &BTreeMap<String, String>,
    step_index: usize,
    seed: u64,
) -> Result<bool, FailureRecord> {
    let (mut number, mut source) = ("8005550101".to_string(), NumberSource::Directory);
    for attempt in 1..=MAX_ATTEMPTS_PER_STEP {
        let call = CallJob {
            number: number.clone(),
            ..job(schema.clone(), inputs.clone(), step_index, attempt, seed)
        };
        let report = dialer.place(call).await;
        let last = attempt == MAX_ATTEMPTS_PER_STEP;
        match report.disposition {
            Disposition::Completed => {
                assert_well_formed(&schema, &report.captured);
                return Ok(report.follow_up_requested);
            }
            Disposition::Failed => {
                let failure = report.failure.expect("failure");
                return Err(attribute(failure, source, Environment::Production));
            }
            Disposition::Referred if !last => {
                number = report.referral_number.expect("referral number");
                source = NumberSource::Referral;
            }
            Disposition::Voicemail | Disposition::HoldTimeout if !last => {}
            _ => break,
        }
    }
    Err(failure(
        "SYSTEM_ERROR",
        "UNABLE_TO_REACH_HUMAN_IN_TIME",
        "retry budget spent",
    ))
}

/// How a request ended: `SUCCESS`, `PARTIAL` (the follow-up leg failed) or the primary step's failure code.
async fn run_request(
    dialer: &SimulatedPayerDialer,
    primary: Arc<SchemaVersionRecord>,
    inputs: &BTreeMap<String, String>,
    seed: u64,
) -> String {
    match run_step(dialer, primary.clone(), inputs, 0, seed).await {
        Err(failure) => format!("{}/{}", failure.category, failure.code),
        Ok(false) => "SUCCESS".to_string(),
        Ok(true) => match run_step(dialer, appeal_leg(), inputs, 1, seed).await {
            Ok(_) => "SUCCESS".to_string(),
            Err(_) => "PARTIAL".to_string(),
        },
    }
}

/// Varied request inputs for `payer`, fixed by `seed`: optional inputs present about half of the time.
fn varied_inputs(payer: &str, seed: u64) -> BTreeMap<String, String> {
    let dice = Dice::new(seed, &BTreeMap::new(), 9, 9);
    let mut inputs = inputs(payer, &[]);
    inputs.insert(
        "memberId".into(),
        format!(
            "{}{}",
            dice.choose("prefix", &["W", "ZGT", "XOT", "H"]),
            dice.digits("member", 9)
        ),
    );
    inputs.insert(
        "patientDateOfBirth".into(),
        format!(
            "19{}-0{}-1{}",
            40 + dice.pick("year", 60),
            1 + dice.pick("month", 9),
            dice.pick("day", 10)
        ),
    );
    for (key, value, percent) in [
        ("groupNumber", "GRP4411", 50),
        ("claimNumber", "26012345678901", 50),
        ("ptan", "AB1234", 70),
        ("callbackPhoneNumber", "6175550111", 50),
        ("cptCode", "99213", 50),
    ] {
        if dice.pick(key, 100) < percent {
            inputs.insert(key.to_string(), value.to_string());
        }
    }
    inputs
}

/// Request outcomes for `payer` over `seeds`, schemas alternating claim status, benefits, prior auth.
/// `extra` inputs are always supplied (what a payer's required inputs enforce at intake).
async fn distribution(payer: &str, seeds: u64, extra: &[(&str, &str)]) -> BTreeMap<String, u32> {
    let dialer = SimulatedPayerDialer::new();
    let mut counts = BTreeMap::new();
    for seed in 0..seeds {
        let schema = [claim_status(), vob(), prior_auth()][(seed % 3) as usize].clone();
        let mut inputs = varied_inputs(payer, seed);
        inputs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let end = run_request(&dialer, schema, &inputs, seed).await;
        *counts.entry(end).or_default() += 1;
    }
    counts
}

fn share(counts: &BTreeMap<String, u32>, key: &str) -> f64 {
    f64::from(counts.get(key).copied().unwrap_or(0)) / f64::from(counts.values().sum::<u32>())
}

#[tokio::test]
async fn most_requests_to_a_typical_payer_succeed_and_the_rest_fail_realistically() {
    let counts = distribution("Aetna", 300, &[]).await;
    let success = share(&counts, "SUCCESS");
    assert!((0.72..=0.90).contains(&success), "{counts:?}");
    let failures: Vec<&String> = counts.keys().filter(|k| k.contains('/')).collect();
    assert!(failures.len() >= 4, "failures are varied: {counts:?}");
    for failure in failures {
        let (category, code) = failure.split_once('/').unwrap();
        assert!(
            ["SYSTEM_ERROR", "NOT_FOUND"].contains(&category),
            "{failure}"
        );
        assert_ne!(
            code, "PHONE_NUMBER_INCORRECT",
            "the generic code is attributed"
        );
    }
}

#[tokio::test]
async fn a_wrong_referred_number_is_the_representatives_fault() {
    let profile = PayerProfile {
        referral_rate: 1.0,
        wrong_number_rate: 0.125,
        ..quiet()
    };
    let dialer = SimulatedPayerDialer::with_profile_override(profile);
    let mut by_code: BTreeMap<String, u32> = BTreeMap::new();
    for seed in 0..60 {
        if let Err(failure) = run_step(&dialer, vob(), &inputs("Aetna", &[]), 0, seed).await {
            let pair = (failure.category.as_str(), failure.code.as_str());
            // The directory number (first call) is the service's fault; the referred one the representative's.
            assert!(
                [
                    ("SYSTEM_ERROR", "MATCHED_PHONE_NUMBER_INCORRECT"),
                    ("NOT_FOUND", "REPRESENTATIVE_PHONE_NUMBER_INCORRECT")
                ]
                .contains(&pair),
                "{pair:?}"
            );
            *by_code.entry(failure.code.to_string()).or_default() += 1;
        }
    }
    let referred = by_code
        .get("REPRESENTATIVE_PHONE_NUMBER_INCORRECT")
        .copied()
        .unwrap_or(0);
    assert!(
        referred
            > by_code
                .get("MATCHED_PHONE_NUMBER_INCORRECT")
                .copied()
                .unwrap_or(0),
        "{by_code:?}"
    );
}

/// The distribution over 1000 seeds for a commercial carrier, a Medicare contractor and a Medicaid
/// program: `cargo test -p switchboard-actors simulated_distribution -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "prints a report; run by hand"]
async fn simulated_distribution() {
    let ptan: &[(&str, &str)] = &[("ptan", "AB1234")];
    for (payer, extra) in [
        ("Aetna", &[][..]),
        ("UnitedHealthcare", &[][..]),
        ("Medicare Part B - Novitas", &[][..]),
        ("Medicare Part B - Novitas", ptan),
        ("Texas Medicaid (TMHP)", &[][..]),
        ("Blue Cross Blue Shield of Texas", &[][..]),
        ("Acme Health Plan", &[][..]),
    ] {
        let counts = distribution(payer, 1000, extra).await;
        println!(
            "{payer} (always supplied: {extra:?}): {:?}",
            PayerProfile::for_payer(payer)
        );
        let mut rows: Vec<(&String, &u32)> = counts.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1));
        for (end, count) in rows {
            println!("  {end:<55} {count:>4}  {:>5.1}%", f64::from(*count) / 10.0);
        }
    }
}
