//! Building an inquiry from a request's inputs, checked against the constraints Stedi's OpenAPI declares
//! (patterns and lengths), so that an inquiry the clearinghouse would reject is never sent: the phone
//! handles that request instead. Pure; unit-tested below.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use switchboard_storage::{ElectronicSource, SchemaDefinition};

use super::bodies::{
    ClaimStatusEncounter, ClaimStatusRequest, EligibilityEncounter, EligibilityRequest, Person,
    Provider, StatusRequestProvider,
};

/// Which X12 transaction answers a schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transaction {
    /// 270/271.
    Eligibility,
    /// 276/277.
    ClaimStatus,
}

/// A ready-to-send inquiry.
#[derive(Clone, Debug, PartialEq)]
pub enum Inquiry {
    /// An eligibility check.
    Eligibility(EligibilityRequest),
    /// A claim status check.
    ClaimStatus(ClaimStatusRequest),
}

/// The request properties the inputs cannot fill validly, by their path in the inquiry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidInquiry(pub Vec<&'static str>);

/// Default service type: `30`, health benefit plan coverage.
const DEFAULT_SERVICE_TYPE: &str = "30";
const SUBSCRIBER_PATHS: [&str; 3] = [
    "subscriber.firstName",
    "subscriber.lastName",
    "subscriber.dateOfBirth",
];
const DATE_FORMATS: [&str; 5] = ["%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%m-%d-%Y", "%Y%m%d"];

/// The transaction of a schema: by request type (benefits and eligibility types ask a 270, claim-status
/// types a 276), else by what its mapping reads. `None`: nothing to ask, or nothing mapped to fill.
pub fn transaction_for(schema: &SchemaDefinition) -> Option<Transaction> {
    if schema.electronic.fields.is_empty() {
        return None;
    }
    let kind = schema.request_type.to_ascii_lowercase();
    if kind.contains("vob") || kind.contains("eligib") || kind.contains("benefit") {
        return Some(Transaction::Eligibility);
    }
    if kind.contains("claim") && !kind.contains("appeal") {
        return Some(Transaction::ClaimStatus);
    }
    match schema.electronic.fields.values().next() {
        Some(ElectronicSource::Claim(_)) => Some(Transaction::ClaimStatus),
        Some(_) => Some(Transaction::Eligibility),
        None => None,
    }
}

/// The inquiry for `inputs`, or every property they cannot fill.
pub fn build(
    transaction: Transaction,
    schema: &SchemaDefinition,
    inputs: &BTreeMap<String, String>,
    payer_id: &str,
    provider_name: Option<&str>,
    today: NaiveDate,
) -> Result<Inquiry, InvalidInquiry> {
    let mut bad = Vec::new();
    let input = |key: &str| inputs.get(key).map(|v| v.trim()).filter(|v| !v.is_empty());
    let payer_ok = match transaction {
        Transaction::Eligibility => (1..=80).contains(&payer_id.len()),
        Transaction::ClaimStatus => (2..=80).contains(&payer_id.len()),
    };
    if !payer_ok {
        bad.push("tradingPartnerServiceId");
    }
    let npi = input("billingProviderNpi").filter(|n| n.len() == 10 && is_digits(n));
    if npi.is_none() {
        bad.push("provider.npi");
    }
    let organization = input("billingProviderName")
        .or(provider_name.map(str::trim).filter(|n| !n.is_empty()))
        .filter(|n| n.chars().count() <= 60);
    if organization.is_none() {
        bad.push("provider.organizationName");
    }
    let member_id = input("memberId").filter(|m| {
        (2..=80).contains(&m.len())
            && m.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b' ')
    });
    if member_id.is_none() {
        bad.push("subscriber.memberId");
    }
    let patient = person(&input, "patient", &mut bad, SUBSCRIBER_PATHS);
    // A member named apart from the patient holds the policy; the patient is then a dependent.
    let member = match (
        input("memberFirstName"),
        input("memberLastName"),
        input("memberDateOfBirth"),
    ) {
        (Some(_), Some(_), Some(_)) => person(&input, "member", &mut bad, SUBSCRIBER_PATHS),
        _ => None,
    };
    let dos = |key: &str, bad: &mut Vec<&'static str>, path: &'static str| match input(key) {
        None => None,
        Some(raw) => {
            let parsed = x12_date(raw);
            if parsed.is_none() {
                bad.push(path);
            }
            parsed
        }
    };
    let group_number = input("groupNumber")
        .filter(|g| g.chars().count() <= 50)
        .map(str::to_owned);
    let (subscriber, dependent) = match (member, patient) {
        (Some(member), Some(patient)) if member != patient => (Some(member), Some(patient)),
        (_, patient) => (patient, None),
    };
    let inquiry = match transaction {
        Transaction::Eligibility => {
            let date_of_service = dos("dateOfService", &mut bad, "encounter.dateOfService");
            let codes = service_type_codes(schema);
            (bad.is_empty()).then(|| {
                Inquiry::Eligibility(EligibilityRequest {
                    trading_partner_service_id: payer_id.to_owned(),
                    provider: Provider {
                        npi: npi.unwrap_or_default().to_owned(),
                        organization_name: organization.unwrap_or_default().to_owned(),
                    },
                    subscriber: with_id(subscriber.clone(), member_id, group_number),
                    dependents: dependent.into_iter().collect(),
                    encounter: EligibilityEncounter {
                        date_of_service,
                        service_type_codes: codes,
                    },
                })
            })
        }
        Transaction::ClaimStatus => {
            let date = |key: &str, bad: &mut Vec<&'static str>, path: &'static str| {
                let raw = input(key)?;
                let parsed = parse_date(raw);
                if parsed.is_none() {
                    bad.push(path);
                }
                parsed
            };
            let begin = date(
                "beginningDateOfService",
                &mut bad,
                "encounter.beginningDateOfService",
            )
            .or_else(|| {
                date(
                    "dateOfService",
                    &mut bad,
                    "encounter.beginningDateOfService",
                )
            });
            let end = date("endDateOfService", &mut bad, "encounter.endDateOfService");
            if begin.is_none() {
                bad.push("encounter.beginningDateOfService");
            }
            let window = begin.map(|begin| service_window(begin, end, today));
            let claim_number = input("claimNumber").filter(|c| c.chars().count() <= 50);
            let amount = input("claimChargeAmount").and_then(decimal_amount);
            let tax_id = input("billingProviderTaxId")
                .map(|t| t.replace('-', ""))
                .filter(|t| t.len() == 9 && is_digits(t));
            (bad.is_empty()).then(|| {
                Inquiry::ClaimStatus(ClaimStatusRequest {
                    trading_partner_service_id: payer_id.to_owned(),
                    providers: vec![StatusRequestProvider {
                        provider_type: "BillingProvider",
                        npi: npi.unwrap_or_default().to_owned(),
                        organization_name: organization.unwrap_or_default().to_owned(),
                        tax_id,
                    }],
                    subscriber: with_id(subscriber.clone(), member_id, group_number),
                    dependent,
                    encounter: ClaimStatusEncounter {
                        beginning_date_of_service: window.map(|w| x12(w.0)).unwrap_or_default(),
                        end_date_of_service: window.map(|w| x12(w.1)).unwrap_or_default(),
                        trading_partner_claim_number: claim_number.map(str::to_owned),
                        submitted_amount: amount,
                    },
                })
            })
        }
    };
    match inquiry {
        Some(inquiry) => Ok(inquiry),
        None => {
            bad.sort_unstable();
            bad.dedup();
            Err(InvalidInquiry(bad))
        }
    }
}

/// The schema's service types, `30` when it names none.
fn service_type_codes(schema: &SchemaDefinition) -> Vec<String> {
    match schema.electronic.service_type_codes.is_empty() {
        true => vec![DEFAULT_SERVICE_TYPE.to_owned()],
        false => schema.electronic.service_type_codes.clone(),
    }
}

/// `{prefix}FirstName`, `{prefix}LastName`, `{prefix}DateOfBirth` as a person; records what is invalid
/// under `paths` (first name, last name, date of birth).
fn person<'a>(
    input: &impl Fn(&str) -> Option<&'a str>,
    prefix: &str,
    bad: &mut Vec<&'static str>,
    paths: [&'static str; 3],
) -> Option<Person> {
    let first = input(&format!("{prefix}FirstName")).filter(|n| n.chars().count() <= 35);
    let last = input(&format!("{prefix}LastName")).filter(|n| n.chars().count() <= 60);
    let born = input(&format!("{prefix}DateOfBirth")).and_then(x12_date);
    for (path, ok) in paths
        .into_iter()
        .zip([first.is_some(), last.is_some(), born.is_some()])
    {
        if !ok {
            bad.push(path);
        }
    }
    Some(Person {
        member_id: None,
        first_name: first?.to_owned(),
        last_name: last?.to_owned(),
        date_of_birth: born?,
        group_number: None,
    })
}

fn with_id(person: Option<Person>, member_id: Option<&str>, group: Option<String>) -> Person {
    let mut person = person.unwrap_or(Person {
        member_id: None,
        first_name: String::new(),
        last_name: String::new(),
        date_of_birth: String::new(),
        group_number: None,
    });
    person.member_id = member_id.map(str::to_owned);
    person.group_number = group;
    person
}

/// A date input as X12's `YYYYMMDD`.
pub fn x12_date(raw: &str) -> Option<String> {
    parse_date(raw).map(x12)
}

/// Days searched on each side of a single date of service: Stedi recommends a window of about a week on
/// either side rather than the one day, since payers date a claim's service differently.
pub const CLAIM_SEARCH_DAYS: u64 = 7;

/// The dates of service a claim status check searches: a single date widened by [`CLAIM_SEARCH_DAYS`] on
/// each side, or the range the inputs give; never past `today` (the day the check is sent), which also
/// keeps the beginning on or before the end.
pub fn service_window(
    begin: NaiveDate,
    end: Option<NaiveDate>,
    today: NaiveDate,
) -> (NaiveDate, NaiveDate) {
    let (begin, end) = match end {
        Some(end) => (begin, end),
        None => (
            begin - chrono::Days::new(CLAIM_SEARCH_DAYS),
            begin + chrono::Days::new(CLAIM_SEARCH_DAYS),
        ),
    };
    let end = end.min(today);
    (begin.min(end), end)
}

fn parse_date(raw: &str) -> Option<NaiveDate> {
    DATE_FORMATS
        .iter()
        .find_map(|format| NaiveDate::parse_from_str(raw.trim(), format).ok())
}

fn x12(date: NaiveDate) -> String {
    date.format("%Y%m%d").to_string()
}

/// A dollar input (`1,250.00`, `$80`) as a plain decimal of at most 18 characters.
fn decimal_amount(raw: &str) -> Option<String> {
    let plain: String = raw.chars().filter(|c| !matches!(c, '$' | ',')).collect();
    let valid = !plain.is_empty()
        && plain.len() <= 18
        && plain.bytes().filter(|b| *b == b'.').count() <= 1
        && plain.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    valid.then_some(plain)
}

fn is_digits(value: &str) -> bool {
    value.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
#[path = "inquiry_tests.rs"]
mod tests;
