//! The mapping against answers shaped like the examples of Stedi's OpenAPI (`EligibilityCheck_example1`,
//! `EligibilityCheck_example2`, `ClaimStatus_example1` to `3`), trimmed to the entries that matter.

use serde_json::json;
use switchboard_storage::{
    AmountQualifier as A, BenefitKind as B, BenefitSource, ClaimElement as C, CoverageQualifier,
    ElectronicMapping, ElectronicSource, FieldCondition, FieldRecord, FieldType, NetworkQualifier,
    PlanElement, SchemaDefinition,
};

use super::*;
use crate::electronic::stedi::bodies::ClaimStatusResponse;

fn field(name: &str, field_type: FieldType) -> FieldRecord {
    FieldRecord {
        name: name.into(),
        label: name.into(),
        description: String::new(),
        field_type,
        allowed_values: (field_type == FieldType::Multiple).then(|| {
            ["PAID", "DENIED", "PENDING", "NOT_ON_FILE"]
                .map(String::from)
                .to_vec()
        }),
        required: false,
        when: None,
    }
}

fn benefit(
    benefit: B,
    network: Option<NetworkQualifier>,
    coverage: Option<CoverageQualifier>,
    amount: Option<A>,
) -> ElectronicSource {
    ElectronicSource::Benefit(BenefitSource {
        benefit,
        network,
        coverage,
        amount,
    })
}

fn schema(fields: Vec<(FieldRecord, ElectronicSource)>) -> SchemaDefinition {
    SchemaDefinition {
        name: None,
        request_type: "vob".into(),
        required_inputs: vec![],
        optional_inputs: vec![],
        follow_up: None,
        electronic: ElectronicMapping {
            service_type_codes: vec![],
            fields: fields
                .iter()
                .map(|(f, s)| (f.name.clone(), s.clone()))
                .collect(),
        },
        fields: fields.into_iter().map(|(f, _)| f).collect(),
    }
}

fn eb(
    code: &str,
    level: &str,
    network: &str,
    time: &str,
    stc: &str,
    amount: &str,
) -> serde_json::Value {
    let mut entry = json!({
        "code": code, "serviceTypeCodes": [stc], "inPlanNetworkIndicatorCode": network
    });
    if !level.is_empty() {
        entry["coverageLevelCode"] = json!(level);
    }
    if !time.is_empty() {
        entry["timeQualifierCode"] = json!(time);
    }
    if let Some(percent) = amount.strip_prefix('%') {
        entry["benefitPercent"] = json!(percent);
    } else if !amount.is_empty() {
        entry["benefitAmount"] = json!(amount);
    }
    entry
}

fn example_271() -> EligibilityResponse {
    serde_json::from_value(json!({
        "id": "ec_019f4829-fecb-7b60-86a9-6c900ad94bfb",
        "controlNumber": "345459952",
        "errors": [],
        "planDateInformation": { "plan": "20240101-20241231" },
        "benefitsInformation": [
            eb("1", "", "W", "", "30", ""),
            eb("C", "FAM", "Y", "23", "30", "0"),
            eb("C", "FAM", "W", "24", "30", "3200"),
            eb("C", "FAM", "Y", "29", "30", "0"),
            eb("G", "FAM", "Y", "29", "30", "1294.84"),
            eb("G", "FAM", "N", "29", "30", "9944.84"),
            eb("C", "FAM", "N", "29", "30", "1800"),
            eb("C", "IND", "Y", "23", "A6", "500"),
            eb("C", "IND", "Y", "23", "30", "750.5"),
            eb("A", "IND", "N", "27", "A6", "%.4"),
            eb("A", "IND", "Y", "27", "A6", "%.2"),
            eb("B", "IND", "Y", "27", "A6", "25"),
        ]
    }))
    .unwrap()
}

#[test]
fn benefits_are_chosen_by_code_and_qualifiers_and_written_in_the_fields_type() {
    use CoverageQualifier::*;
    use NetworkQualifier::*;
    let schema = schema(vec![
        (
            field("active", FieldType::Boolean),
            benefit(B::ActiveCoverage, None, None, None),
        ),
        (
            field("famDedRemainingOut", FieldType::Dollar),
            benefit(B::Deductible, Some(Out), Some(Family), Some(A::Remaining)),
        ),
        (
            field("famOopRemainingIn", FieldType::Dollar),
            benefit(B::OutOfPocket, Some(In), Some(Family), Some(A::Remaining)),
        ),
        (
            field("famDedYtdIn", FieldType::Dollar),
            benefit(B::Deductible, Some(In), Some(Family), Some(A::YearToDate)),
        ),
        (
            field("indDedCalendar", FieldType::Dollar),
            benefit(
                B::Deductible,
                Some(In),
                Some(Individual),
                Some(A::CalendarYear),
            ),
        ),
        (
            field("coinsurance", FieldType::Alphanumeric),
            benefit(B::Coinsurance, Some(In), None, None),
        ),
        (
            field("copay", FieldType::Dollar),
            benefit(B::Copay, Some(In), None, None),
        ),
        (
            field("oopIndividual", FieldType::Dollar),
            benefit(B::OutOfPocket, None, Some(Individual), None),
        ),
        (
            field("planBegins", FieldType::Date),
            ElectronicSource::Plan(PlanElement::BeginDate),
        ),
        (
            field("planEnds", FieldType::Date),
            ElectronicSource::Plan(PlanElement::EndDate),
        ),
    ]);
    let mapped = map_eligibility(&schema, &example_271()).unwrap();
    let expected = [
        ("active", "true", "EB 1 - W - STC 30"),
        ("famDedRemainingOut", "1800.00", "EB C FAM N 29 STC 30"),
        ("famOopRemainingIn", "1294.84", "EB G FAM Y 29 STC 30"),
        // No exact in-network year-to-date entry: the one that applies either way (W) answers.
        ("famDedYtdIn", "3200.00", "EB C FAM W 24 STC 30"),
        // The requested service type (30) beats an earlier entry for another one (A6).
        ("indDedCalendar", "750.50", "EB C IND Y 23 STC 30"),
        ("coinsurance", "20%", "EB A IND Y 27 STC A6"),
        ("copay", "25.00", "EB B IND Y 27 STC A6"),
        ("planBegins", "2024-01-01", "planDateInformation.plan"),
        ("planEnds", "2024-12-31", "planDateInformation.plan"),
    ];
    for (name, value, source) in expected {
        assert_eq!(
            mapped.captured.get(name).map(String::as_str),
            Some(value),
            "{name}"
        );
        assert_eq!(
            mapped.sources.get(name).map(String::as_str),
            Some(source),
            "{name}"
        );
    }
    assert!(
        !mapped.captured.contains_key("oopIndividual"),
        "no individual out-of-pocket entry: the phone asks"
    );
}

#[test]
fn inactive_coverage_is_false_and_an_aaa_rejection_fills_nothing() {
    let schema = schema(vec![(
        field("active", FieldType::Boolean),
        benefit(B::ActiveCoverage, None, None, None),
    )]);
    let inactive: EligibilityResponse = serde_json::from_value(json!({
        "benefitsInformation": [{ "code": "6", "serviceTypeCodes": ["30"] }]
    }))
    .unwrap();
    assert_eq!(
        map_eligibility(&schema, &inactive).unwrap().captured["active"],
        "false"
    );
    // EligibilityCheck_example2: the provider name the payer has on file differs.
    let rejected: EligibilityResponse = serde_json::from_value(json!({
        "controlNumber": "000647813",
        "errors": [{
            "code": "44", "description": "Invalid/Missing Provider Name", "field": "AAA",
            "followupAction": "Please Correct and Resubmit", "location": "Loop 2100B"
        }],
        "benefitsInformation": [{ "code": "1", "serviceTypeCodes": ["30"] }]
    }))
    .unwrap();
    assert_eq!(
        map_eligibility(&schema, &rejected).unwrap_err(),
        "rejected: AAA 44 Invalid/Missing Provider Name"
    );
}

fn claim_schema() -> SchemaDefinition {
    let paid_only = |mut f: FieldRecord| {
        f.when = Some(FieldCondition {
            field: "claimStatus".into(),
            equals: "PAID".into(),
        });
        f
    };
    schema(vec![
        (
            field("claimStatus", FieldType::Multiple),
            ElectronicSource::Claim(C::Status),
        ),
        (
            paid_only(field("paidAmount", FieldType::Dollar)),
            ElectronicSource::Claim(C::PaidAmount),
        ),
        (
            paid_only(field("paymentDate", FieldType::Date)),
            ElectronicSource::Claim(C::CheckIssueDate),
        ),
        (
            paid_only(field("checkNumber", FieldType::Alphanumeric)),
            ElectronicSource::Claim(C::CheckNumber),
        ),
        (
            field("processedDate", FieldType::Date),
            ElectronicSource::Claim(C::PaidDate),
        ),
        (
            field("billedAmount", FieldType::Dollar),
            ElectronicSource::Claim(C::SubmittedAmount),
        ),
        (
            field("payerClaimNumber", FieldType::Alphanumeric),
            ElectronicSource::Claim(C::PayerClaimNumber),
        ),
    ])
}

fn claim(status: serde_json::Value) -> ClaimStatusResponse {
    serde_json::from_value(json!({
        "controlNumber": "123456789",
        "meta": { "traceId": "01JDQV00485EPP4D6BD8GM1SWM" },
        "claims": [{ "claimStatus": status }]
    }))
    .unwrap()
}

#[test]
fn a_paid_claim_fills_status_amounts_dates_and_the_check() {
    let paid = claim(json!({
        "amountPaid": "108.77", "checkIssueDate": "2025-07-17", "checkNumber": "123456789",
        "paidDate": "2025-07-15", "statusCategoryCode": "F1", "statusCode": "65",
        "submittedAmount": "267.54", "tradingPartnerClaimNumber": "0123456789"
    }));
    let mapped = map_claim_status(&claim_schema(), &paid, None).unwrap();
    let values: Vec<(&str, &str)> = mapped
        .captured
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            ("billedAmount", "267.54"),
            ("checkNumber", "123456789"),
            ("claimStatus", "PAID"),
            ("paidAmount", "108.77"),
            ("payerClaimNumber", "0123456789"),
            ("paymentDate", "2025-07-17"),
            ("processedDate", "2025-07-15"),
        ]
    );
    assert_eq!(
        mapped.sources["claimStatus"],
        "claimStatus.statusCategoryCode F1"
    );
    assert_eq!(mapped.sources["paidAmount"], "claimStatus.amountPaid");
}

#[test]
fn a_denied_claim_leaves_the_paid_only_fields_and_a_missing_claim_fills_only_its_status() {
    let denied = claim(json!({
        "amountPaid": "0", "checkIssueDate": "2025-08-14", "checkNumber": "123456789",
        "paidDate": "2025-08-09", "statusCategoryCode": "F2", "statusCode": "585",
        "submittedAmount": "1101", "tradingPartnerClaimNumber": "123456789"
    }));
    let mapped = map_claim_status(&claim_schema(), &denied, None).unwrap();
    assert_eq!(mapped.captured["claimStatus"], "DENIED");
    assert!(
        !mapped.captured.contains_key("paidAmount") && !mapped.captured.contains_key("checkNumber")
    );
    assert_eq!(mapped.captured["billedAmount"], "1101.00");
    let missing = claim(json!({
        "amountPaid": "0", "claimServiceDate": "20250526-20250601", "statusCategoryCode": "D0",
        "statusCode": "97", "submittedAmount": "0"
    }));
    let mapped = map_claim_status(&claim_schema(), &missing, None).unwrap();
    assert_eq!(
        mapped.captured,
        [("claimStatus".to_string(), "NOT_ON_FILE".to_string())].into()
    );
    let error = claim(json!({ "statusCategoryCode": "E1" }));
    assert!(map_claim_status(&claim_schema(), &error, None).is_err());
}

#[test]
fn amounts_round_to_the_cent_and_unknown_statuses_stay_for_the_phone() {
    assert_eq!(dollars("3200").as_deref(), Some("3200.00"));
    assert_eq!(dollars(".5").as_deref(), Some("0.50"));
    assert_eq!(dollars("5555.165").as_deref(), Some("5555.17"));
    assert_eq!(dollars("-3"), None);
    assert_eq!(dollars("abc"), None);
    assert_eq!(status_value("F4"), None);
    assert_eq!(status_value("P1"), Some("PENDING"));
}
