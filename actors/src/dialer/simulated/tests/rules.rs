//! Profiles, families, the pure decision and missing inputs.

use std::collections::BTreeMap;

use super::*;
use decide::{chance, decide, missing_inputs, Outcome, Situation};

#[test]
fn payer_families_are_read_from_names_and_aliases() {
    use PayerFamily::*;
    let cases = [
        ("Medicare Part B - Novitas", MedicareContractor),
        ("Noridian", MedicareContractor),
        ("CMS Medicare", MedicareContractor),
        ("Original Medicare", MedicareContractor),
        ("First Coast Service Options", MedicareContractor),
        ("Texas Medicaid (TMHP)", Medicaid),
        ("Medi-Cal", Medicaid),
        ("MediCal", Medicaid),
        ("Pennsylvania Medical Assistance", Medicaid),
        ("Blue Cross Blue Shield of Texas", BlueCrossBlueShield),
        ("BCBSTX", BlueCrossBlueShield),
        ("Florida Blue", BlueCrossBlueShield),
        ("Anthem Blue Cross (California)", BlueCrossBlueShield),
        ("UnitedHealthcare", NationalCarrier),
        ("UHC", NationalCarrier),
        ("United Health Care", NationalCarrier),
        ("Humana Medicare", NationalCarrier),
        ("aetna", NationalCarrier),
        ("Molina Healthcare", ManagedCare),
        ("Wellcare Medicare", ManagedCare),
        ("Medical Mutual of Ohio", Regional),
        ("Harvard Pilgrim Health Care", Regional),
        ("TRICARE For Life WPS", Military),
        ("Humana Military", Military),
        ("Acme Health Plan", Unknown),
        ("", Unknown),
    ];
    for (name, family) in cases {
        assert_eq!(PayerFamily::of(name), family, "{name}");
    }
}

#[test]
fn profiles_are_deterministic_and_vary_a_little_per_payer() {
    assert_eq!(
        PayerProfile::for_payer("Aetna"),
        PayerProfile::for_payer("  AETNA ")
    );
    let (texas, illinois) = (
        PayerProfile::for_payer("Blue Cross Blue Shield of Texas"),
        PayerProfile::for_payer("Blue Cross Blue Shield of Illinois"),
    );
    assert_ne!(texas, illinois);
    let base = PayerProfile::baseline(PayerFamily::BlueCrossBlueShield);
    for profile in [texas, illinois] {
        let within = |value: f64, of: f64| (of * 0.85 - 1e-9..=of * 1.15 + 1e-9).contains(&value);
        assert!(
            within(profile.referral_rate, base.referral_rate),
            "{profile:?}"
        );
        assert!(
            within(profile.hold_minutes_median, base.hold_minutes_median),
            "{profile:?}"
        );
        assert!(
            within(profile.ivr_failure_rate, base.ivr_failure_rate),
            "{profile:?}"
        );
    }
    let blue = PayerProfile::baseline(PayerFamily::BlueCrossBlueShield);
    let national = PayerProfile::baseline(PayerFamily::NationalCarrier);
    let medicaid = PayerProfile::baseline(PayerFamily::Medicaid);
    let medicare = PayerProfile::baseline(PayerFamily::MedicareContractor);
    assert!(
        blue.referral_rate > 2.0 * national.referral_rate,
        "Blue plans refer to the home plan"
    );
    assert!(
        medicaid.ivr_failure_rate > 2.0 * national.ivr_failure_rate,
        "Medicaid lines are IVR-heavy"
    );
    assert!(
        medicare.missing_input_rate > 5.0 * national.missing_input_rate,
        "MACs insist on the PTAN"
    );
    assert_eq!(
        SimulatedPayerDialer::new().profile_for(None),
        PayerProfile::baseline(PayerFamily::Unknown)
    );
}

#[test]
fn the_decision_is_a_pure_function_of_profile_situation_and_dice() {
    let situation = Situation {
        referral_allowed: true,
        not_found: decide::not_found_codes("vob"),
        ..Situation::default()
    };
    for seed in 0..200 {
        let d = dice(seed);
        assert_eq!(decide(&quiet(), &situation, &d), Outcome::Completed);
        let always = |profile| decide(&profile, &situation, &d);
        assert_eq!(
            always(PayerProfile {
                refusal_rate: 1.0,
                ..quiet()
            }),
            Outcome::Refusal
        );
        assert_eq!(
            always(PayerProfile {
                ivr_failure_rate: 1.0,
                ..quiet()
            }),
            Outcome::IvrFailure
        );
        assert_eq!(
            always(PayerProfile {
                voicemail_rate: 1.0,
                ..quiet()
            }),
            Outcome::Voicemail
        );
        assert_eq!(
            always(PayerProfile {
                hold_timeout_rate: 1.0,
                ..quiet()
            }),
            Outcome::HoldTimeout
        );
        assert_eq!(
            always(PayerProfile {
                referral_rate: 1.0,
                ..quiet()
            }),
            Outcome::Referred
        );
        assert_eq!(
            always(PayerProfile {
                wrong_number_rate: 1.0,
                ..quiet()
            }),
            Outcome::WrongNumber
        );
        let not_found = always(PayerProfile {
            not_found_rate: 1.0,
            ..quiet()
        });
        assert!(matches!(
            not_found,
            Outcome::NotFound("MEMBER_NOT_FOUND" | "PROVIDER_NOT_FOUND")
        ));
        let no_referral = Situation {
            referral_allowed: false,
            ..situation.clone()
        };
        let referral = PayerProfile {
            referral_rate: 1.0,
            ..quiet()
        };
        assert_eq!(decide(&referral, &no_referral, &d), Outcome::Completed);
        let missing = Situation {
            missing: vec![("PROVIDER_PTAN_MISSING", 1.0)],
            ..situation.clone()
        };
        assert_eq!(
            decide(&quiet(), &missing, &d),
            Outcome::MissingInput("PROVIDER_PTAN_MISSING")
        );
        assert_eq!(
            decide(&busy_profile(), &situation, &d),
            decide(&busy_profile(), &situation, &d)
        );
    }
    assert!(
        !chance(&dice(1), "x", 0.0)
            && chance(&dice(1), "x", 1.0)
            && !chance(&dice(1), "x", f64::NAN)
    );
}

fn busy_profile() -> PayerProfile {
    PayerProfile {
        refusal_rate: 0.3,
        not_found_rate: 0.3,
        referral_rate: 0.3,
        ..quiet()
    }
}

#[test]
fn missing_input_codes_are_raised_only_for_absent_inputs() {
    use PayerFamily::*;
    let with = |pairs: &[(&str, &str)]| inputs("x", pairs);
    let codes = |family, kind, inputs: &BTreeMap<String, String>| -> Vec<&'static str> {
        missing_inputs(family, kind, inputs, 0.5)
            .into_iter()
            .map(|(c, _)| c)
            .collect()
    };
    assert!(codes(MedicareContractor, "vob", &with(&[])).contains(&"PROVIDER_PTAN_MISSING"));
    assert!(
        !codes(MedicareContractor, "vob", &with(&[("ptan", "AB1234")]))
            .contains(&"PROVIDER_PTAN_MISSING")
    );
    assert!(
        !codes(MedicareContractor, "vob", &with(&[("ptan", "  ")])).is_empty(),
        "blank is absent"
    );
    assert!(codes(NationalCarrier, "vob", &with(&[])).contains(&"MEMBER_GROUP_MISSING"));
    assert!(!codes(NationalCarrier, "vob", &with(&[])).contains(&"PROVIDER_PTAN_MISSING"));
    assert!(!codes(NationalCarrier, "vob", &with(&[])).contains(&"CLAIM_NUMBER_MISSING"));
    assert!(codes(NationalCarrier, "claim-status", &with(&[])).contains(&"CLAIM_NUMBER_MISSING"));
    assert!(!codes(
        NationalCarrier,
        "claim-status",
        &with(&[("claimNumber", "C1")])
    )
    .contains(&"CLAIM_NUMBER_MISSING"));
    let medicare = missing_inputs(MedicareContractor, "claim-status", &with(&[]), 0.6);
    assert!(
        medicare.contains(&("PROVIDER_PTAN_MISSING", 0.6)),
        "the family's own input at full rate"
    );
    assert!(
        medicare
            .iter()
            .all(|(c, p)| *c == "PROVIDER_PTAN_MISSING" || *p <= 0.04),
        "{medicare:?}"
    );

    // Placed calls agree: with every input present nothing is missing; without the PTAN a Medicare line
    // often insists on it.
    let dialer = SimulatedPayerDialer::new();
    let full = [
        ("ptan", "AB1234"),
        ("groupNumber", "G1"),
        ("claimNumber", "C1"),
        ("callbackPhoneNumber", "6175550100"),
    ];
    let mut raised = 0;
    for seed in 0..300 {
        let payer = "Medicare Part B - Novitas";
        let present = job(claim_status(), inputs(payer, &full), 0, 1, seed);
        let report = dialer.simulate(&present);
        assert!(
            report
                .failure
                .is_none_or(|f| !f.code.as_str().ends_with("_MISSING")),
            "seed {seed}"
        );
        let absent = job(
            claim_status(),
            inputs(payer, &[("claimNumber", "C1")]),
            0,
            1,
            seed,
        );
        let report = dialer.simulate(&absent);
        if let Some(failure) = report
            .failure
            .filter(|f| f.code.as_str().ends_with("_MISSING"))
        {
            assert_eq!(
                (failure.code.as_str(), failure.category.as_str()),
                ("PROVIDER_PTAN_MISSING", "NOT_FOUND")
            );
            assert!(report.transcript.unwrap().contains("ptan"));
            raised += 1;
        }
    }
    assert!(raised > 100, "strict Medicare lines: {raised}/300");
}
