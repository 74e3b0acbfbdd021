//! From a Stedi answer to schema fields, as the schema's electronic mapping declares: which benefit entry
//! (EB01 code, coverage level, network indicator, time qualifier, service type) or which plan or
//! claim-status element fills each field, written in the field's type (dollar amounts as `1234.50`,
//! booleans as `true`/`false`, dates as `YYYY-MM-DD`). An AAA rejection fills nothing. A field the answer
//! does not carry, a value outside a field's allowed values, or a conditional field whose condition the
//! answer does not settle stays for the phone. Pure; unit-tested against the OpenAPI's examples.

use std::collections::BTreeMap;

use switchboard_storage::{
    AmountQualifier, BenefitKind, BenefitSource, CoverageQualifier, ElectronicSource, FieldRecord,
    NetworkQualifier, PlanElement, SchemaDefinition,
};

use super::bodies::{AaaError, BenefitsInformation, EligibilityResponse};
use super::claims::claim_property;
pub use super::claims::{map_claim_status, status_value, CLAIM_STATUS_VALUES};
pub use super::values::dollars;
use super::values::{percent, typed, typed_amount};

/// What an answer filled: values and, per field, the element behind it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mapped {
    /// Field name to value.
    pub captured: BTreeMap<String, String>,
    /// Field name to element, e.g. `EB C IND Y 29 STC 30`.
    pub sources: BTreeMap<String, String>,
}

/// The fields a 271 fills, or why it fills none (an AAA rejection).
pub fn map_eligibility(
    schema: &SchemaDefinition,
    response: &EligibilityResponse,
) -> Result<Mapped, String> {
    if let Some(error) = response.errors.first() {
        return Err(rejection(error));
    }
    let service_types = requested_service_types(schema);
    let mut mapped = Mapped::default();
    for field in &schema.fields {
        let found = match schema.electronic.fields.get(&field.name) {
            Some(ElectronicSource::Benefit(source)) => benefit_value(
                field,
                source,
                &response.benefits_information,
                &service_types,
            ),
            Some(ElectronicSource::Plan(element)) => plan_value(field, *element, response),
            _ => None,
        };
        if let Some((value, source)) = found {
            mapped.captured.insert(field.name.clone(), value);
            mapped.sources.insert(field.name.clone(), source);
        }
    }
    Ok(settle_conditions(schema, mapped))
}

/// A compact name of the element a mapping reads, for traces of answers that carry no element detail.
pub fn source_label(source: &ElectronicSource) -> String {
    match source {
        ElectronicSource::Benefit(b) => {
            let mut label = format!(
                "EB {} ({})",
                benefit_codes(b.benefit)[0],
                benefit_name(b.benefit)
            );
            for qualifier in [
                b.network.map(|n| match n {
                    NetworkQualifier::In => "in-network",
                    NetworkQualifier::Out => "out-of-network",
                }),
                b.coverage.map(|c| match c {
                    CoverageQualifier::Individual => "individual",
                    CoverageQualifier::Family => "family",
                }),
                b.amount.map(|a| match a {
                    AmountQualifier::Remaining => "remaining",
                    AmountQualifier::CalendarYear => "calendar year",
                    AmountQualifier::YearToDate => "year to date",
                }),
            ]
            .into_iter()
            .flatten()
            {
                label.push(' ');
                label.push_str(qualifier);
            }
            label
        }
        ElectronicSource::Plan(PlanElement::BeginDate) => "planDateInformation begin".to_owned(),
        ElectronicSource::Plan(PlanElement::EndDate) => "planDateInformation end".to_owned(),
        ElectronicSource::Claim(element) => format!("claimStatus.{}", claim_property(*element)),
    }
}

pub(super) fn rejection(error: &AaaError) -> String {
    format!(
        "rejected: AAA {} {}",
        error.code.as_deref().unwrap_or("?"),
        error.description.as_deref().unwrap_or_default()
    )
    .trim_end()
    .to_owned()
}

fn requested_service_types(schema: &SchemaDefinition) -> Vec<String> {
    match schema.electronic.service_type_codes.is_empty() {
        true => vec!["30".to_owned()],
        false => schema.electronic.service_type_codes.clone(),
    }
}

/// EB01 codes of a benefit kind; for active coverage the first four mean active, the rest inactive.
fn benefit_codes(kind: BenefitKind) -> &'static [&'static str] {
    match kind {
        BenefitKind::ActiveCoverage => &["1", "2", "3", "4", "5", "6", "7", "8"],
        BenefitKind::Deductible => &["C"],
        BenefitKind::OutOfPocket => &["G"],
        BenefitKind::Copay => &["B"],
        BenefitKind::Coinsurance => &["A"],
    }
}

fn benefit_name(kind: BenefitKind) -> &'static str {
    match kind {
        BenefitKind::ActiveCoverage => "active coverage",
        BenefitKind::Deductible => "deductible",
        BenefitKind::OutOfPocket => "out of pocket",
        BenefitKind::Copay => "co-payment",
        BenefitKind::Coinsurance => "co-insurance",
    }
}

/// The benefit entry a mapping selects and the field value it gives. Hard filters: code, coverage level,
/// time qualifier, network (`W`, "applies either way", counts for both). Among the rest, an entry for a
/// requested service type beats one for another, an exact network indicator beats `W`, and then the
/// payer's order decides.
fn benefit_value(
    field: &FieldRecord,
    source: &BenefitSource,
    benefits: &[BenefitsInformation],
    service_types: &[String],
) -> Option<(String, String)> {
    let codes = benefit_codes(source.benefit);
    let network = source.network.map(|n| match n {
        NetworkQualifier::In => "Y",
        NetworkQualifier::Out => "N",
    });
    let coverage: Option<&[&str]> = source.coverage.map(|c| match c {
        CoverageQualifier::Individual => &["IND", "EMP"][..],
        CoverageQualifier::Family => &["FAM"][..],
    });
    let time = source.amount.map(|a| match a {
        AmountQualifier::Remaining => "29",
        AmountQualifier::CalendarYear => "23",
        AmountQualifier::YearToDate => "24",
    });
    let candidates = benefits.iter().filter(|b| {
        b.code.as_deref().is_some_and(|c| codes.contains(&c))
            && coverage.is_none_or(|levels| {
                b.coverage_level_code
                    .as_deref()
                    .is_some_and(|l| levels.contains(&l))
            })
            && time.is_none_or(|t| b.time_qualifier_code.as_deref() == Some(t))
            && network.is_none_or(|n| {
                matches!(b.in_plan_network_indicator_code.as_deref(), Some(i) if i == n || i == "W")
            })
            && (source.benefit == BenefitKind::ActiveCoverage || has_value(b, source.benefit))
    });
    let best = candidates.min_by_key(|b| {
        let other_service = !b
            .service_type_codes
            .iter()
            .any(|s| service_types.contains(s));
        let loose_network =
            network.is_some() && b.in_plan_network_indicator_code.as_deref() == Some("W");
        (other_service, loose_network)
    })?;
    let value = match source.benefit {
        BenefitKind::ActiveCoverage => {
            let active = matches!(best.code.as_deref(), Some("1" | "2" | "3" | "4" | "5"));
            typed(field, &active.to_string())?
        }
        BenefitKind::Coinsurance => percent(field, best.benefit_percent.as_deref()?)?,
        _ => typed_amount(field, best.benefit_amount.as_deref()?)?,
    };
    Some((value, element_label(best)))
}

fn has_value(b: &BenefitsInformation, kind: BenefitKind) -> bool {
    match kind {
        BenefitKind::Coinsurance => b.benefit_percent.is_some(),
        _ => b.benefit_amount.is_some(),
    }
}

/// `EB C IND Y 29 STC 30`: code, coverage level, network, time qualifier, service types.
fn element_label(b: &BenefitsInformation) -> String {
    let part = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
    format!(
        "EB {} {} {} {} STC {}",
        part(&b.code),
        part(&b.coverage_level_code),
        part(&b.in_plan_network_indicator_code),
        part(&b.time_qualifier_code),
        b.service_type_codes.join(",")
    )
}

fn plan_value(
    field: &FieldRecord,
    element: PlanElement,
    response: &EligibilityResponse,
) -> Option<(String, String)> {
    let dates = response.plan_date_information.as_ref()?;
    let range = |r: &Option<String>, end: bool| {
        r.as_deref().and_then(|r| match r.split_once('-') {
            Some((begin, finish)) => Some(if end { finish } else { begin }.to_owned()),
            None => (!end).then(|| r.to_owned()),
        })
    };
    let (raw, property) = match element {
        PlanElement::BeginDate => dates
            .plan_begin
            .clone()
            .map(|d| (d, "planBegin"))
            .or_else(|| range(&dates.plan, false).map(|d| (d, "plan")))
            .or_else(|| {
                dates
                    .eligibility_begin
                    .clone()
                    .map(|d| (d, "eligibilityBegin"))
            })?,
        PlanElement::EndDate => dates
            .plan_end
            .clone()
            .map(|d| (d, "planEnd"))
            .or_else(|| range(&dates.plan, true).map(|d| (d, "plan")))?,
    };
    let raw = raw.split('-').next().unwrap_or_default();
    let date = chrono::NaiveDate::parse_from_str(raw, "%Y%m%d").ok()?;
    let value = typed(field, &date.format("%Y-%m-%d").to_string())?;
    Some((value, format!("planDateInformation.{property}")))
}

/// Drops conditional fields whose condition the answer does not settle: they are asked only when another
/// field has a given value, and only the phone can tell when that value is not known electronically.
pub(super) fn settle_conditions(schema: &SchemaDefinition, mut mapped: Mapped) -> Mapped {
    loop {
        let unsettled: Vec<String> = schema
            .fields
            .iter()
            .filter(|f| mapped.captured.contains_key(&f.name))
            .filter(|f| {
                f.when
                    .as_ref()
                    .is_some_and(|c| mapped.captured.get(&c.field) != Some(&c.equals))
            })
            .map(|f| f.name.clone())
            .collect();
        if unsettled.is_empty() {
            return mapped;
        }
        for name in unsettled {
            mapped.captured.remove(&name);
            mapped.sources.remove(&name);
        }
    }
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
