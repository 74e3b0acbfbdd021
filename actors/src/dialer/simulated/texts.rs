//! The prose of simulated calls. Completed calls, lookups that failed and missing inputs reuse the sandbox
//! dialogue; this file adds what the sandbox has no words for (hold times, phone-tree loops, after-hours
//! messages, referrals, wrong departments, refusals) and stamps the timing into the agent's notes.

use std::collections::BTreeMap;

use switchboard_storage::{Disposition, FailureRecord};

use super::profile::PayerFamily;
use super::timing::Timing;
use crate::dialer::sandbox::dialogue::{self, Context, Texts, COMPLIANCE};
use crate::dialer::sandbox::dice::representative_name;
use crate::dialer::sandbox::failures;

/// `8005550187` as "(800) 555-0187".
pub(crate) fn display_number(number: &str) -> String {
    match number.len() == 10 && number.bytes().all(|b| b.is_ascii_digit()) {
        true => format!("({}) {}-{}", &number[..3], &number[3..6], &number[6..]),
        false => number.to_string(),
    }
}

fn minutes(seconds: u32) -> u32 {
    (seconds + 30) / 60
}

fn plural(n: u32, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    }
}

/// A completed call: the sandbox conversation, with the phone tree and hold time noted.
pub(crate) fn completed(
    ctx: &Context,
    captured: &BTreeMap<String, String>,
    timing: Timing,
) -> Texts {
    let mut texts = dialogue::completed(ctx, captured);
    let (ivr, hold) = (
        plural(minutes(timing.ivr), "minute"),
        plural(minutes(timing.hold), "minute"),
    );
    texts.transcript = texts.transcript.map(|t| {
        format!(
            "[Phone menu navigated in {ivr}; on hold {hold} before a representative answered]\n{t}"
        )
    });
    texts.post_call = format!("{} Phone menu {ivr}, hold {hold}.", texts.post_call);
    texts.summary = format!("{} Hold time {hold}.", texts.summary);
    texts
}

const AFTER_HOURS: [&str; 3] = [
    "Thank you for calling provider services. Our office is currently closed. Our hours are Monday \
     through Friday, 8 a.m. to 5 p.m. Please call back during normal business hours.",
    "All of our representatives are assisting other callers. Please leave your name and number after \
     the tone and we will return your call within two business days.",
    "Due to high call volume we are unable to answer your call at this time. Please try again later or \
     visit our provider portal.",
];

/// Voicemail or hold timeout: no representative, no transcript; the notes say what the line did.
pub(crate) fn unanswered(ctx: &Context, disposition: Disposition, timing: Timing) -> Texts {
    let mut texts = failures::unanswered(ctx, disposition);
    let (payer, dialed) = (ctx.payer(), ctx.dialed());
    let what = match disposition {
        Disposition::HoldTimeout => format!(
            "spent {} in the phone menu, then waited {} on hold without reaching a representative \
             (hold limit reached)",
            plural(minutes(timing.ivr), "minute"),
            plural(minutes(timing.hold), "minute")
        ),
        _ => format!(
            "the line played a recorded message (\"{}\") and offered only voicemail",
            ctx.dice.choose("sim:after-hours", &AFTER_HOURS)
        ),
    };
    texts.post_call = format!(
        "Agent notes: called {payer} at {dialed}; {what}. No message with PHI was left; a redial is needed."
    );
    texts
}

const PHONE_TREE_LOOPS: [&str; 4] = [
    "The phone tree asked for the billing provider's NPI, did not accept it and returned to the main menu",
    "Saying \"representative\" and pressing 0 both sent the agent back to the main menu",
    "The provider option required a member ID format the menu would not accept and replayed the prompt",
    "Every option led to the automated self-service eligibility line, which looped back to the start",
];

/// An IVR failure: the phone tree never let the agent through to a representative.
pub(crate) fn ivr_failure(ctx: &Context, failure: &FailureRecord, timing: Timing) -> Texts {
    let mut texts = failures::failed(ctx, failure);
    let passes = ctx.dice.range("sim:ivr:passes", 3, 6);
    texts.post_call = format!(
        "Agent notes: called {} at {}. {}. After {passes} passes through the menu and {} no representative \
         was reached, so the call was ended. Outcome {} ({}).",
        ctx.payer(),
        ctx.dialed(),
        ctx.dice.choose("sim:ivr:loop", &PHONE_TREE_LOOPS),
        plural(minutes(timing.ivr), "minute"),
        failure.code,
        failure.category
    );
    texts
}

const DEPARTMENTS: [&str; 4] = [
    "claims department",
    "behavioral health unit",
    "Medicare Advantage provider line",
    "benefits verification unit",
];

/// A referral: the representative gives `number` to call instead.
pub(crate) fn referral(ctx: &Context, family: PayerFamily, number: &str) -> Texts {
    let rep = representative_name(ctx.dice);
    let spoken = display_number(number);
    let mut lines = ctx.opening(&rep);
    let destination = if family == PayerFamily::BlueCrossBlueShield {
        lines.push(
            "Representative: I see this member's ID prefix belongs to another Blue plan. Under BlueCard, \
             eligibility, benefits and claim questions go to the member's home plan."
                .into(),
        );
        lines.push("Agent: Could you give me the home plan's provider services number?".into());
        "the member's home plan".to_string()
    } else {
        let department = ctx.dice.choose("sim:referral:department", &DEPARTMENTS);
        lines.push(format!(
            "Representative: This line can't help with that request; it's handled by our {department}, \
             and I'm not able to transfer the call."
        ));
        lines.push("Agent: What number should I call to reach them?".into());
        format!("the {department}")
    };
    lines.push(format!("Representative: Their provider line is {spoken}."));
    lines.push(format!("Agent: {spoken}. Thank you, I'll call them."));
    let payer = ctx.payer();
    Texts {
        transcript: Some(lines.join("\n")),
        post_call: format!(
            "Agent notes: called {payer} at {} and spoke with {rep}, who referred the call to {destination} \
             at {spoken}. Nothing captured; a call to the referred number is needed.",
            ctx.dialed()
        ),
        summary: format!(
            "{rep} at {payer} referred the call to {destination} at {spoken}; nothing captured yet."
        ),
        audit: format!("{} {COMPLIANCE}", ctx.verified()),
    }
}

const WRONG_DEPARTMENTS: [&str; 5] = [
    "member enrollment",
    "pharmacy help desk",
    "dental benefits",
    "broker services",
    "premium billing",
];

/// A wrong number: the line belongs to another department, which cannot transfer to provider services.
pub(crate) fn wrong_department(ctx: &Context, failure: &FailureRecord) -> Texts {
    let rep = representative_name(ctx.dice);
    let department = ctx.dice.choose("sim:wrong-department", &WRONG_DEPARTMENTS);
    let payer = ctx.payer();
    let lines = [
        format!("Representative: Thank you for calling {department}, this is {rep}."),
        format!(
            "Agent: Hi, I'm an automated assistant calling on behalf of a provider's office for {payer} \
             provider services."
        ),
        format!(
            "Representative: You've reached {department}; this is the wrong department for provider \
             inquiries. I'm not able to transfer you, and I don't have a number for provider services."
        ),
        "Agent: Understood, thank you for your time.".to_string(),
    ];
    Texts {
        transcript: Some(lines.join("\n")),
        post_call: format!(
            "Agent notes: called {} and reached {department} instead of {payer} provider services; the \
             representative could not transfer the call. Outcome {} ({}): {}",
            ctx.dialed(),
            failure.code,
            failure.category,
            failure.message
        ),
        summary: format!(
            "The number dialed for {payer} reached {department}, not provider services: {}",
            failure.message
        ),
        audit: "No PHI was disclosed: the call did not reach the payer's provider services.".into(),
    }
}

const REFUSALS: [&str; 4] = [
    "I wasn't able to complete HIPAA verification: the tax ID and NPI you gave don't match a provider \
     on this member's record, so I can't release anything.",
    "Our policy doesn't allow me to release protected health information to an automated caller. \
     Someone from the office will need to call us directly.",
    "There's a privacy restriction on this member's account, so I can't discuss it with a third party.",
    "I can't confirm the treating relationship between this provider and the member, so I'm not able \
     to give out that information.",
];

/// A refusal: the representative will not release the information.
pub(crate) fn refusal(ctx: &Context, failure: &FailureRecord) -> Texts {
    let mut texts = failures::failed(ctx, failure);
    let rep = representative_name(ctx.dice);
    let mut lines = ctx.opening(&rep);
    lines.push(format!(
        "Representative: {}",
        ctx.dice.choose("sim:refusal", &REFUSALS)
    ));
    lines.push("Agent: I understand. Is there anything else I can provide to verify?".into());
    lines.push("Representative: I'm sorry, not on this call.".into());
    lines.push("Agent: Understood, thank you for checking.".into());
    texts.transcript = Some(lines.join("\n"));
    texts
}
