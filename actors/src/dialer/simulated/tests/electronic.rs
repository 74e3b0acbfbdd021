//! The electronic channel.

use super::*;

fn electronic_job(
    schema: Arc<SchemaVersionRecord>,
    payer_electronic: bool,
    seed: u64,
) -> ElectronicJob {
    ElectronicJob {
        request_id: format!("req-{seed}"),
        schema,
        inputs: inputs("Aetna", &[]),
        payer_electronic,
        seed,
    }
}

#[tokio::test]
async fn the_electronic_channel_answers_only_electronic_payers_with_what_a_response_carries() {
    let dialer = SimulatedPayerDialer::new();
    let eligibility = [
        "planActive",
        "planType",
        "effectiveDate",
        "individualDeductible",
        "individualDeductibleMet",
        "outOfPocketMax",
        "copayAmount",
        "coinsurancePercent",
    ];
    let (mut vob_answers, mut claim_answers) = (0, 0);
    for seed in 0..100 {
        for schema in [vob(), claim_status(), prior_auth()] {
            let offline = dialer
                .electronic(electronic_job(schema.clone(), false, seed))
                .await;
            assert!(offline.is_empty());
        }
        let benefits = dialer.electronic(electronic_job(vob(), true, seed)).await;
        assert_eq!(
            benefits,
            dialer.electronic(electronic_job(vob(), true, seed)).await
        );
        if !benefits.is_empty() {
            vob_answers += 1;
            assert!(
                benefits.contains_key("planActive"),
                "the required field it carries: {benefits:?}"
            );
            assert!(
                benefits.keys().all(|k| eligibility.contains(&k.as_str())),
                "{benefits:?}"
            );
            assert!(
                !benefits.contains_key("callReferenceNumber")
                    && !benefits.contains_key("providerInNetwork")
            );
        }
        let claim = dialer
            .electronic(electronic_job(claim_status(), true, seed))
            .await;
        if !claim.is_empty() {
            claim_answers += 1;
            assert!(claim.contains_key("claimStatus"), "{claim:?}");
            let allowed = [
                "claimStatus",
                "claimReceivedDate",
                "billedAmount",
                "paidAmount",
                "paymentDate",
            ];
            assert!(
                claim.keys().all(|k| allowed.contains(&k.as_str())),
                "{claim:?}"
            );
            assert_eq!(
                claim.contains_key("paidAmount"),
                claim["claimStatus"] == "PAID",
                "{claim:?}"
            );
        }
        assert!(dialer
            .electronic(electronic_job(prior_auth(), true, seed))
            .await
            .is_empty());
    }
    assert!(vob_answers > 75, "{vob_answers}");
    assert!((25..90).contains(&claim_answers), "{claim_answers}");
}
