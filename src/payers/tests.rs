//! Name variants against the demo directory: what each must resolve to, or that it must not resolve.

use super::*;
use crate::configuration::{self, Overrides};
use crate::provisioning::payer_record;

fn demo_directory() -> PayerDirectory {
    let settings = configuration::load(&Overrides::default()).unwrap();
    PayerDirectory::new(
        settings
            .payers
            .iter()
            .map(|spec| payer_record(spec.name.as_deref().unwrap(), spec))
            .collect(),
    )
}

#[test]
fn name_variants_resolve_to_the_right_payer() {
    let directory = demo_directory();
    let cases = [
        ("UnitedHealthcare", "UnitedHealthcare"),
        ("unitedhealthcare", "UnitedHealthcare"),
        ("UHC", "UnitedHealthcare"),
        ("uhc", "UnitedHealthcare"),
        ("United Healthcare", "UnitedHealthcare"),
        ("United Health Care", "UnitedHealthcare"),
        ("UNITED HEALTHCARE INC", "UnitedHealthcare"),
        ("United Healthcare, Inc.", "UnitedHealthcare"),
        ("Unitedhealthcare Co", "UnitedHealthcare"),
        ("Untied Healthcare", "UnitedHealthcare"),
        ("Aetna", "Aetna"),
        ("AETNA INC.", "Aetna"),
        ("Aetna, Inc", "Aetna"),
        ("The Aetna Company", "Aetna"),
        ("Aetan", "Aetna"),
        ("Cigna", "Cigna"),
        ("CIGNA Healthcare", "Cigna"),
        ("Cigna Health Care", "Cigna"),
        ("Humana Inc.", "Humana"),
        ("Kaiser", "Kaiser Permanente"),
        ("Permanente Kaiser", "Kaiser Permanente"),
        ("Molina", "Molina Healthcare"),
        ("Molina Health Care", "Molina Healthcare"),
        ("Well Care", "WellCare"),
        ("Oscar", "Oscar Health"),
        ("Health Oscar", "Oscar Health"),
        ("HealthNet", "Health Net"),
        ("Emblem", "EmblemHealth"),
        ("Harvard Pilgrim", "Harvard Pilgrim Health Care"),
        ("Care Source", "CareSource"),
        ("caresource", "CareSource"),
        ("Select Health", "SelectHealth"),
        ("Health Partners", "HealthPartners"),
        ("Government Employees Health Association", "GEHA"),
        ("BCBS TX", "Blue Cross Blue Shield of Texas"),
        ("BCBS Texas", "Blue Cross Blue Shield of Texas"),
        ("bcbstx", "Blue Cross Blue Shield of Texas"),
        (
            "Blue Cross Blue Shield of Texas",
            "Blue Cross Blue Shield of Texas",
        ),
        (
            "Blue Cross and Blue Shield of Texas",
            "Blue Cross Blue Shield of Texas",
        ),
        (
            "BlueCross BlueShield of Texas",
            "Blue Cross Blue Shield of Texas",
        ),
        (
            "Texas Blue Cross Blue Shield",
            "Blue Cross Blue Shield of Texas",
        ),
        (
            "BLUE CROSS BLUE SHIELD OF TEXAS INC",
            "Blue Cross Blue Shield of Texas",
        ),
        ("BCBS IL", "Blue Cross Blue Shield of Illinois"),
        (
            "Blue Cross Blue Shield Illinois",
            "Blue Cross Blue Shield of Illinois",
        ),
        ("BCBS of Michigan", "Blue Cross Blue Shield of Michigan"),
        ("BCBS MI", "Blue Cross Blue Shield of Michigan"),
        ("Florida Blue", "Florida Blue"),
        ("BCBS FL", "Florida Blue"),
        ("BCBS NC", "Blue Cross Blue Shield of North Carolina"),
        (
            "BCBS of North Carolina",
            "Blue Cross Blue Shield of North Carolina",
        ),
        ("BCBS TN", "BlueCross BlueShield of Tennessee"),
        (
            "Blue Cross Blue Shield of Tennessee",
            "BlueCross BlueShield of Tennessee",
        ),
        ("BCBS MA", "Blue Cross Blue Shield of Massachusetts"),
        (
            "Horizon BCBS of New Jersey",
            "Horizon Blue Cross Blue Shield of New Jersey",
        ),
        ("BCBS NJ", "Horizon Blue Cross Blue Shield of New Jersey"),
        ("Empire Blue Cross", "Empire Blue Cross Blue Shield"),
        ("Anthem", "Anthem Blue Cross Blue Shield"),
        ("Blue Shield of CA", "Blue Shield of California"),
        ("Independence Blue Cross", "Independence Blue Cross"),
        ("IBX", "Independence Blue Cross"),
        ("Premera", "Premera Blue Cross"),
        ("CareFirst BCBS", "CareFirst Blue Cross Blue Shield"),
        (
            "BCBS FEP",
            "Blue Cross Blue Shield Federal Employee Program",
        ),
        (
            "Federal Employee Program",
            "Blue Cross Blue Shield Federal Employee Program",
        ),
        ("Medicare", "CMS Medicare"),
        ("Original Medicare", "CMS Medicare"),
        ("Novitas", "Medicare Part B - Novitas"),
        ("Noridian Medicare", "Medicare Part B - Noridian"),
        ("Medi-Cal", "Medi-Cal"),
        ("MediCal", "Medi-Cal"),
        ("Texas Medicaid", "Texas Medicaid (TMHP)"),
        ("TMHP", "Texas Medicaid (TMHP)"),
        ("NY Medicaid", "New York Medicaid"),
        ("Medicaid New York", "New York Medicaid"),
        ("Tricare East", "TRICARE East Region"),
        ("TRICARE West Region", "TRICARE West Region"),
    ];
    let mut failures = Vec::new();
    for (query, expected) in cases {
        let found = directory.resolve(query, None).map(|m| m.payer.name.clone());
        if found.as_deref() != Some(expected) {
            failures.push(format!("{query:?} -> {found:?}, expected {expected:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn unknown_or_ambiguous_names_do_not_resolve() {
    let directory = demo_directory();
    let cases = [
        "Acme Health Insurance",
        "Zorblax Mutual",
        "",
        "   ",
        "Inc.",
        "Blue Cross",             // many plans: ambiguous without a member ID
        "Blue Cross Blue Shield", // likewise
        "BCBS",
        "Medicaid", // which state?
        "Tricare",  // which region?
        "United",
        "Health",
        "XYZ",
        "Aetna Better Health of Nowhere County Plus",
    ];
    let mut wrongly = Vec::new();
    for query in cases {
        if let Some(found) = directory.resolve(query, None) {
            wrongly.push(format!(
                "{query:?} -> {:?} ({:.2})",
                found.payer.name, found.confidence
            ));
        }
    }
    assert!(
        wrongly.is_empty(),
        "resolved but should not:\n{}",
        wrongly.join("\n")
    );
}

#[test]
fn a_member_id_prefix_steers_a_family_name_to_its_regional_plan() {
    let directory = demo_directory();
    let steer = |name: &str, member_id: &str| {
        directory
            .resolve(name, Some(member_id))
            .map(|m| (m.payer.name.clone(), m.via))
    };
    assert_eq!(
        steer("Blue Cross Blue Shield", "ZGT123456789"),
        Some((
            "Blue Cross Blue Shield of Texas".into(),
            MatchVia::MemberIdPrefix
        ))
    );
    assert_eq!(
        steer("BCBS", "xof987654321"),
        Some((
            "Blue Cross Blue Shield of Illinois".into(),
            MatchVia::MemberIdPrefix
        ))
    );
    // The prefix wins over the plan named: the member's home plan is the one to call.
    assert_eq!(
        steer("BCBS TX", "XYL123456789").map(|s| s.0),
        Some("Blue Cross Blue Shield of Michigan".into())
    );
    // An unknown prefix falls back to the name; a non-family name ignores the member ID.
    assert_eq!(
        steer("BCBS TX", "QQQ123456789"),
        Some(("Blue Cross Blue Shield of Texas".into(), MatchVia::Name))
    );
    assert_eq!(
        steer("Aetna", "ZGT123456789"),
        Some(("Aetna".into(), MatchVia::Name))
    );
    assert_eq!(steer("Blue Cross Blue Shield", "QQQ123"), None);
}
