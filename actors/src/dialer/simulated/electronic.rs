//! The electronic channel of the simulator: an eligibility inquiry (X12 270/271) for benefits requests and
//! a claim-status inquiry (276/277) for claim-status requests, answered only by payers reachable
//! electronically, and only with the fields such a response carries.

use std::collections::BTreeMap;

use switchboard_storage::{FieldRecord, SchemaDefinition};

use super::decide::chance;
use crate::dialer::sandbox::dice::Dice;
use crate::dialer::sandbox::values::value_for;

/// Words of field names a 271 eligibility response fills.
const ELIGIBILITY_WORDS: [&str; 9] = [
    "planactive",
    "plantype",
    "effective",
    "termination",
    "planyear",
    "deductible",
    "outofpocket",
    "copay",
    "coinsurance",
];
/// Words of field names a 277 claim-status response fills.
const CLAIM_STATUS_WORDS: [&str; 5] = [
    "claimstatus",
    "received",
    "paidamount",
    "paymentdate",
    "billed",
];

/// Chance that a 271 comes back for a benefits request (the rest: payer system unavailable, no match).
const ELIGIBILITY_RESPONSE_RATE: f64 = 0.9;
/// Chance that a 277 comes back with a usable status.
const CLAIM_STATUS_RESPONSE_RATE: f64 = 0.55;
/// Chance that a response carries a given optional field (required ones always come when they fit).
const OPTIONAL_FIELD_RATE: f64 = 0.75;

/// Which transaction a request type maps to, by its name; `None`: nothing electronic to ask.
fn transaction(request_type: &str) -> Option<(&'static [&'static str], f64)> {
    let kind = request_type.to_ascii_lowercase();
    if kind.contains("vob") || kind.contains("eligib") || kind.contains("benefit") {
        Some((&ELIGIBILITY_WORDS, ELIGIBILITY_RESPONSE_RATE))
    } else if kind.contains("claim") && !kind.contains("appeal") {
        Some((&CLAIM_STATUS_WORDS, CLAIM_STATUS_RESPONSE_RATE))
    } else {
        None
    }
}

/// The fields an electronic response fills for `schema`, fixed by `dice`: when the transaction answers,
/// every required field it carries, most optional ones, and conditional ones whose condition holds on what
/// it filled. Empty when the request type has no transaction or the payer did not answer.
pub(crate) fn electronic_fields(
    schema: &SchemaDefinition,
    dice: &Dice,
    inputs: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut filled = BTreeMap::new();
    let Some((words, response_rate)) = transaction(&schema.request_type) else {
        return filled;
    };
    if !chance(dice, "sim:electronic:response", response_rate) {
        return filled;
    }
    let carried = |field: &FieldRecord| {
        let name = field.name.to_ascii_lowercase();
        words.iter().any(|w| name.contains(w))
    };
    for field in schema
        .fields
        .iter()
        .filter(|f| f.when.is_none() && carried(f))
    {
        let label = format!("sim:electronic:optional:{}", field.name);
        if field.required || chance(dice, &label, OPTIONAL_FIELD_RATE) {
            filled.insert(field.name.clone(), value_for(field, dice, inputs));
        }
    }
    loop {
        let opened: Vec<&FieldRecord> = schema
            .fields
            .iter()
            .filter(|f| carried(f) && !filled.contains_key(&f.name))
            .filter(|f| {
                f.when
                    .as_ref()
                    .is_some_and(|c| filled.get(&c.field) == Some(&c.equals))
            })
            .collect();
        if opened.is_empty() {
            return filled;
        }
        for field in opened {
            filled.insert(field.name.clone(), value_for(field, dice, inputs));
        }
    }
}
