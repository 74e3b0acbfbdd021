//! The simulator's electronic channel (`[electronic] kind = "simulated"`): an eligibility inquiry (X12
//! 270/271) for benefits requests and a claim-status inquiry (276/277) for claim-status requests, answered
//! only by payers reachable electronically, and only with the fields such a response carries. A schema
//! that declares an electronic mapping is answered on exactly its mapped fields, as a real clearinghouse
//! answer would be; a schema without one on the fields whose names a 271 or 277 typically fills.

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use switchboard_storage::{ElectronicSource, FieldRecord, SchemaDefinition};

use super::stedi::mapping::source_label;
use super::{ElectronicAnswer, ElectronicChannel, ElectronicJob};
use crate::dialer::sandbox::dice::Dice;
use crate::dialer::sandbox::values::{fill_conditional, value_for};
use crate::dialer::simulated::decide::chance;

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
/// Key under which the channel joins the inputs the dice hash, so its rolls differ from any call's.
const CHANNEL_KEY: &str = "\u{0}dialedNumber";

/// The seeded simulator's electronic channel.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimulatedElectronic;

impl ElectronicChannel for SimulatedElectronic {
    fn name(&self) -> &'static str {
        "simulated"
    }

    /// Payers reachable electronically answer benefits requests (271) and, sometimes, claim-status
    /// requests (277) with the fields such a response carries; everything else gets nothing.
    fn inquire(&self, job: ElectronicJob) -> BoxFuture<'static, ElectronicAnswer> {
        // The simulator stands for a clearinghouse: whenever it has a transaction to send, one is billed,
        // whether or not the payer answers with anything usable.
        let transactions =
            u32::from(job.payer_electronic && transaction(&job.schema.definition).is_some());
        let answer = if job.payer_electronic {
            let mut keyed = job.inputs.clone();
            keyed.insert(CHANNEL_KEY.to_string(), "electronic".to_string());
            let dice = Dice::new(job.seed, &keyed, 0, 1);
            let schema = &job.schema.definition;
            let captured = electronic_fields(schema, &dice, &job.inputs);
            match captured.is_empty() {
                true => ElectronicAnswer::nothing("no usable response from the payer"),
                false => ElectronicAnswer {
                    sources: captured
                        .keys()
                        .map(|f| (f.clone(), simulated_source(schema, f)))
                        .collect(),
                    transaction_id: Some(format!("sim-{}", job.request_id)),
                    captured,
                    outcome: "answered".to_owned(),
                    transactions,
                },
            }
        } else {
            ElectronicAnswer::nothing("payer not reachable electronically")
        };
        let answer = ElectronicAnswer {
            transactions,
            ..answer
        };
        Box::pin(futures::future::ready(answer))
    }
}

/// The element a simulated answer stands for: the mapped one, else the transaction.
fn simulated_source(schema: &SchemaDefinition, field: &str) -> String {
    match schema.electronic.fields.get(field) {
        Some(source) => source_label(source),
        None if is_claim_status(&schema.request_type) => "simulated 277".to_owned(),
        None => "simulated 271".to_owned(),
    }
}

fn is_claim_status(request_type: &str) -> bool {
    let kind = request_type.to_ascii_lowercase();
    kind.contains("claim") && !kind.contains("appeal")
}

/// Which transaction a request type maps to, by its name; `None`: nothing electronic to ask.
fn transaction(schema: &SchemaDefinition) -> Option<(&'static [&'static str], f64)> {
    let kind = schema.request_type.to_ascii_lowercase();
    let claim_mapped = schema
        .electronic
        .fields
        .values()
        .any(|s| matches!(s, ElectronicSource::Claim(_)));
    if kind.contains("vob") || kind.contains("eligib") || kind.contains("benefit") {
        Some((&ELIGIBILITY_WORDS, ELIGIBILITY_RESPONSE_RATE))
    } else if is_claim_status(&kind) || claim_mapped {
        Some((&CLAIM_STATUS_WORDS, CLAIM_STATUS_RESPONSE_RATE))
    } else if !schema.electronic.fields.is_empty() {
        Some((&ELIGIBILITY_WORDS, ELIGIBILITY_RESPONSE_RATE))
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
    let Some((words, response_rate)) = transaction(schema) else {
        return filled;
    };
    if !chance(dice, "sim:electronic:response", response_rate) {
        return filled;
    }
    let mapped = !schema.electronic.fields.is_empty();
    let carried = |field: &FieldRecord| match mapped {
        true => schema.electronic.fields.contains_key(&field.name),
        false => {
            let name = field.name.to_ascii_lowercase();
            words.iter().any(|w| name.contains(w))
        }
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
    fill_conditional(schema, carried, &mut filled, dice, inputs);
    filled
}
