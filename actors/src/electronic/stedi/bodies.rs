//! Stedi's JSON bodies, named as its OpenAPI names them (`healthcare.json` of `Stedi/openApi`): the
//! eligibility check (`EligibilityCheckRequestContent` / `...ResponseContent`, X12 270/271), the claim
//! status check (`ClaimStatusRequestContent` / `...ResponseContent`, 276/277) and the error body of the
//! 4xx/5xx answers. Responses keep only what the mapping reads; unknown properties are ignored.

use serde::{Deserialize, Serialize};

/// `POST /change/medicalnetwork/eligibility/v3` request. No `controlNumber`: Stedi deprecated it on its JSON
/// endpoints (it makes the X12 interchange's own and ignores the field).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EligibilityRequest {
    /// The payer id.
    pub trading_partner_service_id: String,
    /// The requesting provider.
    pub provider: Provider,
    /// The policy holder.
    pub subscriber: Person,
    /// The patient, when not the subscriber (at most one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependents: Vec<Person>,
    /// Dates and service types asked about.
    pub encounter: EligibilityEncounter,
}

/// `Provider` of an eligibility check.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Provider {
    /// Ten digits.
    pub npi: String,
    /// The provider's business name.
    pub organization_name: String,
}

/// `RequestSubscriber`, `RequestDependent`, `ClaimStatusSubscriber` and the claim-status `Member`: the
/// properties Switchboard fills.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Person {
    /// Member id (subscribers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member_id: Option<String>,
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// `YYYYMMDD`.
    pub date_of_birth: String,
    /// Group number, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_number: Option<String>,
}

/// `Encounter` of an eligibility check.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EligibilityEncounter {
    /// `YYYYMMDD`; the payer assumes today when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_of_service: Option<String>,
    /// X12 service type codes.
    pub service_type_codes: Vec<String>,
}

/// `POST /change/medicalnetwork/claimstatus/v2` request. No `controlNumber`: Stedi's OpenAPI marks it
/// deprecated for this endpoint (Stedi makes its own and ignores one sent).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatusRequest {
    /// The payer id.
    pub trading_partner_service_id: String,
    /// Exactly one billing provider.
    pub providers: Vec<StatusRequestProvider>,
    /// The policy holder.
    pub subscriber: Person,
    /// The patient, when not the subscriber.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependent: Option<Person>,
    /// Dates of service and what identifies the claim.
    pub encounter: ClaimStatusEncounter,
}

/// `StatusRequestProvider`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusRequestProvider {
    /// `BillingProvider`.
    pub provider_type: &'static str,
    /// Ten digits.
    pub npi: String,
    /// The provider's organization name.
    pub organization_name: String,
    /// Nine digits, when the inputs carry the billing provider's tax id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tax_id: Option<String>,
}

/// `ClaimStatusEncounter`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatusEncounter {
    /// `YYYYMMDD`.
    pub beginning_date_of_service: String,
    /// `YYYYMMDD`.
    pub end_date_of_service: String,
    /// The payer's claim number, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trading_partner_claim_number: Option<String>,
    /// Total charges of the claim, as a decimal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub submitted_amount: Option<String>,
}

/// `EligibilityCheckResponseContent`: what the mapping reads.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EligibilityResponse {
    /// `ec_<uuid>`, unique across Stedi.
    pub id: Option<String>,
    /// The payer's control number.
    pub control_number: Option<String>,
    /// Benefit entries (EB segments).
    #[serde(default)]
    pub benefits_information: Vec<BenefitsInformation>,
    /// Plan dates.
    pub plan_date_information: Option<PlanDateInformation>,
    /// AAA rejections, bubbled up from every loop.
    #[serde(default)]
    pub errors: Vec<AaaError>,
    /// Tracking data.
    pub meta: Option<Meta>,
}

/// `BenefitsInformation`: one EB segment.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BenefitsInformation {
    /// EB01.
    pub code: Option<String>,
    /// EB02.
    pub coverage_level_code: Option<String>,
    /// EB03.
    #[serde(default)]
    pub service_type_codes: Vec<String>,
    /// EB06.
    pub time_qualifier_code: Option<String>,
    /// EB07, a decimal.
    pub benefit_amount: Option<String>,
    /// EB08, a fraction (`.2` is 20 %).
    pub benefit_percent: Option<String>,
    /// EB12.
    pub in_plan_network_indicator_code: Option<String>,
}

/// `PlanDateInformation`: `YYYYMMDD` or `YYYYMMDD-YYYYMMDD`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDateInformation {
    /// Plan effective dates.
    pub plan: Option<String>,
    /// Coverage begins.
    pub plan_begin: Option<String>,
    /// Coverage ends.
    pub plan_end: Option<String>,
    /// Eligibility begins.
    pub eligibility_begin: Option<String>,
}

/// `EligibilityCheckError` (and claim status `ErrorDetail`): an AAA rejection.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AaaError {
    /// The reject reason code, e.g. `75`.
    pub code: Option<String>,
    /// Its description.
    pub description: Option<String>,
    /// `AAA`.
    pub field: Option<String>,
    /// Follow-up action.
    pub followup_action: Option<String>,
}

/// `EligibilityMetaDataJSON` / `ClaimStatusResponseMeta`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// The id Stedi assigns to the check.
    pub outbound_trace_id: Option<String>,
    /// The payer's (or Stedi's) trace id.
    pub trace_id: Option<String>,
}

/// `ClaimStatusResponseContent`: what the mapping reads.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatusResponse {
    /// The payer's control number.
    pub control_number: Option<String>,
    /// Claims matching the inquiry.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// The payer's rejection.
    pub error_response: Option<ErrorResponse>,
    /// Tracking data.
    pub meta: Option<Meta>,
}

/// `Claim`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// Status of the whole claim.
    pub claim_status: Option<ClaimStatus>,
}

/// `ComponentsSchemasClaimStatus`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimStatus {
    /// STC01-1, e.g. `F1`.
    pub status_category_code: Option<String>,
    /// STC01-2.
    pub status_code: Option<String>,
    /// Decimal.
    pub amount_paid: Option<String>,
    /// Decimal.
    pub submitted_amount: Option<String>,
    /// `YYYY-MM-DD`: the payer's decision.
    pub paid_date: Option<String>,
    /// `YYYY-MM-DD`.
    pub check_issue_date: Option<String>,
    /// Check or EFT trace number.
    pub check_number: Option<String>,
    /// The payer's claim number.
    pub trading_partner_claim_number: Option<String>,
}

/// `ErrorResponse` of a claim status check.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorResponse {
    /// Error details.
    #[serde(default)]
    pub errors: Vec<AaaError>,
}

/// The body of a 4xx/5xx answer (`ValidationException`, `ThrottlingException`, ...): `message` and `code`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ExceptionBody {
    /// Human-readable message.
    #[serde(default)]
    pub message: String,
    /// Classification code.
    pub code: Option<String>,
}
