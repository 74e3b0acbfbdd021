//! How a schema's fields are filled from a clearinghouse answer: which benefit of an eligibility response
//! (X12 271), which plan element, or which claim-status element (X12 277) feeds which field. Declared with
//! the schema and stored in its version record, so a request runs on the mapping it was pinned to.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The electronic side of a schema: service types to ask about and the field mapping.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ElectronicMapping {
    /// X12 service type codes an eligibility inquiry asks about (`30`, health benefit plan coverage, when
    /// empty).
    #[serde(default)]
    pub service_type_codes: Vec<String>,
    /// Schema field name to the part of the answer that fills it.
    #[serde(default)]
    pub fields: BTreeMap<String, ElectronicSource>,
}

impl ElectronicMapping {
    /// Whether nothing is mapped (and no service type is set).
    pub fn is_empty(&self) -> bool {
        self.service_type_codes.is_empty() && self.fields.is_empty()
    }
}

/// The part of a clearinghouse answer that fills one field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElectronicSource {
    /// One entry of an eligibility response's benefits, chosen by kind and qualifiers.
    Benefit(BenefitSource),
    /// A plan-level element of an eligibility response.
    Plan(PlanElement),
    /// An element of a claim-status response.
    Claim(ClaimElement),
}

/// Which benefit entry fills a field, and with which qualifiers. An absent qualifier matches any value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenefitSource {
    /// The benefit (X12 EB01).
    pub benefit: BenefitKind,
    /// In or out of network (EB12).
    pub network: Option<NetworkQualifier>,
    /// Individual or family (EB02).
    pub coverage: Option<CoverageQualifier>,
    /// Which amount of the benefit (EB06).
    pub amount: Option<AmountQualifier>,
}

/// Benefit kinds a field can be mapped to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenefitKind {
    /// Active (`1`-`5`) or inactive (`6`-`8`) coverage: a boolean.
    ActiveCoverage,
    /// `C`, deductible: a dollar amount.
    Deductible,
    /// `G`, out of pocket (stop loss): a dollar amount.
    OutOfPocket,
    /// `B`, co-payment: a dollar amount.
    Copay,
    /// `A`, co-insurance: a percentage.
    Coinsurance,
}

/// `inPlanNetworkIndicatorCode` qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkQualifier {
    /// `Y`.
    In,
    /// `N`.
    Out,
}

/// `coverageLevelCode` qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoverageQualifier {
    /// `IND` (or `EMP`, employee only).
    Individual,
    /// `FAM`.
    Family,
}

/// `timeQualifierCode` qualifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AmountQualifier {
    /// `29`, what is left.
    Remaining,
    /// `23`, the amount for the calendar year.
    CalendarYear,
    /// `24`, met so far this year.
    YearToDate,
}

/// Plan-level elements of an eligibility response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanElement {
    /// `planDateInformation` begin date.
    BeginDate,
    /// `planDateInformation` end date.
    EndDate,
}

/// Elements of a claim-status response (`claims[].claimStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimElement {
    /// `statusCategoryCode`, as one of the field's allowed values.
    Status,
    /// `amountPaid`.
    PaidAmount,
    /// `paidDate` (the date of the payer's decision).
    PaidDate,
    /// `checkNumber` (check or EFT trace number).
    CheckNumber,
    /// `checkIssueDate`.
    CheckIssueDate,
    /// `submittedAmount`.
    SubmittedAmount,
    /// `tradingPartnerClaimNumber`.
    PayerClaimNumber,
}
