//! A claim-status answer (X12 277) mapped to schema fields: the claim the inquiry named, its status
//! category in Switchboard's claim-status vocabulary, and the amounts, dates and numbers it carries.

use switchboard_storage::{ClaimElement, ElectronicSource, FieldRecord, SchemaDefinition};

use super::bodies::{ClaimStatus, ClaimStatusResponse};
use super::mapping::{rejection, settle_conditions, Mapped};
use super::values::{typed, typed_amount};

/// The fields a 277 fills, or why it fills none (the payer's rejection or an error status). With several
/// claims, the one carrying the inquiry's claim number wins, else the first.
pub fn map_claim_status(
    schema: &SchemaDefinition,
    response: &ClaimStatusResponse,
    claim_number: Option<&str>,
) -> Result<Mapped, String> {
    if let Some(error) = response
        .error_response
        .as_ref()
        .and_then(|e| e.errors.first())
    {
        return Err(rejection(error));
    }
    let statuses: Vec<&ClaimStatus> = response
        .claims
        .iter()
        .filter_map(|c| c.claim_status.as_ref())
        .collect();
    let status = claim_number
        .and_then(|n| {
            statuses
                .iter()
                .find(|s| s.trading_partner_claim_number.as_deref() == Some(n))
        })
        .or(statuses.first())
        .ok_or_else(|| "answered without a claim".to_owned())?;
    let category = status.status_category_code.as_deref().unwrap_or_default();
    if category.starts_with('E') {
        return Err(format!(
            "payer could not respond (status category {category})"
        ));
    }
    // A claim the payer cannot find has a status and nothing else worth reporting.
    let found = !matches!(category, "D0" | "A4");
    let mut mapped = Mapped::default();
    for field in &schema.fields {
        let Some(ElectronicSource::Claim(element)) = schema.electronic.fields.get(&field.name)
        else {
            continue;
        };
        if !found && *element != ClaimElement::Status {
            continue;
        }
        if let Some((value, source)) = claim_value(field, *element, status) {
            mapped.captured.insert(field.name.clone(), value);
            mapped.sources.insert(field.name.clone(), source);
        }
    }
    Ok(settle_conditions(schema, mapped))
}

pub(super) fn claim_property(element: ClaimElement) -> &'static str {
    match element {
        ClaimElement::Status => "statusCategoryCode",
        ClaimElement::PaidAmount => "amountPaid",
        ClaimElement::PaidDate => "paidDate",
        ClaimElement::CheckNumber => "checkNumber",
        ClaimElement::CheckIssueDate => "checkIssueDate",
        ClaimElement::SubmittedAmount => "submittedAmount",
        ClaimElement::PayerClaimNumber => "tradingPartnerClaimNumber",
    }
}

fn claim_value(
    field: &FieldRecord,
    element: ClaimElement,
    status: &ClaimStatus,
) -> Option<(String, String)> {
    let label = format!("claimStatus.{}", claim_property(element));
    let value = match element {
        ClaimElement::Status => {
            let category = status.status_category_code.as_deref()?;
            let value = typed(field, status_value(category)?)?;
            return Some((value, format!("{label} {category}")));
        }
        ClaimElement::PaidAmount => typed_amount(field, status.amount_paid.as_deref()?)?,
        ClaimElement::SubmittedAmount => typed_amount(field, status.submitted_amount.as_deref()?)?,
        ClaimElement::PaidDate => typed(field, status.paid_date.as_deref()?)?,
        ClaimElement::CheckIssueDate => typed(field, status.check_issue_date.as_deref()?)?,
        ClaimElement::CheckNumber => typed(field, status.check_number.as_deref()?)?,
        ClaimElement::PayerClaimNumber => {
            typed(field, status.trading_partner_claim_number.as_deref()?)?
        }
    };
    Some((value, label))
}

/// Every value [`status_value`] can give: a `multiple` field mapped to the claim status must allow one.
pub const CLAIM_STATUS_VALUES: [&str; 6] = [
    "PAID",
    "DENIED",
    "PENDING",
    "IN_PROCESS",
    "RETURNED_TO_PROVIDER",
    "NOT_ON_FILE",
];

/// A claim status category (X12 code list 507) in Switchboard's claim-status vocabulary.
pub fn status_value(category: &str) -> Option<&'static str> {
    Some(match category {
        "F1" => "PAID",
        "F2" => "DENIED",
        "P0" | "P1" | "P2" | "P3" | "P4" | "P5" => "PENDING",
        "A0" | "A1" | "A2" | "A5" => "IN_PROCESS",
        "A3" | "A6" | "A7" | "A8" => "RETURNED_TO_PROVIDER",
        "A4" | "D0" => "NOT_ON_FILE",
        _ => return None,
    })
}
