//! The generated prose of a sandbox call: the transcript of the conversation with the representative, the
//! agent's post-call notes, the summary and the audit summary. This file owns the shared [`Context`] (the
//! opening of every conversation, how answers are spoken) and completed calls; `failures.rs` the calls
//! that captured nothing.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use switchboard_storage::{FieldType, SchemaDefinition};

use super::capture::CANNOT_ANSWER;
use super::dice::{reference_number, representative_name, Dice};

/// What a call's prose is generated from.
pub(crate) struct Context<'a> {
    pub schema: &'a SchemaDefinition,
    pub inputs: &'a BTreeMap<String, String>,
    pub number: &'a str,
    pub dice: &'a Dice,
}

/// The generated prose of one call.
pub(crate) struct Texts {
    pub transcript: Option<String>,
    pub post_call: String,
    pub summary: String,
    pub audit: String,
}

pub(crate) const COMPLIANCE: &str =
    "Compliance: the agent identified itself as an automated assistant calling for the provider, \
disclosed that the call was recorded and shared only the minimum necessary PHI.";

impl Context<'_> {
    fn input(&self, key: &str) -> Option<&str> {
        self.inputs
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    pub(crate) fn payer(&self) -> &str {
        self.input("payerName").unwrap_or("the payer")
    }

    fn purpose(&self) -> String {
        match self.schema.request_type.as_str() {
            "claim-status" => "the status of a claim".to_string(),
            "claim-appeal" => "the appeal options for a denied claim".to_string(),
            "vob" => "a member's benefits".to_string(),
            "prior-auth" => "the status of a prior authorization".to_string(),
            other => format!("a {} request", other.replace('-', " ")),
        }
    }

    pub(crate) fn dialed(&self) -> String {
        let n = self.number;
        match n.len() == 10 && n.bytes().all(|b| b.is_ascii_digit()) {
            true => format!("({}) {}-{}", &n[..3], &n[3..6], &n[6..]),
            false => n.to_string(),
        }
    }

    /// A captured answer usable in prose (not a non-answer), found by words in its field name.
    fn answer<'v>(
        &self,
        captured: &'v BTreeMap<String, String>,
        words: &[&str],
    ) -> Option<&'v str> {
        captured.iter().find_map(|(name, value)| {
            let name = name.to_ascii_lowercase();
            let fits = words.iter().all(|w| name.contains(w)) && !value.starts_with(CANNOT_ANSWER);
            fits.then_some(value.as_str())
        })
    }

    /// The greeting, the agent's introduction and the identification of provider and patient.
    pub(crate) fn opening(&self, rep: &str) -> Vec<String> {
        let mut lines = vec![
            format!(
                "Representative: Thank you for calling {} provider services, my name is {rep}. \
                 How can I help you?",
                self.payer()
            ),
            format!(
                "Agent: Hi, I'm an automated assistant calling on behalf of a provider's office \
                 about {}. This call is recorded.",
                self.purpose()
            ),
        ];
        if let Some(npi) = self.input("billingProviderNpi") {
            let tax = self
                .input("billingProviderTaxId")
                .map(|t| format!(", tax ID {t}"))
                .unwrap_or_default();
            lines.push("Representative: Sure. Can I have the provider's NPI?".into());
            lines.push(format!("Agent: The billing provider NPI is {npi}{tax}."));
        }
        if let Some(member) = self.input("memberId") {
            lines.push("Representative: And the member ID?".into());
            lines.push(format!("Agent: The member ID is {member}."));
        }
        let patient = [
            self.input("patientFirstName"),
            self.input("patientLastName"),
        ]
        .into_iter()
        .flatten();
        let patient: Vec<&str> = patient.collect();
        if !patient.is_empty() {
            let dob = self
                .input("patientDateOfBirth")
                .map(|d| format!(", date of birth {}", spoken_date(d)));
            lines.push("Representative: Patient's name and date of birth?".into());
            lines.push(format!(
                "Agent: {}{}.",
                patient.join(" "),
                dob.unwrap_or_default()
            ));
        }
        if let Some(dos) = self.input("dateOfService") {
            let claim = self
                .input("claimNumber")
                .map(|c| format!(", claim number {c}"))
                .unwrap_or_default();
            lines.push("Representative: What's the date of service?".into());
            lines.push(format!("Agent: {}{claim}.", spoken_date(dos)));
        }
        lines
    }

    pub(crate) fn verified(&self) -> String {
        let items: Vec<String> = [
            ("member ID", "memberId"),
            ("patient first name", "patientFirstName"),
            ("patient last name", "patientLastName"),
            ("patient date of birth", "patientDateOfBirth"),
            ("billing provider NPI", "billingProviderNpi"),
            ("tax ID", "billingProviderTaxId"),
            ("date of service", "dateOfService"),
            ("claim number", "claimNumber"),
        ]
        .iter()
        .filter_map(|(label, key)| self.input(key).map(|v| format!("{label} {v}")))
        .collect();
        match items.is_empty() {
            true => "Verified: caller identity only.".to_string(),
            false => format!("Verified: {}.", items.join("; ")),
        }
    }
}

/// `2026-03-04` as "March 4, 2026"; anything else as given.
fn spoken_date(value: &str) -> String {
    NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .map(|d| d.format("%B %-d, %Y").to_string())
        .unwrap_or_else(|_| value.to_string())
}

/// `1234.5` as "$1,234.50".
fn spoken_dollars(value: &str) -> String {
    let (whole, cents) = value.split_once('.').unwrap_or((value, "00"));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("${grouped}.{cents}")
}

fn spoken(field_type: FieldType, value: &str) -> String {
    if value.starts_with(CANNOT_ANSWER) {
        return "I'm sorry, I'm not able to find that information on my end.".to_string();
    }
    match field_type {
        FieldType::Boolean if value == "true" => "Yes.".to_string(),
        FieldType::Boolean => "No.".to_string(),
        FieldType::Multiple if value.len() <= 3 => format!("{value}."),
        FieldType::Multiple => {
            let words = value.to_ascii_lowercase().replace('_', " ");
            let mut chars = words.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase()).into_iter();
            format!("{}.", first.chain(chars).collect::<String>())
        }
        FieldType::Dollar => format!("That's {}.", spoken_dollars(value)),
        FieldType::Date => format!("That would be {}.", spoken_date(value)),
        FieldType::Alphanumeric if value.contains(' ') => format!("{value}."),
        FieldType::Alphanumeric => format!("It's {value}."),
    }
}

/// A call in which the representative answered everything in `captured`.
pub(crate) fn completed(ctx: &Context, captured: &BTreeMap<String, String>) -> Texts {
    let rep_field = ctx
        .answer(captured, &["representative", "name"])
        .map(str::to_string);
    let rep = rep_field.unwrap_or_else(|| representative_name(ctx.dice));
    let ref_field = ctx
        .schema
        .fields
        .iter()
        .find(|f| f.name.to_ascii_lowercase().contains("reference"));
    let reference = match ref_field.and_then(|f| captured.get(&f.name)) {
        Some(value) if value.starts_with(CANNOT_ANSWER) => None,
        Some(value) => Some(value.clone()),
        None => Some(reference_number(ctx.dice, "transcript:reference")),
    };
    let mut lines = ctx.opening(&rep);
    lines.push(
        "Representative: Thank you, I have the member's record open. What would you like to know?"
            .into(),
    );
    for field in ctx.schema.fields.iter().filter(|f| Some(*f) != ref_field) {
        if let Some(value) = captured.get(&field.name) {
            lines.push(format!("Agent: {}", field.description));
            lines.push(format!(
                "Representative: {}",
                spoken(field.field_type, value)
            ));
        }
    }
    lines.push("Agent: Could I get a reference number for this call?".into());
    lines.push(match &reference {
        Some(reference) => format!("Representative: Sure, the reference number is {reference}."),
        None => {
            "Representative: I'm sorry, our system isn't generating reference numbers right now."
                .into()
        }
    });
    lines.push("Agent: Thank you, that's everything I needed.".into());
    lines.push("Representative: You're welcome. Have a great day.".into());

    let unanswered: Vec<&str> = ctx
        .schema
        .fields
        .iter()
        .filter(|f| {
            captured
                .get(&f.name)
                .is_some_and(|v| v.starts_with(CANNOT_ANSWER))
        })
        .map(|f| f.label.as_str())
        .collect();
    let gap = match unanswered.is_empty() {
        true => String::new(),
        false => format!(
            " The representative could not answer: {}.",
            unanswered.join(", ")
        ),
    };
    let headline = ctx.schema.fields.iter().find_map(|f| {
        let value = captured
            .get(&f.name)
            .filter(|v| f.required && !v.starts_with(CANNOT_ANSWER))?;
        (f.field_type == FieldType::Multiple)
            .then(|| format!(" {}: {}", f.label, spoken(f.field_type, value)))
    });
    let reference_text = reference
        .as_deref()
        .map(|r| format!(" Reference number {r}."))
        .unwrap_or_default();
    let name = ctx
        .schema
        .name
        .as_deref()
        .unwrap_or(&ctx.schema.request_type);
    let (payer, count) = (ctx.payer(), captured.len());
    Texts {
        transcript: Some(lines.join("\n")),
        post_call: format!(
            "Agent notes: called {payer} at {} and spoke with {rep}. \
             Recorded {count} answers for {name}.{gap}{reference_text}",
            ctx.dialed()
        ),
        summary: format!(
            "Reached {rep} at {payer} and asked about {}; \
             {count} answers captured.{}{gap}{reference_text}",
            ctx.purpose(),
            headline.unwrap_or_default()
        ),
        audit: format!(
            "{} Representative {rep} provided the answers.{reference_text} {COMPLIANCE}",
            ctx.verified()
        ),
    }
}
