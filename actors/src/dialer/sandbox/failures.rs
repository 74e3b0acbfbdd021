//! The prose of sandbox calls that captured nothing: calls that never reached a representative (voicemail,
//! hold timeout) and calls that failed with a failure code (not found, refused, wrong number, IVR).

use switchboard_storage::{Disposition, FailureCode, FailureRecord};

use super::dialogue::{Context, Texts, COMPLIANCE};
use super::dice::representative_name;
use super::scenario::{code_subject, failure_kind, FailureKind};

/// Codes whose call reached a business that is not the payer.
const WRONG_NUMBER_CODES: [FailureCode; 4] = [
    FailureCode::PhoneNumberIncorrect,
    FailureCode::InputPhoneNumberIncorrect,
    FailureCode::RepresentativePhoneNumberIncorrect,
    FailureCode::MatchedPhoneNumberIncorrect,
];

/// A call that never reached a representative (voicemail or hold timeout).
pub(crate) fn unanswered(ctx: &Context, disposition: Disposition) -> Texts {
    let what = match disposition {
        Disposition::HoldTimeout => "stayed on hold past the hold limit without reaching anyone",
        _ => "reached the after-hours voicemail of provider services",
    };
    let payer = ctx.payer();
    Texts {
        transcript: None,
        post_call: format!(
            "Agent notes: called {payer} at {}, navigated the IVR and {what}. \
             No message with PHI was left; a redial is needed.",
            ctx.dialed()
        ),
        summary: format!("No representative reached at {payer}: the agent {what}. Redial needed."),
        audit: "No PHI was disclosed: the call ended before a representative answered.".into(),
    }
}

/// The representative's side of a failed conversation after the opening: lines before the closing line
/// (with the agent's replies), then the closing line. `None` for codes without a conversation.
fn refusal(code: &FailureCode) -> Option<(Vec<String>, String)> {
    let line = match (failure_kind(code), code) {
        (FailureKind::EntityNotFound(entity), _) => format!(
            "I'm sorry, I'm not finding a {entity} matching that information in our system. \
             I searched every way I can."
        ),
        (FailureKind::MissingInput, _) => {
            let subject = code_subject(code, "_MISSING");
            let before = vec![
                format!("Representative: Before I can go further I need the {subject}."),
                format!("Agent: I'm sorry, I don't have the {subject} available."),
            ];
            let closing =
                "Then I can't release the information. Please call back once you have it.";
            return Some((before, closing.into()));
        }
        (FailureKind::IncorrectInput, _) => format!(
            "The {} you gave doesn't match what we have on file, so I can't go further. \
             Please verify it and call back.",
            code_subject(code, "_INCORRECT")
        ),
        (_, FailureCode::PayerRefusal) => {
            "I'm sorry, I'm not able to release that information over the phone \
                                 to an automated caller."
                .into()
        }
        (_, FailureCode::RequiresOtherChannel) => {
            "We don't give that out by phone anymore. Please use the \
                                          provider portal or send the request by fax."
                .into()
        }
        _ => return None,
    };
    Some((Vec::new(), line))
}

/// A call that failed with `failure`.
pub(crate) fn failed(ctx: &Context, failure: &FailureRecord) -> Texts {
    let rep = representative_name(ctx.dice);
    let code = &failure.code;
    let payer = ctx.payer();
    let wrong_number = WRONG_NUMBER_CODES.contains(code);
    let transcript = if wrong_number {
        let businesses = [
            "Lakeside Family Dental",
            "Metro Auto Glass",
            "Riverside Pharmacy",
        ];
        let business = ctx.dice.choose("wrong-number", &businesses);
        let lines = [
            format!("Representative: Good afternoon, {business}."),
            format!(
                "Agent: Hi, I'm an automated assistant trying to reach {payer} provider services."
            ),
            format!("Representative: No, this is {business}. You have the wrong number."),
            "Agent: I apologize for the trouble. Goodbye.".to_string(),
        ];
        Some(lines.join("\n"))
    } else {
        refusal(code).map(|(before, closing)| {
            let mut lines = ctx.opening(&rep);
            lines.extend(before);
            lines.push(format!("Representative: {closing}"));
            lines.push("Agent: Understood, thank you for checking.".into());
            lines.join("\n")
        })
    };
    let reached = transcript.is_some() && !wrong_number;
    let how = match code {
        _ if reached => format!("spoke with {rep}"),
        _ if wrong_number => "reached a business that is not the payer".into(),
        FailureCode::IvrFailure => "could not get past the phone menu to a representative".into(),
        FailureCode::UnableToReachHumanInTime => "did not reach a representative in time".into(),
        _ => "could not complete the call".into(),
    };
    let (code, category, message) = (&failure.code, &failure.category, &failure.message);
    Texts {
        post_call: format!(
            "Agent notes: called {payer} at {} and {how}. Outcome {code} ({category}): {message}",
            ctx.dialed()
        ),
        summary: format!("The call to {payer} did not obtain the information: {message}"),
        audit: match reached {
            true => format!("{} {COMPLIANCE}", ctx.verified()),
            false => "No PHI was disclosed: no representative was reached.".into(),
        },
        transcript,
    }
}
