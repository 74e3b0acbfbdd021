//! Generated answers: a plausible value for a field of each type, free text, dates and amounts chosen by
//! the field's name (and dates and billed amounts by the request's inputs).

use std::collections::BTreeMap;

use chrono::{Days, NaiveDate};
use switchboard_storage::{FieldRecord, FieldType, SchemaDefinition};

use super::dice::{reference_number, representative_name, Dice, FIRST_NAMES, LAST_NAMES};

/// The first date the request's inputs name, else a day in 2026 fixed by the dice.
fn base_date(dice: &Dice, inputs: &BTreeMap<String, String>) -> NaiveDate {
    [
        "dateOfService",
        "beginningDateOfService",
        "claimSubmittedDate",
    ]
    .iter()
    .find_map(|key| NaiveDate::parse_from_str(inputs.get(*key)?.trim(), "%Y-%m-%d").ok())
    .unwrap_or_else(|| {
        let start = NaiveDate::from_ymd_opt(2026, 1, 5).expect("valid date");
        start + Days::new(dice.pick("base-date", 200))
    })
}

fn date_value(name: &str, dice: &Dice, inputs: &BTreeMap<String, String>) -> String {
    let base = base_date(dice, inputs);
    let roll = |lo, hi| Days::new(dice.range(name, lo, hi));
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    let date = if has(&["effective"]) {
        base - roll(30, 400)
    } else if has(&["termination"]) {
        base - roll(1, 60)
    } else if has(&["received"]) {
        base + roll(3, 20)
    } else if has(&["processed"]) {
        base + roll(20, 45)
    } else if has(&["payment", "paid"]) {
        base + roll(30, 60)
    } else if has(&["deadline", "validto", "expir"]) {
        base + roll(90, 180)
    } else if has(&["validfrom", "start"]) {
        base + roll(0, 7)
    } else {
        base + roll(1, 120)
    };
    date.format("%Y-%m-%d").to_string()
}

/// An amount in cents; a "...Met" amount is a part of the total it counts toward.
fn dollar_cents(name: &str, dice: &Dice, inputs: &BTreeMap<String, String>) -> u64 {
    let charge = inputs
        .get("claimChargeAmount")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|c| c.is_finite() && *c >= 0.0);
    let billed = name.contains("billed") || name.contains("charge");
    if let Some(total) = name.strip_suffix("met") {
        let total = match total.ends_with("outofpocket") {
            true => format!("{total}max"),
            false => total.to_string(),
        };
        dollar_cents(&total, dice, inputs) * dice.range(name, 0, 99) / 100 + dice.pick("cents", 100)
    } else if name.contains("deductible") {
        *dice.choose(name, &[500, 1_000, 1_500, 2_000, 3_000, 5_000]) * 100
    } else if name.contains("outofpocket") {
        *dice.choose(name, &[3_000, 4_500, 6_000, 7_500, 9_100]) * 100
    } else if name.contains("copay") {
        *dice.choose(name, &[20, 25, 30, 40, 50, 75]) * 100
    } else if let (true, Some(charge)) = (billed, charge) {
        (charge * 100.0).round() as u64
    } else {
        dice.range(name, 2_500, 480_000)
    }
}

/// Free-text answers drawn from a pool, by the words a field name contains (first match wins).
const POOLS: [(&[&str], &[&str]); 9] = [
    (
        &["portal"],
        &[
            "Availity Essentials",
            "Provider Express",
            "the payer's provider portal",
        ],
    ),
    (
        &["document"],
        &[
            "Denial letter and itemized claim",
            "Medical records and a letter of medical necessity",
        ],
    ),
    (
        &["denial", "code"],
        &["CO-50", "CO-197", "CO-16", "CO-97", "PR-204", "CO-11"],
    ),
    (
        &["reason", "pend"],
        &[
            "Awaiting medical records",
            "Coordination of benefits review",
            "Itemized bill requested",
        ],
    ),
    (
        &["auth", "denial"],
        &[
            "Clinical criteria for medical necessity not met",
            "Insufficient clinical documentation",
            "Service not covered under the member's plan",
        ],
    ),
    (
        &["reason"],
        &[
            "Service not medically necessary",
            "Missing prior authorization",
            "Timely filing limit exceeded",
        ],
    ),
    (&["days"], &["30", "60", "90", "180", "365"]),
    (&["percent"], &["10%", "20%", "30%", "40%"]),
    (&["coinsurance"], &["10%", "20%", "30%", "40%"]),
];

fn alphanumeric_value(name: &str, dice: &Dice) -> String {
    let has = |word: &str| name.contains(word);
    let numbered = has("number") || has("id");
    if has("reference") {
        reference_number(dice, name)
    } else if has("representative") && has("name") {
        representative_name(dice)
    } else if has("phone") || has("fax") {
        let area = dice.choose(name, &["800", "866", "877", "888"]);
        format!("{area}5550{}", dice.range(name, 100, 199))
    } else if has("address") {
        let city = dice.choose(
            "city",
            &[
                "Lexington, KY 40512",
                "Atlanta, GA 30374",
                "Dallas, TX 75266",
            ],
        );
        format!(
            "Attn: Appeals Unit, PO Box {}, {city}",
            dice.range(name, 1_000, 99_999)
        )
    } else if has("form") {
        format!(
            "Provider Appeal Request Form (PARF-{})",
            dice.digits(name, 4)
        )
    } else if has("check") || has("eft") || has("trace") {
        format!(
            "{}{}",
            dice.choose("instrument", &["CHK", "EFT"]),
            dice.digits(name, 9)
        )
    } else if has("claim") && numbered {
        format!("26{}", dice.digits(name, 11))
    } else if has("auth") && numbered {
        format!("PA-{}", dice.digits(name, 8))
    } else if has("used") || has("units") {
        dice.range(name, 1, 12).to_string()
    } else if has("visit") {
        format!(
            "{} visits per calendar year",
            dice.choose(name, &[12, 20, 30, 60])
        )
    } else if let Some((_, pool)) = POOLS.iter().find(|(words, _)| words.iter().all(|w| has(w))) {
        dice.choose(name, pool).to_string()
    } else if has("limit") {
        dice.choose(name, &["30", "60", "90", "180", "365"])
            .to_string()
    } else if has("name") {
        format!(
            "{} {}",
            dice.choose(name, &FIRST_NAMES),
            dice.choose("last", &LAST_NAMES)
        )
    } else {
        dice.code(name, 6)
    }
}

/// Fills, with [`value_for`], the conditional fields of `schema` that `carried` admits and whose condition
/// holds on what `filled` holds, again and again: a condition may rest on a conditional field, so a chain
/// opens one link per round until nothing more opens.
pub(crate) fn fill_conditional(
    schema: &SchemaDefinition,
    carried: impl Fn(&FieldRecord) -> bool,
    filled: &mut BTreeMap<String, String>,
    dice: &Dice,
    inputs: &BTreeMap<String, String>,
) {
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
            return;
        }
        for field in opened {
            filled.insert(field.name.clone(), value_for(field, dice, inputs));
        }
    }
}

/// A plausible answer for `field`, by its type and (for free text, dates and amounts) its name.
pub(crate) fn value_for(
    field: &FieldRecord,
    dice: &Dice,
    inputs: &BTreeMap<String, String>,
) -> String {
    let name = field.name.to_ascii_lowercase();
    match field.field_type {
        FieldType::Boolean => {
            let likely_yes = name.contains("active") || name.contains("innetwork");
            let yes = if likely_yes {
                dice.pick(&name, 4) != 0
            } else {
                dice.pick(&name, 2) == 0
            };
            yes.to_string()
        }
        FieldType::Multiple => match field.allowed_values.as_deref() {
            Some(values) if !values.is_empty() => dice.choose(&name, values).clone(),
            _ => dice.code(&name, 6),
        },
        FieldType::Dollar => {
            let cents = dollar_cents(&name, dice, inputs);
            format!("{}.{:02}", cents / 100, cents % 100)
        }
        FieldType::Date => date_value(&name, dice, inputs),
        FieldType::Alphanumeric => alphanumeric_value(&name, dice),
    }
}
