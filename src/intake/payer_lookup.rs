//! The payer phone number decision (service-interface 2.5): which number a request dials and the
//! six-field `payerLookup` record explaining it.

use switchboard_storage::{
    AccountRecord, DialTarget, NumberSource, PayerLookupRecord, PayerRecord,
};

use crate::domain::UsPhone;
use crate::errors::{ApiError, Code};
use crate::payers::{normalize, PayerDirectory, PayerMatch};

/// A number found for the payer name, before the number-choice rules.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundNumber {
    /// Name the match was made on (directory name, or the phone-book entry's payer).
    pub payer_name: String,
    /// Ten-digit number, or `None` when the directory knows the payer but has no number on file.
    pub phone: Option<String>,
    /// Directory or phone book.
    pub source: NumberSource,
}

/// Looks the payer up: the account's phone book first, then `resolved`, the directory's match for the same
/// name (steered by the member ID), which intake has already made.
pub fn find_number(
    account: &AccountRecord,
    directory: &PayerDirectory,
    payer_name: &str,
    resolved: Option<&PayerMatch<'_>>,
) -> Option<FoundNumber> {
    let query = normalize(payer_name);
    if !query.compact.is_empty() {
        let in_book = account.phone_book.iter().find(|entry| {
            let form = normalize(&entry.payer);
            form.compact == query.compact || form.tokens == query.tokens
        });
        if let Some(entry) = in_book {
            return Some(FoundNumber {
                payer_name: entry.payer.clone(),
                phone: Some(entry.phone.clone()),
                source: NumberSource::PhoneBook,
            });
        }
    }
    let found = resolved?;
    // The phone book overrides a directory payer however the client wrote its name: an alias, an acronym
    // or a family name steered by the member ID reaches the same override as the exact name.
    let overridden = account.phone_book.iter().find(|entry| {
        normalize(&entry.payer).compact == normalize(&found.payer.name).compact
            || directory
                .resolve(&entry.payer, None)
                .is_some_and(|own| own.payer.name == found.payer.name)
    });
    Some(match overridden {
        Some(entry) => FoundNumber {
            payer_name: entry.payer.clone(),
            phone: Some(entry.phone.clone()),
            source: NumberSource::PhoneBook,
        },
        None => directory_number(found.payer),
    })
}

fn directory_number(payer: &PayerRecord) -> FoundNumber {
    FoundNumber {
        payer_name: payer.name.clone(),
        phone: payer.phone.clone(),
        source: NumberSource::Directory,
    }
}

/// Applies the number-choice rules 1-5 for an account with lookup enabled. `input_phone` is the supplied,
/// already validated `phoneNumber`.
pub fn decide(
    payer_name: &str,
    input_phone: Option<&str>,
    use_matched: bool,
    found: Option<&FoundNumber>,
) -> Result<(PayerLookupRecord, DialTarget), ApiError> {
    let matched = |found: &FoundNumber, phone: &str| {
        (
            PayerLookupRecord {
                input_payer_name: payer_name.to_owned(),
                input_phone_number: input_phone.map(str::to_owned),
                matched_payer_name: Some(found.payer_name.clone()),
                matched_payer_phone: Some(phone.to_owned()),
                phone_number_to_use: phone.to_owned(),
                phone_number_source: found.source,
            },
            DialTarget {
                number: phone.to_owned(),
                source: found.source,
            },
        )
    };
    match (input_phone, found) {
        // Rule 2: the client asked for the matched number and there is one.
        (Some(_), Some(found @ FoundNumber { phone: Some(phone), .. })) if use_matched => Ok(matched(found, phone)),
        // Rules 1 and 3: the supplied number is dialed as-is.
        (Some(input), _) => Ok((
            PayerLookupRecord {
                input_payer_name: payer_name.to_owned(),
                input_phone_number: Some(input.to_owned()),
                matched_payer_name: None,
                matched_payer_phone: None,
                phone_number_to_use: input.to_owned(),
                phone_number_source: NumberSource::Input,
            },
            DialTarget {
                number: UsPhone::parse(input).map_or_else(|| input.to_owned(), |p| p.digits().to_owned()),
                source: NumberSource::Input,
            },
        )),
        // Rule 4: no number supplied, the matched one is dialed.
        (None, Some(found @ FoundNumber { phone: Some(phone), .. })) => Ok(matched(found, phone)),
        (None, Some(found)) => Err(ApiError::new(
            Code::PayerLookupFailure,
            format!("Payer '{}' was matched but has no phone number on file; supply inputs.phoneNumber", found.payer_name),
        )),
        (None, None) => Err(ApiError::new(
            Code::PayerNotFound,
            format!("Payer '{payer_name}' matched no known payer; supply inputs.phoneNumber or check the name"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(source: NumberSource, phone: Option<&str>) -> FoundNumber {
        FoundNumber {
            payer_name: "Aetna".into(),
            phone: phone.map(str::to_owned),
            source,
        }
    }

    #[test]
    fn rule_1_a_supplied_number_is_dialed_as_is_by_default() {
        let hit = found(NumberSource::Directory, Some("8005550101"));
        let (lookup, dial) = decide("Aetna", Some("(888) 555-0100"), false, Some(&hit)).unwrap();
        assert_eq!(lookup.phone_number_to_use, "(888) 555-0100");
        assert_eq!(lookup.phone_number_source, NumberSource::Input);
        assert_eq!(
            (lookup.matched_payer_name, lookup.matched_payer_phone),
            (None, None)
        );
        assert_eq!(dial.number, "8885550100");
    }

    #[test]
    fn rule_2_the_flag_dials_the_matched_number_with_its_source() {
        for source in [NumberSource::Directory, NumberSource::PhoneBook] {
            let hit = found(source, Some("8005550101"));
            let (lookup, dial) = decide("aetna inc", Some("8885550100"), true, Some(&hit)).unwrap();
            assert_eq!(lookup.phone_number_to_use, "8005550101");
            assert_eq!(lookup.phone_number_source, source);
            assert_eq!(lookup.matched_payer_name.as_deref(), Some("Aetna"));
            assert_eq!(lookup.input_phone_number.as_deref(), Some("8885550100"));
            assert_eq!(dial.source, source);
        }
    }

    #[test]
    fn rule_3_the_flag_without_a_match_dials_the_supplied_number_without_error() {
        let (lookup, _) = decide("Nobody", Some("8885550100"), true, None).unwrap();
        assert_eq!(lookup.phone_number_source, NumberSource::Input);
        assert_eq!(lookup.phone_number_to_use, "8885550100");
    }

    #[test]
    fn rule_4_without_a_number_the_match_is_dialed_whatever_the_flag() {
        let hit = found(NumberSource::Directory, Some("8005550101"));
        for flag in [false, true] {
            let (lookup, _) = decide("Aetna", None, flag, Some(&hit)).unwrap();
            assert_eq!(lookup.phone_number_to_use, "8005550101");
            assert_eq!(lookup.input_phone_number, None);
        }
    }

    #[test]
    fn no_number_and_no_match_is_payer_not_found_and_a_match_without_a_number_is_a_lookup_failure()
    {
        assert_eq!(
            decide("Nobody", None, false, None).unwrap_err().code(),
            Code::PayerNotFound
        );
        let numberless = found(NumberSource::Directory, None);
        assert_eq!(
            decide("Aetna", None, false, Some(&numberless))
                .unwrap_err()
                .code(),
            Code::PayerLookupFailure
        );
    }
}
