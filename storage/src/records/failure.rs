//! Why a call, a step or a request failed (service-interface 2.7 and 7.3): a category, a code and a message.
//!
//! Category and code are open sets: the spec adds codes over time, voice agents and platforms report codes
//! of their own, and records written by other releases must still read. A text this release does not list
//! is kept as written ([`FailureCode::Unknown`], [`FailureCategory::Unknown`]), so every stored failure
//! reads and writes back byte for byte.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A failure as the API reports it (service-interface 2.7, 7.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureRecord {
    /// `NOT_FOUND` or `SYSTEM_ERROR`.
    pub category: FailureCategory,
    /// Open-ended code, e.g. `MEMBER_NOT_FOUND`.
    pub code: FailureCode,
    /// Human-readable message.
    pub message: String,
}

impl FailureRecord {
    /// A failure of `category` with `code` and `message`.
    pub fn new(category: FailureCategory, code: FailureCode, message: impl Into<String>) -> Self {
        FailureRecord {
            category,
            code,
            message: message.into(),
        }
    }
}

/// Defines an open enum of wire strings: one unit variant per listed text, and `Unknown(String)` for any
/// other, with the conversions to and from text and a serde form that is the bare text.
macro_rules! open_enum {
    (
        $(#[$doc:meta])*
        pub enum $name:ident {
            $(
                $(#[$section:meta])*
                $variant:ident = $text:literal,
            )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                $(#[$section])*
                #[doc = concat!("`", $text, "`")]
                $variant,
            )*
            /// A text this release does not list, kept as written. `From` never gives it for a listed
            /// text, so compare with the listed variants, not with `Unknown` of their text.
            Unknown(String),
        }

        impl $name {
            /// The text, as stored and as the API shows it.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)*
                    $name::Unknown(text) => text,
                }
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> $name {
                match text {
                    $($text => $name::$variant,)*
                    other => $name::Unknown(other.to_owned()),
                }
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> $name {
                match $name::from(text.as_str()) {
                    $name::Unknown(_) => $name::Unknown(text),
                    listed => listed,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                String::deserialize(deserializer).map($name::from)
            }
        }
    };
}

open_enum! {
    /// Who a failure is on (2.7): the payer could not find what was asked about, or anything else.
    pub enum FailureCategory {
        NotFound = "NOT_FOUND",
        SystemError = "SYSTEM_ERROR",
    }
}

open_enum! {
    /// What failed (7.3), by the spec's fixed table. Codes are never built from field names.
    pub enum FailureCode {
        // `SYSTEM_ERROR` codes.
        IvrFailure = "IVR_FAILURE",
        PayerRefusal = "PAYER_REFUSAL",
        UnableToReachHumanInTime = "UNABLE_TO_REACH_HUMAN_IN_TIME",
        RequiresOtherChannel = "REQUIRES_OTHER_CHANNEL",
        MatchedPhoneNumberIncorrect = "MATCHED_PHONE_NUMBER_INCORRECT",
        Other = "OTHER",
        // `NOT_FOUND` entity codes.
        MemberNotFound = "MEMBER_NOT_FOUND",
        ProviderNotFound = "PROVIDER_NOT_FOUND",
        ClaimNotFound = "CLAIM_NOT_FOUND",
        PriorAuthNotFound = "PRIOR_AUTH_NOT_FOUND",
        AppealNotFound = "APPEAL_NOT_FOUND",
        // `NOT_FOUND` missing-input codes.
        ClaimNumberMissing = "CLAIM_NUMBER_MISSING",
        ClaimAuthorizationNumberMissing = "CLAIM_AUTHORIZATION_NUMBER_MISSING",
        ClaimCptProcedureCodeMissing = "CLAIM_CPT_PROCEDURE_CODE_MISSING",
        ClaimDateOfServiceMissing = "CLAIM_DATE_OF_SERVICE_MISSING",
        ClaimDiagnosisMissing = "CLAIM_DIAGNOSIS_MISSING",
        ClaimEftCheckNumberMissing = "CLAIM_EFT_CHECK_NUMBER_MISSING",
        MemberGroupMissing = "MEMBER_GROUP_MISSING",
        MemberPatientLocationMissing = "MEMBER_PATIENT_LOCATION_MISSING",
        MemberPatientPhoneMissing = "MEMBER_PATIENT_PHONE_MISSING",
        MemberPayerSpecificPatientIdMissing = "MEMBER_PAYER_SPECIFIC_PATIENT_ID_MISSING",
        MemberPolicyNumberMissing = "MEMBER_POLICY_NUMBER_MISSING",
        MemberSsnMissing = "MEMBER_SSN_MISSING",
        ProviderCallbackNumberMissing = "PROVIDER_CALLBACK_NUMBER_MISSING",
        ProviderFacilityInfoMissing = "PROVIDER_FACILITY_INFO_MISSING",
        ProviderFacilityLocationMissing = "PROVIDER_FACILITY_LOCATION_MISSING",
        ProviderFaxMissing = "PROVIDER_FAX_MISSING",
        ProviderOtherLicensingMissing = "PROVIDER_OTHER_LICENSING_MISSING",
        ProviderPtanMissing = "PROVIDER_PTAN_MISSING",
        ProviderSpecialtyMissing = "PROVIDER_SPECIALTY_MISSING",
        // `NOT_FOUND` incorrect-input codes, the generic `PHONE_NUMBER_INCORRECT` last.
        ApplicationIdIncorrect = "APPLICATION_ID_INCORRECT",
        ApplicationSubmissionMethodIncorrect = "APPLICATION_SUBMISSION_METHOD_INCORRECT",
        ApplicationSubmittedDateIncorrect = "APPLICATION_SUBMITTED_DATE_INCORRECT",
        ApplicationSubmittedToIncorrect = "APPLICATION_SUBMITTED_TO_INCORRECT",
        BeginningDateOfServiceIncorrect = "BEGINNING_DATE_OF_SERVICE_INCORRECT",
        BillingProviderAddressIncorrect = "BILLING_PROVIDER_ADDRESS_INCORRECT",
        BillingProviderNameIncorrect = "BILLING_PROVIDER_NAME_INCORRECT",
        BillingProviderNpiIncorrect = "BILLING_PROVIDER_NPI_INCORRECT",
        BillingProviderTaxIdIncorrect = "BILLING_PROVIDER_TAX_ID_INCORRECT",
        CallbackNumberIncorrect = "CALLBACK_NUMBER_INCORRECT",
        ClaimChargeAmountIncorrect = "CLAIM_CHARGE_AMOUNT_INCORRECT",
        ClaimSubmittedDateIncorrect = "CLAIM_SUBMITTED_DATE_INCORRECT",
        ClearinghouseClaimIdIncorrect = "CLEARINGHOUSE_CLAIM_ID_INCORRECT",
        ClearinghouseNameIncorrect = "CLEARINGHOUSE_NAME_INCORRECT",
        EndDateOfServiceIncorrect = "END_DATE_OF_SERVICE_INCORRECT",
        FacilityNpiIncorrect = "FACILITY_NPI_INCORRECT",
        FaxNumberIncorrect = "FAX_NUMBER_INCORRECT",
        GroupNumberIncorrect = "GROUP_NUMBER_INCORRECT",
        InputPhoneNumberIncorrect = "INPUT_PHONE_NUMBER_INCORRECT",
        InternalClaimIdIncorrect = "INTERNAL_CLAIM_ID_INCORRECT",
        InternalIdIncorrect = "INTERNAL_ID_INCORRECT",
        InternalProviderIdIncorrect = "INTERNAL_PROVIDER_ID_INCORRECT",
        InternalTagIncorrect = "INTERNAL_TAG_INCORRECT",
        IsPrimaryPolicyIncorrect = "IS_PRIMARY_POLICY_INCORRECT",
        MedicationNameIncorrect = "MEDICATION_NAME_INCORRECT",
        MemberAddressIncorrect = "MEMBER_ADDRESS_INCORRECT",
        MemberDateOfBirthIncorrect = "MEMBER_DATE_OF_BIRTH_INCORRECT",
        MemberFirstNameIncorrect = "MEMBER_FIRST_NAME_INCORRECT",
        MemberIdIncorrect = "MEMBER_ID_INCORRECT",
        MemberLastNameIncorrect = "MEMBER_LAST_NAME_INCORRECT",
        OfficeNpiIncorrect = "OFFICE_NPI_INCORRECT",
        PatientAddressIncorrect = "PATIENT_ADDRESS_INCORRECT",
        PatientDateOfBirthIncorrect = "PATIENT_DATE_OF_BIRTH_INCORRECT",
        PatientFirstNameIncorrect = "PATIENT_FIRST_NAME_INCORRECT",
        PatientLastNameIncorrect = "PATIENT_LAST_NAME_INCORRECT",
        PatientPhoneNumberIncorrect = "PATIENT_PHONE_NUMBER_INCORRECT",
        PatientRelationshipToMemberIncorrect = "PATIENT_RELATIONSHIP_TO_MEMBER_INCORRECT",
        PayerClaimIdIncorrect = "PAYER_CLAIM_ID_INCORRECT",
        PayerNameIncorrect = "PAYER_NAME_INCORRECT",
        PharmacyNameIncorrect = "PHARMACY_NAME_INCORRECT",
        PracticeNpiIncorrect = "PRACTICE_NPI_INCORRECT",
        PriorAuthIdIncorrect = "PRIOR_AUTH_ID_INCORRECT",
        ProviderSpecialtyIncorrect = "PROVIDER_SPECIALTY_INCORRECT",
        ProviderTypeIncorrect = "PROVIDER_TYPE_INCORRECT",
        PtanIncorrect = "PTAN_INCORRECT",
        RenderingProviderAddressIncorrect = "RENDERING_PROVIDER_ADDRESS_INCORRECT",
        RenderingProviderFirstNameIncorrect = "RENDERING_PROVIDER_FIRST_NAME_INCORRECT",
        RenderingProviderLastNameIncorrect = "RENDERING_PROVIDER_LAST_NAME_INCORRECT",
        RenderingProviderNpiIncorrect = "RENDERING_PROVIDER_NPI_INCORRECT",
        RenderingProviderPhoneNumberIncorrect = "RENDERING_PROVIDER_PHONE_NUMBER_INCORRECT",
        RenderingProviderSpecialtyIncorrect = "RENDERING_PROVIDER_SPECIALTY_INCORRECT",
        RepresentativePhoneNumberIncorrect = "REPRESENTATIVE_PHONE_NUMBER_INCORRECT",
        ServiceStateIncorrect = "SERVICE_STATE_INCORRECT",
        TaxIdIncorrect = "TAX_ID_INCORRECT",
        ProviderAddressIncorrect = "PROVIDER_ADDRESS_INCORRECT",
        PhoneNumberIncorrect = "PHONE_NUMBER_INCORRECT",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_codes_and_categories_read_and_write_as_their_spec_text() {
        let json = r#"{"category":"NOT_FOUND","code":"MEMBER_NOT_FOUND","message":"m"}"#;
        let failure: FailureRecord = serde_json::from_str(json).unwrap();
        assert_eq!(failure.category, FailureCategory::NotFound);
        assert_eq!(failure.code, FailureCode::MemberNotFound);
        assert_eq!(serde_json::to_string(&failure).unwrap(), json);
    }

    #[test]
    fn unlisted_texts_are_kept_as_written() {
        let json = r#"{"category":"LATER_CATEGORY","code":"LATER_CODE","message":"m"}"#;
        let failure: FailureRecord = serde_json::from_str(json).unwrap();
        assert_eq!(
            failure.category,
            FailureCategory::Unknown("LATER_CATEGORY".into())
        );
        assert_eq!(failure.code, FailureCode::Unknown("LATER_CODE".into()));
        assert_eq!(serde_json::to_string(&failure).unwrap(), json);
    }

    #[test]
    fn every_listed_code_round_trips_through_its_text() {
        for text in [
            "OTHER",
            "IVR_FAILURE",
            "PHONE_NUMBER_INCORRECT",
            "PROVIDER_PTAN_MISSING",
        ] {
            let code = FailureCode::from(text);
            assert!(!matches!(code, FailureCode::Unknown(_)), "{text} is listed");
            assert_eq!(code.as_str(), text);
        }
    }
}
