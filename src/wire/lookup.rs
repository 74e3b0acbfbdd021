//! The `payerLookup` object (service-interface 2.5): how the dialed number was chosen.

use serde::Serialize;
use switchboard_storage::{AccountRecord, Feature, NumberSource, PayerLookupRecord, RequestRecord};
use utoipa::ToSchema;

/// Present on the create response and both reads whenever payer phone number lookup is enabled for the
/// account (2.5).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayerLookupOut {
    /// The supplied `payerName`.
    pub input_payer_name: String,
    /// The supplied `phoneNumber`, or `null`.
    #[schema(required = true)]
    pub input_phone_number: Option<String>,
    /// Only when the service dials its own matched number.
    #[schema(required = true)]
    pub matched_payer_name: Option<String>,
    /// Only when the service dials its own matched number.
    #[schema(required = true)]
    pub matched_payer_phone: Option<String>,
    /// The number that is dialed.
    pub phone_number_to_use: String,
    /// The deployment's directory word (the service's own payer directory), `phoneBook` (a per-account
    /// override) or `input` (the supplied number). The served document lists the values in force.
    pub phone_number_source: String,
}

/// `phoneNumberSource` values besides the directory's own word.
pub const OTHER_LOOKUP_SOURCES: [&str; 2] = ["phoneBook", "input"];

impl PayerLookupOut {
    /// The wire form; `lookup_source` names the built-in directory.
    pub fn new(record: &PayerLookupRecord, lookup_source: &str) -> PayerLookupOut {
        PayerLookupOut {
            input_payer_name: record.input_payer_name.clone(),
            input_phone_number: record.input_phone_number.clone(),
            matched_payer_name: record.matched_payer_name.clone(),
            matched_payer_phone: record.matched_payer_phone.clone(),
            phone_number_to_use: record.phone_number_to_use.clone(),
            phone_number_source: match record.phone_number_source {
                NumberSource::Directory => lookup_source.to_owned(),
                NumberSource::PhoneBook => OTHER_LOOKUP_SOURCES[0].to_owned(),
                // A payer lookup decision is made at creation, before any call could refer elsewhere.
                NumberSource::Input | NumberSource::Referral => OTHER_LOOKUP_SOURCES[1].to_owned(),
            },
        }
    }

    /// The object of `record` where the account shows it.
    pub fn shown(
        record: &RequestRecord,
        account: &AccountRecord,
        lookup_source: &str,
    ) -> Option<PayerLookupOut> {
        if !account.has(Feature::PayerPhoneLookup) {
            return None;
        }
        record
            .payer_lookup
            .as_ref()
            .map(|lookup| PayerLookupOut::new(lookup, lookup_source))
    }
}
