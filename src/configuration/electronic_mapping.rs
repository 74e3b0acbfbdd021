//! The electronic mapping of a schema declaration, as written in `[[schemas]]` and the admin API's schema
//! bodies: `electronic_service_types` on the schema and `electronic` on a field, e.g.
//! `electronic = { benefit = "deductible", network = "in", coverage = "individual", amount = "remaining" }`,
//! `electronic = { plan = "begin_date" }` or `electronic = { claim = "status" }`. Checked strictly: one
//! source per field, qualifiers only on benefits, a value type the element can fill, one transaction per
//! schema.

use serde::Deserialize;
use switchboard_actors::electronic::stedi::mapping::CLAIM_STATUS_VALUES;
use switchboard_storage::{
    AmountQualifier, BenefitKind, BenefitSource, ClaimElement, CoverageQualifier, ElectronicSource,
    FieldType, NetworkQualifier, PlanElement,
};

use super::specs::SpecError;

/// A field's `electronic` key.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElectronicFieldSpec {
    /// `active_coverage`, `deductible`, `out_of_pocket`, `copay` or `coinsurance`.
    pub benefit: Option<BenefitKind>,
    /// `in` or `out` of network.
    pub network: Option<NetworkQualifier>,
    /// `individual` or `family`.
    pub coverage: Option<CoverageQualifier>,
    /// `remaining`, `calendar_year` or `year_to_date`.
    pub amount: Option<AmountQualifier>,
    /// `begin_date` or `end_date` of the plan.
    pub plan: Option<PlanElement>,
    /// `status`, `paid_amount`, `paid_date`, `check_number`, `check_issue_date`, `submitted_amount` or
    /// `payer_claim_number`.
    pub claim: Option<ClaimElement>,
}

impl ElectronicFieldSpec {
    /// The stored source, once the declaration is checked against the field's type and allowed values.
    pub fn source(
        &self,
        field_type: FieldType,
        allowed_values: Option<&[String]>,
    ) -> Result<ElectronicSource, SpecError> {
        let qualified = self.network.is_some() || self.coverage.is_some() || self.amount.is_some();
        let source = match (self.benefit, self.plan, self.claim) {
            (Some(benefit), None, None) => {
                if benefit == BenefitKind::ActiveCoverage && qualified {
                    return Err(SpecError::new(
                        "electronic",
                        "active_coverage takes no network, coverage or amount qualifier",
                    ));
                }
                ElectronicSource::Benefit(BenefitSource {
                    benefit,
                    network: self.network,
                    coverage: self.coverage,
                    amount: self.amount,
                })
            }
            (None, Some(plan), None) if !qualified => ElectronicSource::Plan(plan),
            (None, None, Some(claim)) if !qualified => ElectronicSource::Claim(claim),
            (None, _, _) | (_, _, Some(_)) | (_, Some(_), _) if qualified => {
                return Err(SpecError::new(
                    "electronic",
                    "network, coverage and amount qualify a benefit only",
                ))
            }
            _ => {
                return Err(SpecError::new(
                    "electronic",
                    "name exactly one of benefit, plan or claim",
                ))
            }
        };
        check_type(&source, field_type, allowed_values)?;
        Ok(source)
    }
}

/// Whether the element can fill a field of this type.
fn check_type(
    source: &ElectronicSource,
    field_type: FieldType,
    allowed_values: Option<&[String]>,
) -> Result<(), SpecError> {
    use FieldType::*;
    let (fits, expected): (bool, &str) = match source {
        ElectronicSource::Benefit(b) => match b.benefit {
            BenefitKind::ActiveCoverage => (field_type == Boolean, "boolean"),
            BenefitKind::Coinsurance => (field_type == Alphanumeric, "alphanumeric (a percentage)"),
            _ => (
                matches!(field_type, Dollar | Alphanumeric),
                "dollar or alphanumeric",
            ),
        },
        ElectronicSource::Plan(_) => (field_type == Date, "date"),
        ElectronicSource::Claim(element) => match element {
            ClaimElement::Status => {
                let speaks = allowed_values
                    .is_some_and(|v| v.iter().any(|a| CLAIM_STATUS_VALUES.contains(&a.as_str())));
                if field_type == Multiple && !speaks {
                    return Err(SpecError::new(
                        "electronic",
                        format!(
                            "a claim status fills only the allowed values {}; none is allowed here",
                            CLAIM_STATUS_VALUES.join(", ")
                        ),
                    ));
                }
                (field_type == Multiple, "multiple")
            }
            ClaimElement::PaidAmount | ClaimElement::SubmittedAmount => (
                matches!(field_type, Dollar | Alphanumeric),
                "dollar or alphanumeric",
            ),
            ClaimElement::PaidDate | ClaimElement::CheckIssueDate => (field_type == Date, "date"),
            ClaimElement::CheckNumber | ClaimElement::PayerClaimNumber => {
                (field_type == Alphanumeric, "alphanumeric")
            }
        },
    };
    if fits {
        Ok(())
    } else {
        Err(SpecError::new(
            "electronic",
            format!(
                "this element fills a {expected} field, not a {} field",
                field_type.as_str()
            ),
        ))
    }
}

/// `electronic_service_types`: X12 service type codes, one or two letters or digits each.
pub fn validate_service_types(codes: &[String]) -> Result<(), SpecError> {
    for (i, code) in codes.iter().enumerate() {
        let valid = (1..=2).contains(&code.len())
            && code
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase());
        if !valid {
            return Err(SpecError::new(
                format!("electronic_service_types[{i}]"),
                format!("{code:?} is not an X12 service type code such as \"30\" or \"MH\""),
            ));
        }
    }
    Ok(())
}

/// One transaction per schema: eligibility elements (benefit, plan) and claim-status elements never mix.
pub fn validate_one_transaction<'a>(
    sources: impl Iterator<Item = (usize, &'a ElectronicSource)>,
) -> Result<(), SpecError> {
    let mut first: Option<bool> = None;
    for (i, source) in sources {
        let claim = matches!(source, ElectronicSource::Claim(_));
        match first {
            None => first = Some(claim),
            Some(kind) if kind != claim => {
                return Err(SpecError::new(
                    format!("fields[{i}].electronic"),
                    "a schema maps either eligibility elements (benefit, plan) or claim-status \
                     elements (claim), not both",
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::configuration::specs::SchemaSpec;

    fn schema(fields: &str) -> Result<(), String> {
        let text = format!("id = \"s\"\nrequest_type = \"vob\"\n{fields}");
        toml::from_str::<SchemaSpec>(&text)
            .map_err(|e| e.message().to_owned())?
            .validate()
            .map_err(|e| e.to_string())
    }

    fn field(field_type: &str, extra: &str, electronic: &str) -> String {
        format!(
            "[[fields]]\nname = \"f\"\nlabel = \"F\"\ndescription = \"?\"\ntype = \"{field_type}\"\n{extra}\nelectronic = {electronic}\n"
        )
    }

    #[test]
    fn well_formed_mappings_validate() {
        for (field_type, extra, electronic) in [
            ("boolean", "", "{ benefit = \"active_coverage\" }"),
            (
                "dollar",
                "",
                "{ benefit = \"deductible\", network = \"in\", coverage = \"family\", amount = \"remaining\" }",
            ),
            ("alphanumeric", "", "{ benefit = \"coinsurance\", network = \"out\" }"),
            ("date", "", "{ plan = \"begin_date\" }"),
            (
                "multiple",
                "allowed_values = [\"PAID\", \"LOST\"]",
                "{ claim = \"status\" }",
            ),
            ("dollar", "", "{ claim = \"paid_amount\" }"),
        ] {
            schema(&field(field_type, extra, electronic))
                .unwrap_or_else(|e| panic!("{electronic}: {e}"));
        }
        schema("electronic_service_types = [\"30\", \"MH\"]\n[[fields]]\nname = \"f\"\nlabel = \"F\"\ndescription = \"?\"\ntype = \"boolean\"").unwrap();
    }

    #[test]
    fn mistakes_name_the_field_and_the_problem() {
        let cases = [
            ("boolean", "", "{ benefit = \"deductible\" }", "fields[0].electronic: this element fills a dollar or alphanumeric field, not a boolean field"),
            ("boolean", "", "{ benefit = \"active_coverage\", network = \"in\" }", "fields[0].electronic: active_coverage takes no network, coverage or amount qualifier"),
            ("date", "", "{ plan = \"begin_date\", coverage = \"family\" }", "fields[0].electronic: network, coverage and amount qualify a benefit only"),
            ("date", "", "{ }", "fields[0].electronic: name exactly one of benefit, plan or claim"),
            ("date", "", "{ plan = \"end_date\", claim = \"paid_date\" }", "fields[0].electronic: name exactly one of benefit, plan or claim"),
            ("multiple", "allowed_values = [\"YES\"]", "{ claim = \"status\" }", "fields[0].electronic: a claim status fills only the allowed values PAID, DENIED, PENDING, IN_PROCESS, RETURNED_TO_PROVIDER, NOT_ON_FILE; none is allowed here"),
        ];
        for (field_type, extra, electronic, expected) in cases {
            assert_eq!(
                schema(&field(field_type, extra, electronic)).unwrap_err(),
                expected,
                "{electronic}"
            );
        }
        let unknown = schema(&field("dollar", "", "{ benefit = \"dental\" }")).unwrap_err();
        assert!(unknown.contains("unknown variant `dental`"), "{unknown}");
        let typo = schema(&field(
            "dollar",
            "",
            "{ benefit = \"copay\", netwrk = \"in\" }",
        ))
        .unwrap_err();
        assert!(typo.contains("unknown field `netwrk`"), "{typo}");
        assert_eq!(
            schema("electronic_service_types = [\"health\"]\n[[fields]]\nname = \"f\"\nlabel = \"F\"\ndescription = \"?\"\ntype = \"boolean\"").unwrap_err(),
            "electronic_service_types[0]: \"health\" is not an X12 service type code such as \"30\" or \"MH\""
        );
        let mixed = format!(
            "{}{}",
            field("boolean", "", "{ benefit = \"active_coverage\" }"),
            field("date", "", "{ claim = \"paid_date\" }").replace("name = \"f\"", "name = \"g\"")
        );
        assert!(schema(&mixed)
            .unwrap_err()
            .starts_with("fields[1].electronic: a schema maps either"));
    }
}
