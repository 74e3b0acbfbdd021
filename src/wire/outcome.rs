//! How a request turned out, on the wire: its state, modality, data completeness and failure
//! (service-interface 2.4, 2.7).

use serde::Serialize;
use switchboard_storage::{FailureCategory, FailureCode, FailureRecord, Modality, RequestState};
use utoipa::ToSchema;

/// A request's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RequestStateOut {
    /// Queued or running.
    Processing,
    /// Every field obtained.
    Success,
    /// Some fields obtained.
    Partial,
    /// Nothing usable obtained; see `error`.
    Failure,
}

impl From<RequestState> for RequestStateOut {
    fn from(state: RequestState) -> RequestStateOut {
        match state {
            RequestState::Processing => RequestStateOut::Processing,
            RequestState::Success => RequestStateOut::Success,
            RequestState::Partial => RequestStateOut::Partial,
            RequestState::Failure => RequestStateOut::Failure,
        }
    }
}

/// How a result was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModalityOut {
    /// Electronically only.
    DigitalOnly,
    /// By phone only.
    PhoneOnly,
    /// Electronically, completed by phone.
    DigitalPlusPhone,
}

impl From<Modality> for ModalityOut {
    fn from(modality: Modality) -> ModalityOut {
        match modality {
            Modality::DigitalOnly => ModalityOut::DigitalOnly,
            Modality::PhoneOnly => ModalityOut::PhoneOnly,
            Modality::DigitalPlusPhone => ModalityOut::DigitalPlusPhone,
        }
    }
}

/// How complete an electronic-only result is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataCompletenessOut {
    /// What the payer's eligibility service answers.
    Minimum,
    /// Reserved.
    Enhanced,
    /// Reserved.
    Complete,
}

/// Why a request ended in `FAILURE` (2.7).
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailureOut {
    /// `NOT_FOUND`: the payer could not find what was asked about; `SYSTEM_ERROR`: any other failure.
    #[schema(schema_with = error_category_schema)]
    pub error_category: FailureCategory,
    /// Open-ended (7.3): treat an unknown code as `OTHER`; never construct codes from field names.
    #[schema(
        value_type = String,
        examples(
            "IVR_FAILURE",
            "PAYER_REFUSAL",
            "MEMBER_NOT_FOUND",
            "PHONE_NUMBER_INCORRECT"
        )
    )]
    pub error_code: FailureCode,
    /// Human-readable; wording may change, dispatch on `errorCode`.
    pub error_message: String,
}

impl From<&FailureRecord> for FailureOut {
    fn from(error: &FailureRecord) -> FailureOut {
        FailureOut {
            error_category: error.category.clone(),
            error_code: error.code.clone(),
            error_message: error.message.clone(),
        }
    }
}

/// `errorCategory`: a closed set (2.7), unlike `errorCode`. The stored category is an open type, so that a
/// record written by a later release still reads back; the document states what this one emits.
pub(super) fn error_category_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(["NOT_FOUND", "SYSTEM_ERROR"]))
        .description(Some(
            "`NOT_FOUND`: the payer could not find what was asked about; `SYSTEM_ERROR`: any other failure.",
        ))
        .build()
}
