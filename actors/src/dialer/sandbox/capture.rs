//! Which fields a completed call captures (required, some optional, conditional ones whose condition
//! holds, an explicit non-answer for `cannot_answer`) and which the electronic channel fills.

use std::collections::BTreeMap;

use switchboard_storage::{FieldRecord, FieldType, SchemaDefinition};

use super::dice::Dice;
use super::values::{fill_conditional, value_for};

/// Prefix of an explicit non-answer (service-interface 2.2 rule 2).
pub(super) const CANNOT_ANSWER: &str = "CANNOT ANSWER - ";

const UNANSWERED: [&str; 3] = [
    "representative could not locate the information",
    "information not available to the representative",
    "representative was not able to provide this on the call",
];

/// How a completed call answers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Answering {
    /// One required field (chosen by the dice) gets `CANNOT ANSWER - <reason>`.
    pub cannot_answer: bool,
    /// A required `multiple` field offering `DENIED` answers it (what an appeals follow-up follows).
    pub prefer_denied: bool,
}

/// What a completed call captures: every required field, about half of the optional unconditional ones,
/// then every conditional field whose condition holds on what was captured (repeated for chains). Fields
/// in `known` (answered electronically before the call) are not asked again, and conditions are decided on
/// them as on the call's own answers, so the call never contradicts them.
pub(crate) fn capture(
    schema: &SchemaDefinition,
    dice: &Dice,
    inputs: &BTreeMap<String, String>,
    answering: Answering,
    known: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut captured: BTreeMap<String, String> = schema
        .fields
        .iter()
        .filter_map(|f| Some((f.name.clone(), known.get(&f.name)?.clone())))
        .collect();
    let required: Vec<&FieldRecord> = schema
        .fields
        .iter()
        .filter(|f| f.required && !known.contains_key(&f.name))
        .collect();
    for field in &required {
        let denied = answering.prefer_denied
            && field.field_type == FieldType::Multiple
            && field.allowed_values.iter().flatten().any(|v| v == "DENIED");
        let value = if denied {
            "DENIED".to_string()
        } else {
            value_for(field, dice, inputs)
        };
        captured.insert(field.name.clone(), value);
    }
    if answering.cannot_answer && !required.is_empty() {
        let field = dice.choose("cannot-answer:field", &required);
        let reason = dice.choose("cannot-answer:reason", &UNANSWERED);
        captured.insert(field.name.clone(), format!("{CANNOT_ANSWER}{reason}"));
    }
    for field in schema
        .fields
        .iter()
        .filter(|f| !f.required && f.when.is_none() && !known.contains_key(&f.name))
    {
        if dice.pick(&format!("optional:{}", field.name), 2) == 0 {
            captured.insert(field.name.clone(), value_for(field, dice, inputs));
        }
    }
    loop {
        let opened: Vec<&FieldRecord> = schema
            .fields
            .iter()
            .filter(|f| !captured.contains_key(&f.name))
            .filter(|f| {
                f.when
                    .as_ref()
                    .is_some_and(|c| captured.get(&c.field) == Some(&c.equals))
            })
            .collect();
        if opened.is_empty() {
            captured.retain(|name, _| !known.contains_key(name));
            return captured;
        }
        for field in opened {
            captured.insert(field.name.clone(), value_for(field, dice, inputs));
        }
    }
}

/// What the electronic channel fills, following what a real clearinghouse answer can carry: only the
/// fields the schema maps to an element of an electronic answer, so fields that only a call can answer,
/// such as a representative's name or a call reference number, are left to the call. A schema that maps
/// no field at all (one written without mappings, as the operator contract's schema shape has none) is
/// answered as if every field were mapped, call-only ones included, since nothing tells them apart: its
/// `digital` scenarios still end electronically, as the contract's scenario table says they do on any
/// schema.
///
/// `all` (the `digital` scenario): every mapped field, conditional ones whose condition holds on what the
/// answer filled. Otherwise (`digital_plus_phone`): part of the mapped required fields fixed by the dice
/// (half, at least one), never all of the required fields, so a call is still needed.
pub(crate) fn electronic_fields(
    schema: &SchemaDefinition,
    dice: &Dice,
    inputs: &BTreeMap<String, String>,
    all: bool,
) -> BTreeMap<String, String> {
    let unmapped = schema.electronic.fields.is_empty();
    let carried = |f: &FieldRecord| unmapped || schema.electronic.fields.contains_key(&f.name);
    if !all {
        let mut required: Vec<&FieldRecord> = schema
            .fields
            .iter()
            .filter(|f| f.required && carried(f))
            .collect();
        let phone_only_required = schema.fields.iter().any(|f| f.required && !carried(f));
        let most = match phone_only_required {
            true => required.len(),
            false => required.len().saturating_sub(1),
        };
        let take = (required.len() / 2).max(1).min(most);
        required.sort_by_key(|f| {
            (
                dice.pick(&format!("electronic:{}", f.name), u64::MAX),
                f.name.clone(),
            )
        });
        return required
            .into_iter()
            .take(take)
            .map(|f| (f.name.clone(), value_for(f, dice, inputs)))
            .collect();
    }
    let mut filled: BTreeMap<String, String> = schema
        .fields
        .iter()
        .filter(|f| f.when.is_none() && carried(f))
        .map(|f| (f.name.clone(), value_for(f, dice, inputs)))
        .collect();
    fill_conditional(schema, carried, &mut filled, dice, inputs);
    filled
}
