//! Which sandbox flow a request asked for (`inputs.sandboxScenario`, operator contract section 4) and the
//! fixed failure-code table of service-interface section 7.3 that `failure:CODE` reports through.

use std::collections::BTreeMap;

use switchboard_storage::{FailureCategory, FailureCode, FailureRecord};

/// The input key that names the scenario.
pub const SCENARIO_INPUT: &str = "sandboxScenario";

/// The scenario named by `inputs.sandboxScenario` (absent or unknown: [`Scenario::Success`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// `success`: one call that captures every required field.
    Success,
    /// `redial`: the first attempt of a step reaches voicemail or times out on hold; the next completes.
    Redial,
    /// `follow_up`: the primary step completes and so does the follow-up leg.
    FollowUp,
    /// `partial`: the primary step completes, the follow-up leg fails (payer refusal).
    Partial,
    /// `failure:CODE`: the primary step fails with that code (upper-cased).
    Failure(FailureCode),
    /// `cannot_answer`: as `success`, but one required field holds `CANNOT ANSWER - <reason>`.
    CannotAnswer,
    /// `digital`: the electronic channel fills every field the schema maps to an electronic answer.
    Digital,
    /// `digital_plus_phone`: the electronic channel fills part of the mapped required fields, a call the rest.
    DigitalPlusPhone,
    /// `stuck`: the call never ends.
    Stuck,
    /// `fault:call_panic`: every call's future panics when polled.
    CallPanic,
    /// `fault:call_panic_once`: calls panic until the request has been restarted once, then succeed.
    CallPanicOnce,
}

impl Scenario {
    /// The scenario of a request's inputs. Names are matched trimmed and case-insensitively.
    pub fn from_inputs(inputs: &BTreeMap<String, String>) -> Scenario {
        let Some(raw) = inputs.get(SCENARIO_INPUT) else {
            return Scenario::Success;
        };
        let name = raw.trim();
        let lower = name.to_ascii_lowercase();
        if let Some(code) = lower.strip_prefix("failure:") {
            return Scenario::Failure(code.trim().to_ascii_uppercase().into());
        }
        match lower.as_str() {
            "redial" => Scenario::Redial,
            "follow_up" => Scenario::FollowUp,
            "partial" => Scenario::Partial,
            "cannot_answer" => Scenario::CannotAnswer,
            "digital" => Scenario::Digital,
            "digital_plus_phone" => Scenario::DigitalPlusPhone,
            "stuck" => Scenario::Stuck,
            "fault:call_panic" => Scenario::CallPanic,
            "fault:call_panic_once" => Scenario::CallPanicOnce,
            _ => Scenario::Success,
        }
    }
}

/// `SYSTEM_ERROR` codes and their messages.
const SYSTEM_ERROR_CODES: [(FailureCode, &str); 6] = [
    (
        FailureCode::IvrFailure,
        "Could not navigate the payer's phone system to a representative.",
    ),
    (
        FailureCode::PayerRefusal,
        "The representative refused to provide the information.",
    ),
    (
        FailureCode::UnableToReachHumanInTime,
        "No representative was reached within the retry budget.",
    ),
    (
        FailureCode::RequiresOtherChannel,
        "The payer requires a channel the service does not support (portal, fax or email).",
    ),
    (
        FailureCode::MatchedPhoneNumberIncorrect,
        "The phone number found by the payer lookup was incorrect.",
    ),
    (
        FailureCode::Other,
        "The call failed for a reason with no more specific code.",
    ),
];

/// `NOT_FOUND` entity codes, with the entity the payer could not find.
const ENTITY_CODES: [(FailureCode, &str); 5] = [
    (FailureCode::MemberNotFound, "member"),
    (FailureCode::ProviderNotFound, "provider"),
    (FailureCode::ClaimNotFound, "claim"),
    (FailureCode::PriorAuthNotFound, "prior authorization"),
    (FailureCode::AppealNotFound, "appeal"),
];

/// `NOT_FOUND` missing-input codes.
const MISSING_INPUT_CODES: [FailureCode; 19] = [
    FailureCode::ClaimNumberMissing,
    FailureCode::ClaimAuthorizationNumberMissing,
    FailureCode::ClaimCptProcedureCodeMissing,
    FailureCode::ClaimDateOfServiceMissing,
    FailureCode::ClaimDiagnosisMissing,
    FailureCode::ClaimEftCheckNumberMissing,
    FailureCode::MemberGroupMissing,
    FailureCode::MemberPatientLocationMissing,
    FailureCode::MemberPatientPhoneMissing,
    FailureCode::MemberPayerSpecificPatientIdMissing,
    FailureCode::MemberPolicyNumberMissing,
    FailureCode::MemberSsnMissing,
    FailureCode::ProviderCallbackNumberMissing,
    FailureCode::ProviderFacilityInfoMissing,
    FailureCode::ProviderFacilityLocationMissing,
    FailureCode::ProviderFaxMissing,
    FailureCode::ProviderOtherLicensingMissing,
    FailureCode::ProviderPtanMissing,
    FailureCode::ProviderSpecialtyMissing,
];

/// `NOT_FOUND` incorrect-input codes, plus the generic `PHONE_NUMBER_INCORRECT`, reported here under
/// `NOT_FOUND`: the step, which knows where the dialed number came from, moves it to `SYSTEM_ERROR` when
/// Switchboard looked the number up (`orchestration::outcome::attribute`).
const INCORRECT_INPUT_CODES: [FailureCode; 56] = [
    FailureCode::ApplicationIdIncorrect,
    FailureCode::ApplicationSubmissionMethodIncorrect,
    FailureCode::ApplicationSubmittedDateIncorrect,
    FailureCode::ApplicationSubmittedToIncorrect,
    FailureCode::BeginningDateOfServiceIncorrect,
    FailureCode::BillingProviderAddressIncorrect,
    FailureCode::BillingProviderNameIncorrect,
    FailureCode::BillingProviderNpiIncorrect,
    FailureCode::BillingProviderTaxIdIncorrect,
    FailureCode::CallbackNumberIncorrect,
    FailureCode::ClaimChargeAmountIncorrect,
    FailureCode::ClaimSubmittedDateIncorrect,
    FailureCode::ClearinghouseClaimIdIncorrect,
    FailureCode::ClearinghouseNameIncorrect,
    FailureCode::EndDateOfServiceIncorrect,
    FailureCode::FacilityNpiIncorrect,
    FailureCode::FaxNumberIncorrect,
    FailureCode::GroupNumberIncorrect,
    FailureCode::InputPhoneNumberIncorrect,
    FailureCode::InternalClaimIdIncorrect,
    FailureCode::InternalIdIncorrect,
    FailureCode::InternalProviderIdIncorrect,
    FailureCode::InternalTagIncorrect,
    FailureCode::IsPrimaryPolicyIncorrect,
    FailureCode::MedicationNameIncorrect,
    FailureCode::MemberAddressIncorrect,
    FailureCode::MemberDateOfBirthIncorrect,
    FailureCode::MemberFirstNameIncorrect,
    FailureCode::MemberIdIncorrect,
    FailureCode::MemberLastNameIncorrect,
    FailureCode::OfficeNpiIncorrect,
    FailureCode::PatientAddressIncorrect,
    FailureCode::PatientDateOfBirthIncorrect,
    FailureCode::PatientFirstNameIncorrect,
    FailureCode::PatientLastNameIncorrect,
    FailureCode::PatientPhoneNumberIncorrect,
    FailureCode::PatientRelationshipToMemberIncorrect,
    FailureCode::PayerClaimIdIncorrect,
    FailureCode::PayerNameIncorrect,
    FailureCode::PharmacyNameIncorrect,
    FailureCode::PracticeNpiIncorrect,
    FailureCode::PriorAuthIdIncorrect,
    FailureCode::ProviderSpecialtyIncorrect,
    FailureCode::ProviderTypeIncorrect,
    FailureCode::PtanIncorrect,
    FailureCode::RenderingProviderAddressIncorrect,
    FailureCode::RenderingProviderFirstNameIncorrect,
    FailureCode::RenderingProviderLastNameIncorrect,
    FailureCode::RenderingProviderNpiIncorrect,
    FailureCode::RenderingProviderPhoneNumberIncorrect,
    FailureCode::RenderingProviderSpecialtyIncorrect,
    FailureCode::RepresentativePhoneNumberIncorrect,
    FailureCode::ServiceStateIncorrect,
    FailureCode::TaxIdIncorrect,
    FailureCode::ProviderAddressIncorrect,
    FailureCode::PhoneNumberIncorrect,
];

/// How a failure code is classified; the dialogue of a failed call follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FailureKind {
    /// The payer could not find this entity.
    EntityNotFound(&'static str),
    /// The payer needed an input that was not supplied.
    MissingInput,
    /// An input did not match the payer's records.
    IncorrectInput,
    /// A `SYSTEM_ERROR` code (including `OTHER` and unknown codes).
    System,
}

/// The kind of a code, by the fixed table (never by pattern: codes are not built from field names).
pub(super) fn failure_kind(code: &FailureCode) -> FailureKind {
    if let Some((_, entity)) = ENTITY_CODES.iter().find(|(c, _)| c == code) {
        FailureKind::EntityNotFound(entity)
    } else if MISSING_INPUT_CODES.contains(code) {
        FailureKind::MissingInput
    } else if INCORRECT_INPUT_CODES.contains(code) {
        FailureKind::IncorrectInput
    } else {
        FailureKind::System
    }
}

/// `CLAIM_DATE_OF_SERVICE_MISSING` without its suffix, as words: "claim date of service".
pub(super) fn code_subject(code: &FailureCode, suffix: &str) -> String {
    let code = code.as_str();
    code.strip_suffix(suffix)
        .unwrap_or(code)
        .to_ascii_lowercase()
        .replace('_', " ")
}

/// Category, code and message of a failure code per service-interface 7.3: entity, missing-input and
/// incorrect-input codes are `NOT_FOUND`; `SYSTEM_ERROR` codes (and `OTHER`) are `SYSTEM_ERROR`; a code the
/// table does not know becomes `SYSTEM_ERROR`/`OTHER`.
pub fn failure_for_code(code: &FailureCode) -> FailureRecord {
    let not_found =
        |message: String| FailureRecord::new(FailureCategory::NotFound, code.clone(), message);
    match failure_kind(code) {
        FailureKind::EntityNotFound(entity) => not_found(format!(
            "The payer could not find the {entity} in its records."
        )),
        FailureKind::MissingInput => not_found(format!(
            "The payer required an input that was not supplied: {}.",
            code_subject(code, "_MISSING")
        )),
        FailureKind::IncorrectInput if *code == FailureCode::PhoneNumberIncorrect => not_found(
            "The number dialed did not reach the payer's provider services line.".to_string(),
        ),
        FailureKind::IncorrectInput => not_found(format!(
            "An input did not match the payer's records: {}.",
            code_subject(code, "_INCORRECT")
        )),
        FailureKind::System => match SYSTEM_ERROR_CODES.iter().find(|(c, _)| c == code) {
            Some((code, message)) => {
                FailureRecord::new(FailureCategory::SystemError, code.clone(), *message)
            }
            None => FailureRecord::new(
                FailureCategory::SystemError,
                FailureCode::Other,
                "The call failed for a reason with no more specific code.",
            ),
        },
    }
}
