//! Which sandbox flow a request asked for (`inputs.sandboxScenario`, operator contract section 4) and the
//! fixed failure-code table of service-interface section 7.3 that `failure:CODE` reports through.

use std::collections::BTreeMap;

use switchboard_storage::FailureRecord;

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
    Failure(String),
    /// `cannot_answer`: as `success`, but one required field holds `CANNOT ANSWER - <reason>`.
    CannotAnswer,
    /// `digital`: the electronic channel fills every required field.
    Digital,
    /// `digital_plus_phone`: the electronic channel fills part of the required fields, a call the rest.
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
            return Scenario::Failure(code.trim().to_ascii_uppercase());
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

const SYSTEM_ERROR: &str = "SYSTEM_ERROR";
const NOT_FOUND: &str = "NOT_FOUND";

/// `SYSTEM_ERROR` codes and their messages.
const SYSTEM_ERROR_CODES: [(&str, &str); 6] = [
    (
        "IVR_FAILURE",
        "Could not navigate the payer's phone system to a representative.",
    ),
    (
        "PAYER_REFUSAL",
        "The representative refused to provide the information.",
    ),
    (
        "UNABLE_TO_REACH_HUMAN_IN_TIME",
        "No representative was reached within the retry budget.",
    ),
    (
        "REQUIRES_OTHER_CHANNEL",
        "The payer requires a channel the service does not support (portal, fax or email).",
    ),
    (
        "MATCHED_PHONE_NUMBER_INCORRECT",
        "The phone number found by the payer lookup was incorrect.",
    ),
    (
        "OTHER",
        "The call failed for a reason with no more specific code.",
    ),
];

/// `NOT_FOUND` entity codes, with the entity the payer could not find.
const ENTITY_CODES: [(&str, &str); 5] = [
    ("MEMBER_NOT_FOUND", "member"),
    ("PROVIDER_NOT_FOUND", "provider"),
    ("CLAIM_NOT_FOUND", "claim"),
    ("PRIOR_AUTH_NOT_FOUND", "prior authorization"),
    ("APPEAL_NOT_FOUND", "appeal"),
];

/// `NOT_FOUND` missing-input codes.
const MISSING_INPUT_CODES: [&str; 19] = [
    "CLAIM_NUMBER_MISSING",
    "CLAIM_AUTHORIZATION_NUMBER_MISSING",
    "CLAIM_CPT_PROCEDURE_CODE_MISSING",
    "CLAIM_DATE_OF_SERVICE_MISSING",
    "CLAIM_DIAGNOSIS_MISSING",
    "CLAIM_EFT_CHECK_NUMBER_MISSING",
    "MEMBER_GROUP_MISSING",
    "MEMBER_PATIENT_LOCATION_MISSING",
    "MEMBER_PATIENT_PHONE_MISSING",
    "MEMBER_PAYER_SPECIFIC_PATIENT_ID_MISSING",
    "MEMBER_POLICY_NUMBER_MISSING",
    "MEMBER_SSN_MISSING",
    "PROVIDER_CALLBACK_NUMBER_MISSING",
    "PROVIDER_FACILITY_INFO_MISSING",
    "PROVIDER_FACILITY_LOCATION_MISSING",
    "PROVIDER_FAX_MISSING",
    "PROVIDER_OTHER_LICENSING_MISSING",
    "PROVIDER_PTAN_MISSING",
    "PROVIDER_SPECIALTY_MISSING",
];

/// `NOT_FOUND` incorrect-input codes, plus the generic `PHONE_NUMBER_INCORRECT`, reported here under
/// `NOT_FOUND`: the step, which knows where the dialed number came from, moves it to `SYSTEM_ERROR` when
/// Switchboard looked the number up (`orchestration::outcome::attribute`).
const INCORRECT_INPUT_CODES: [&str; 56] = [
    "APPLICATION_ID_INCORRECT",
    "APPLICATION_SUBMISSION_METHOD_INCORRECT",
    "APPLICATION_SUBMITTED_DATE_INCORRECT",
    "APPLICATION_SUBMITTED_TO_INCORRECT",
    "BEGINNING_DATE_OF_SERVICE_INCORRECT",
    "BILLING_PROVIDER_ADDRESS_INCORRECT",
    "BILLING_PROVIDER_NAME_INCORRECT",
    "BILLING_PROVIDER_NPI_INCORRECT",
    "BILLING_PROVIDER_TAX_ID_INCORRECT",
    "CALLBACK_NUMBER_INCORRECT",
    "CLAIM_CHARGE_AMOUNT_INCORRECT",
    "CLAIM_SUBMITTED_DATE_INCORRECT",
    "CLEARINGHOUSE_CLAIM_ID_INCORRECT",
    "CLEARINGHOUSE_NAME_INCORRECT",
    "END_DATE_OF_SERVICE_INCORRECT",
    "FACILITY_NPI_INCORRECT",
    "FAX_NUMBER_INCORRECT",
    "GROUP_NUMBER_INCORRECT",
    "INPUT_PHONE_NUMBER_INCORRECT",
    "INTERNAL_CLAIM_ID_INCORRECT",
    "INTERNAL_ID_INCORRECT",
    "INTERNAL_PROVIDER_ID_INCORRECT",
    "INTERNAL_TAG_INCORRECT",
    "IS_PRIMARY_POLICY_INCORRECT",
    "MEDICATION_NAME_INCORRECT",
    "MEMBER_ADDRESS_INCORRECT",
    "MEMBER_DATE_OF_BIRTH_INCORRECT",
    "MEMBER_FIRST_NAME_INCORRECT",
    "MEMBER_ID_INCORRECT",
    "MEMBER_LAST_NAME_INCORRECT",
    "OFFICE_NPI_INCORRECT",
    "PATIENT_ADDRESS_INCORRECT",
    "PATIENT_DATE_OF_BIRTH_INCORRECT",
    "PATIENT_FIRST_NAME_INCORRECT",
    "PATIENT_LAST_NAME_INCORRECT",
    "PATIENT_PHONE_NUMBER_INCORRECT",
    "PATIENT_RELATIONSHIP_TO_MEMBER_INCORRECT",
    "PAYER_CLAIM_ID_INCORRECT",
    "PAYER_NAME_INCORRECT",
    "PHARMACY_NAME_INCORRECT",
    "PRACTICE_NPI_INCORRECT",
    "PRIOR_AUTH_ID_INCORRECT",
    "PROVIDER_SPECIALTY_INCORRECT",
    "PROVIDER_TYPE_INCORRECT",
    "PTAN_INCORRECT",
    "RENDERING_PROVIDER_ADDRESS_INCORRECT",
    "RENDERING_PROVIDER_FIRST_NAME_INCORRECT",
    "RENDERING_PROVIDER_LAST_NAME_INCORRECT",
    "RENDERING_PROVIDER_NPI_INCORRECT",
    "RENDERING_PROVIDER_PHONE_NUMBER_INCORRECT",
    "RENDERING_PROVIDER_SPECIALTY_INCORRECT",
    "REPRESENTATIVE_PHONE_NUMBER_INCORRECT",
    "SERVICE_STATE_INCORRECT",
    "TAX_ID_INCORRECT",
    "PROVIDER_ADDRESS_INCORRECT",
    "PHONE_NUMBER_INCORRECT",
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
pub(super) fn failure_kind(code: &str) -> FailureKind {
    if let Some((_, entity)) = ENTITY_CODES.iter().find(|(c, _)| *c == code) {
        FailureKind::EntityNotFound(entity)
    } else if MISSING_INPUT_CODES.contains(&code) {
        FailureKind::MissingInput
    } else if INCORRECT_INPUT_CODES.contains(&code) {
        FailureKind::IncorrectInput
    } else {
        FailureKind::System
    }
}

/// `CLAIM_DATE_OF_SERVICE_MISSING` without its suffix, as words: "claim date of service".
pub(super) fn code_subject(code: &str, suffix: &str) -> String {
    code.strip_suffix(suffix)
        .unwrap_or(code)
        .to_ascii_lowercase()
        .replace('_', " ")
}

/// Category, code and message of a failure code per service-interface 7.3: entity, missing-input and
/// incorrect-input codes are `NOT_FOUND`; `SYSTEM_ERROR` codes (and `OTHER`) are `SYSTEM_ERROR`; a code the
/// table does not know becomes `SYSTEM_ERROR`/`OTHER`.
pub fn failure_for_code(code: &str) -> FailureRecord {
    let record = |category: &str, code: &str, message: String| FailureRecord {
        category: category.to_string(),
        code: code.to_string(),
        message,
    };
    match failure_kind(code) {
        FailureKind::EntityNotFound(entity) => record(
            NOT_FOUND,
            code,
            format!("The payer could not find the {entity} in its records."),
        ),
        FailureKind::MissingInput => record(
            NOT_FOUND,
            code,
            format!(
                "The payer required an input that was not supplied: {}.",
                code_subject(code, "_MISSING")
            ),
        ),
        FailureKind::IncorrectInput if code == "PHONE_NUMBER_INCORRECT" => record(
            NOT_FOUND,
            code,
            "The number dialed did not reach the payer's provider services line.".to_string(),
        ),
        FailureKind::IncorrectInput => record(
            NOT_FOUND,
            code,
            format!(
                "An input did not match the payer's records: {}.",
                code_subject(code, "_INCORRECT")
            ),
        ),
        FailureKind::System => match SYSTEM_ERROR_CODES.iter().find(|(c, _)| *c == code) {
            Some((code, message)) => record(SYSTEM_ERROR, code, message.to_string()),
            None => record(
                SYSTEM_ERROR,
                "OTHER",
                "The call failed for a reason with no more specific code.".to_string(),
            ),
        },
    }
}
