//! The simulator's electronic channel: only electronic payers answer, only with what a 271 or 277 carries,
//! and a schema's declared mapping decides which fields those are.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use switchboard_storage::{
    BenefitKind, BenefitSource, ClaimElement, ElectronicSource, FieldCondition, FieldRecord,
    FieldType, SchemaDefinition, SchemaVersionRecord,
};

use super::simulated::SimulatedElectronic;
use super::{ElectronicChannel, ElectronicJob};

fn field(name: &str, field_type: FieldType, required: bool) -> FieldRecord {
    FieldRecord {
        name: name.to_string(),
        label: name.to_string(),
        description: format!("What is the {name}?"),
        field_type,
        allowed_values: (field_type == FieldType::Multiple)
            .then(|| vec!["PAID".to_string(), "DENIED".to_string()]),
        required,
        when: None,
    }
}

fn schema(request_type: &str, fields: Vec<FieldRecord>) -> Arc<SchemaVersionRecord> {
    Arc::new(SchemaVersionRecord {
        id: format!("{request_type}-basic"),
        version: 1,
        published_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        definition: SchemaDefinition {
            name: None,
            request_type: request_type.to_string(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: None,
            fields,
            electronic: Default::default(),
        },
    })
}

fn vob() -> Arc<SchemaVersionRecord> {
    use FieldType::*;
    schema(
        "vob",
        vec![
            field("planActive", Boolean, true),
            field("planType", Multiple, false),
            field("individualDeductible", Dollar, false),
            field("copayAmount", Dollar, false),
            field("providerInNetwork", Boolean, true),
            field("callReferenceNumber", Alphanumeric, true),
        ],
    )
}

fn claim_status() -> Arc<SchemaVersionRecord> {
    use FieldType::*;
    let mut paid = field("paidAmount", Dollar, false);
    paid.when = Some(FieldCondition {
        field: "claimStatus".into(),
        equals: "PAID".into(),
    });
    schema(
        "claim-status",
        vec![
            field("claimStatus", Multiple, true),
            field("billedAmount", Dollar, false),
            paid,
            field("callReferenceNumber", Alphanumeric, true),
        ],
    )
}

fn job(schema: Arc<SchemaVersionRecord>, payer_electronic: bool, seed: u64) -> ElectronicJob {
    ElectronicJob {
        request_id: format!("req-{seed}").into(),
        schema,
        inputs: BTreeMap::from([("payerName".to_string(), "Aetna".to_string())]),
        payer_electronic,
        electronic_payer_id: Some("60054".into()),
        provider_name: None,
        seed,
        today: chrono::NaiveDate::from_ymd_opt(2026, 3, 2).unwrap(),
    }
}

#[tokio::test]
async fn the_electronic_channel_answers_only_electronic_payers_with_what_a_response_carries() {
    let channel = SimulatedElectronic;
    let (mut vob_answers, mut claim_answers) = (0, 0);
    for seed in 0..100 {
        for schema in [vob(), claim_status(), schema("prior-auth", vec![])] {
            let offline = channel.inquire(job(schema, false, seed)).await;
            assert!(offline.captured.is_empty());
        }
        let benefits = channel.inquire(job(vob(), true, seed)).await;
        assert_eq!(benefits, channel.inquire(job(vob(), true, seed)).await);
        if !benefits.captured.is_empty() {
            vob_answers += 1;
            let keys: Vec<&str> = benefits.captured.keys().map(String::as_str).collect();
            assert!(keys.contains(&"planActive"), "{keys:?}");
            assert!(
                !keys.contains(&"callReferenceNumber") && !keys.contains(&"providerInNetwork"),
                "{keys:?}"
            );
            assert_eq!(benefits.sources["planActive"], "simulated 271");
        }
        let claim = channel.inquire(job(claim_status(), true, seed)).await;
        if !claim.captured.is_empty() {
            claim_answers += 1;
            assert!(claim.captured.contains_key("claimStatus"));
            assert_eq!(
                claim.captured.contains_key("paidAmount"),
                claim.captured["claimStatus"] == "PAID",
                "{claim:?}"
            );
        }
    }
    assert!(vob_answers > 75, "{vob_answers}");
    assert!((25..90).contains(&claim_answers), "{claim_answers}");
}

#[tokio::test]
async fn a_declared_mapping_decides_which_fields_the_simulated_answer_fills() {
    let mut mapped = (*vob()).clone();
    mapped.definition.electronic.fields = BTreeMap::from([
        (
            "planActive".to_string(),
            ElectronicSource::Benefit(BenefitSource {
                benefit: BenefitKind::ActiveCoverage,
                network: None,
                coverage: None,
                amount: None,
            }),
        ),
        (
            "copayAmount".to_string(),
            ElectronicSource::Benefit(BenefitSource {
                benefit: BenefitKind::Copay,
                network: None,
                coverage: None,
                amount: None,
            }),
        ),
    ]);
    let mapped = Arc::new(mapped);
    let mut answered = 0;
    for seed in 0..50 {
        let answer = SimulatedElectronic
            .inquire(job(Arc::clone(&mapped), true, seed))
            .await;
        if answer.captured.is_empty() {
            continue;
        }
        answered += 1;
        assert!(answer
            .captured
            .keys()
            .all(|k| k == "planActive" || k == "copayAmount"));
        assert_eq!(answer.sources["planActive"], "EB 1 (active coverage)");
    }
    assert!(answered > 30, "{answered}");
    // A claim mapping on a custom request type routes to the claim-status transaction.
    let mut custom = (*claim_status()).clone();
    custom.definition.request_type = "payment-check".into();
    custom.definition.electronic.fields = BTreeMap::from([(
        "claimStatus".to_string(),
        ElectronicSource::Claim(ClaimElement::Status),
    )]);
    let custom = Arc::new(custom);
    let any = futures::future::join_all(
        (0..20).map(|seed| SimulatedElectronic.inquire(job(Arc::clone(&custom), true, seed))),
    )
    .await;
    assert!(any
        .iter()
        .any(|a| a.captured.keys().eq(["claimStatus"].iter())));
}
