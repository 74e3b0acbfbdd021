use std::collections::BTreeMap;

use switchboard_storage::{ClaimElement, ElectronicSource, SchemaDefinition};

use super::*;

fn schema(request_type: &str, mapped: &[(&str, ElectronicSource)]) -> SchemaDefinition {
    let electronic = switchboard_storage::ElectronicMapping {
        service_type_codes: vec![],
        fields: mapped
            .iter()
            .map(|(f, s)| (f.to_string(), s.clone()))
            .collect(),
    };
    SchemaDefinition {
        name: None,
        request_type: request_type.into(),
        required_inputs: vec![],
        optional_inputs: vec![],
        follow_up: None,
        fields: vec![],
        electronic,
    }
}

fn inputs(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut inputs: BTreeMap<String, String> = [
        ("payerName", "Aetna"),
        ("memberId", "W123456789"),
        ("patientFirstName", "Jane"),
        ("patientLastName", "Doe"),
        ("patientDateOfBirth", "03/14/1971"),
        ("billingProviderNpi", "1999999984"),
        ("dateOfService", "2026-10-02"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        inputs.insert(k.to_string(), v.to_string());
    }
    inputs
}

/// A day well after the inputs' date of service, so no window reaches it.
fn today() -> chrono::NaiveDate {
    chrono::NaiveDate::from_ymd_opt(2026, 12, 1).unwrap()
}

const STATUS: ElectronicSource = ElectronicSource::Claim(ClaimElement::Status);

#[test]
fn routing_follows_the_request_type_then_the_mapping() {
    assert_eq!(
        transaction_for(&schema("vob", &[("x", STATUS)])),
        Some(Transaction::Eligibility)
    );
    assert_eq!(
        transaction_for(&schema("claim-status", &[("x", STATUS)])),
        Some(Transaction::ClaimStatus)
    );
    assert_eq!(
        transaction_for(&schema("payment-check", &[("x", STATUS)])),
        Some(Transaction::ClaimStatus)
    );
    assert_eq!(transaction_for(&schema("vob", &[])), None, "nothing mapped");
}

#[test]
fn an_eligibility_inquiry_carries_every_input_in_stedi_shapes() {
    let built = build(
        Transaction::Eligibility,
        &schema("vob", &[("x", STATUS)]),
        &inputs(&[("groupNumber", "G-77")]),
        "60054",
        Some("Acme Clinic"),
        today(),
    )
    .unwrap();
    let Inquiry::Eligibility(request) = built else {
        panic!("not an eligibility check")
    };
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        serde_json::json!({
            "tradingPartnerServiceId": "60054",
            "provider": { "npi": "1999999984", "organizationName": "Acme Clinic" },
            "subscriber": {
                "memberId": "W123456789", "firstName": "Jane", "lastName": "Doe",
                "dateOfBirth": "19710314", "groupNumber": "G-77"
            },
            "encounter": { "dateOfService": "20261002", "serviceTypeCodes": ["30"] }
        })
    );
}

#[test]
fn a_claim_status_inquiry_names_the_billing_provider_the_dates_and_the_claim() {
    let built = build(
        Transaction::ClaimStatus,
        &schema("claim-status", &[("x", STATUS)]),
        &inputs(&[
            ("billingProviderName", "Input Clinic"),
            ("claimNumber", "CLM-1"),
            ("claimChargeAmount", "$1,250.50"),
            ("billingProviderTaxId", "12-3456789"),
            ("memberFirstName", "John"),
            ("memberLastName", "Doe"),
            ("memberDateOfBirth", "1970-01-01"),
        ]),
        "87726",
        Some("Account Clinic"),
        today(),
    )
    .unwrap();
    let Inquiry::ClaimStatus(request) = built else {
        panic!("not a claim status check")
    };
    assert_eq!(
        serde_json::to_value(&request).unwrap(),
        serde_json::json!({
            "tradingPartnerServiceId": "87726",
            "providers": [{
                "providerType": "BillingProvider", "npi": "1999999984",
                "organizationName": "Input Clinic", "taxId": "123456789"
            }],
            "subscriber": {
                "memberId": "W123456789", "firstName": "John", "lastName": "Doe",
                "dateOfBirth": "19700101"
            },
            "dependent": { "firstName": "Jane", "lastName": "Doe", "dateOfBirth": "19710314" },
            "encounter": {
                "beginningDateOfService": "20260925", "endDateOfService": "20261009",
                "tradingPartnerClaimNumber": "CLM-1", "submittedAmount": "1250.50"
            }
        })
    );
}

#[test]
fn inputs_the_clearinghouse_would_reject_send_nothing_and_say_which() {
    type Case<'a> = (&'a [(&'a str, &'a str)], Option<&'a str>, &'a [&'a str]);
    let cases: [Case; 4] = [
        (&[], None, &["provider.organizationName"]),
        (
            &[("billingProviderNpi", "12345")],
            Some("Clinic"),
            &["provider.npi"],
        ),
        (
            &[("memberId", "W1_2"), ("patientDateOfBirth", "soon")],
            Some("Clinic"),
            &["subscriber.dateOfBirth", "subscriber.memberId"],
        ),
        (
            &[("dateOfService", "2026-02-30")],
            Some("Clinic"),
            &["encounter.dateOfService"],
        ),
    ];
    for (extra, provider, expected) in cases {
        let err = build(
            Transaction::Eligibility,
            &schema("vob", &[("x", STATUS)]),
            &inputs(extra),
            "60054",
            provider,
            today(),
        )
        .unwrap_err();
        assert_eq!(err.0, expected, "{extra:?}");
    }
}

#[test]
fn a_claim_status_check_searches_a_week_each_side_of_the_date_of_service_never_past_today() {
    let day = |d: &str| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap();
    let sent = |extra: &[(&str, &str)], today: &str| {
        let built = build(
            Transaction::ClaimStatus,
            &schema("claim-status", &[("x", STATUS)]),
            &inputs(extra),
            "87726",
            Some("Clinic"),
            day(today),
        )
        .unwrap();
        let Inquiry::ClaimStatus(request) = built else {
            panic!("not a claim status check")
        };
        let body = serde_json::to_value(&request).unwrap();
        assert!(
            body.get("controlNumber").is_none(),
            "deprecated by Stedi: {body}"
        );
        (
            body["encounter"]["beginningDateOfService"]
                .as_str()
                .unwrap()
                .to_owned(),
            body["encounter"]["endDateOfService"]
                .as_str()
                .unwrap()
                .to_owned(),
        )
    };
    /// Extra inputs, today, the window sent, what the case shows.
    type Case<'a> = (
        &'a [(&'a str, &'a str)],
        &'a str,
        (&'a str, &'a str),
        &'a str,
    );
    let cases: [Case; 5] = [
        (
            &[],
            "2026-12-01",
            ("20260925", "20261009"),
            "a week on each side",
        ),
        (
            &[],
            "2026-10-05",
            ("20260925", "20261005"),
            "the end clamped at today",
        ),
        (
            &[],
            "2026-10-02",
            ("20260925", "20261002"),
            "a service of today",
        ),
        (
            &[("dateOfService", "2026-10-09")],
            "2026-10-02",
            ("20261002", "20261002"),
            "a date of service after today searches today alone",
        ),
        (
            &[
                ("beginningDateOfService", "2026-09-01"),
                ("endDateOfService", "2026-09-03"),
            ],
            "2026-12-01",
            ("20260901", "20260903"),
            "a range given in the inputs is kept",
        ),
    ];
    for (extra, today, (begin, end), what) in cases {
        assert_eq!(
            sent(extra, today),
            (begin.to_owned(), end.to_owned()),
            "{what}"
        );
    }
}
