//! From a platform's verdict to Switchboard's dispositions: busy, no answer and voicemail redial; maximum
//! duration or a hold given up is a hold timeout; refusals, not-found, missing inputs and IVR failures
//! become 7.3 failure codes (attributed by number source later, as for every dialer); a referral dials the
//! given number; `followUpNeeded` asks for the follow-up leg.

use std::collections::BTreeMap;

use switchboard_storage::{Disposition, FailureCategory, FailureCode, FailureRecord};

use super::answers::captured_answer;
use super::extraction::{
    as_captured, ruled_out, CALL_OUTCOME, FAILURE_CODE, FOLLOW_UP_NEEDED, REFERRAL_PHONE_NUMBER,
};
use super::{CallEnd, CallResult, PlatformResult};
use crate::dialer::{CallJob, CallReport};

/// The report of a finished platform call for `job`.
pub fn report(job: &CallJob, result: CallResult) -> CallReport {
    match result {
        CallResult::Agent(outcome) => outcome.into(),
        CallResult::Platform(result) => platform_report(job, result),
    }
}

fn platform_report(job: &CallJob, result: PlatformResult) -> CallReport {
    let mut report = CallReport {
        disposition: Disposition::Completed,
        duration_seconds: result.duration_seconds,
        captured: BTreeMap::new(),
        transcript: result.transcript.clone(),
        transcript_post_call: result
            .end_detail
            .as_ref()
            .map(|d| format!("Call ended: {d}.")),
        summary: result.summary.clone(),
        audit_summary: None,
        recording: false,
        from_number: result.from_number.clone(),
        failure: None,
        referral_number: None,
        follow_up_requested: false,
        cost_cents: result.cost_cents,
        // The platforms report the call's length, not its phases.
        phases: None,
    };
    let redial_or_hold = match result.end {
        CallEnd::Busy | CallEnd::NoAnswer | CallEnd::Voicemail => Some(Disposition::Voicemail),
        CallEnd::MaxDuration | CallEnd::HoldTooLong => Some(Disposition::HoldTimeout),
        CallEnd::InvalidNumber => {
            report.disposition = Disposition::Failed;
            report.failure = Some(FailureRecord::new(
                FailureCategory::SystemError,
                FailureCode::PhoneNumberIncorrect,
                "The number could not be dialled",
            ));
            return report;
        }
        CallEnd::PlatformError => {
            report.disposition = Disposition::Failed;
            report.failure = Some(FailureRecord::new(
                FailureCategory::SystemError,
                FailureCode::Other,
                "The voice platform could not complete the call",
            ));
            return report;
        }
        CallEnd::Conversation => None,
    };
    if let Some(disposition) = redial_or_hold {
        report.disposition = disposition;
        return report;
    }
    let text = |name: &str| result.analysis.get(name).and_then(as_captured);
    report.captured = job
        .schema
        .definition
        .fields
        .iter()
        // A field the electronic answer rules out was not asked; an agent's value for it is dropped.
        .filter(|f| !ruled_out(&job.schema.definition, f, &job.known))
        .filter_map(|f| {
            let value = result.analysis.get(&f.name)?;
            captured_answer(f, value).map(|v| (f.name.clone(), v))
        })
        .collect();
    report.follow_up_requested = matches!(
        result.analysis.get(FOLLOW_UP_NEEDED),
        Some(serde_json::Value::Bool(true))
    ) || text(FOLLOW_UP_NEEDED)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let code = text(FAILURE_CODE).map(|c| c.to_ascii_uppercase().replace([' ', '-'], "_"));
    let outcome = text(CALL_OUTCOME).unwrap_or_else(|| "answered".into());
    match outcome.as_str() {
        "answered" => {}
        "referred" => match text(REFERRAL_PHONE_NUMBER).and_then(|n| ten_digits(&n)) {
            Some(number) => {
                report.disposition = Disposition::Referred;
                report.referral_number = Some(number);
            }
            // A referral without a usable number is a call that got nowhere: try the line again.
            None if report.captured.is_empty() => report.disposition = Disposition::Voicemail,
            None => {}
        },
        "refused" => fail(
            &mut report,
            FailureCategory::SystemError,
            code,
            FailureCode::PayerRefusal,
            "The representative refused to provide the information",
        ),
        "ivr_failure" => fail(
            &mut report,
            FailureCategory::SystemError,
            code,
            FailureCode::IvrFailure,
            "The payer's phone system could not be navigated to a representative",
        ),
        "not_found" => fail(
            &mut report,
            FailureCategory::NotFound,
            code,
            FailureCode::Other,
            "The payer could not find the record",
        ),
        "missing_input" => fail(
            &mut report,
            FailureCategory::NotFound,
            code,
            FailureCode::Other,
            "The payer needed information the request did not include",
        ),
        _ if !report.captured.is_empty() => {}
        _ => fail(
            &mut report,
            FailureCategory::SystemError,
            code,
            FailureCode::Other,
            "The call did not obtain the information",
        ),
    }
    report
}

/// Marks `report` failed with `code` when the agent gave a plausible one, else `fallback`.
fn fail(
    report: &mut CallReport,
    category: FailureCategory,
    code: Option<String>,
    fallback: FailureCode,
    message: &str,
) {
    let code = code
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'))
        .map_or(fallback, FailureCode::from);
    // Codes of the other category keep theirs: a wrong number is ours to attribute, not found is the payer's.
    // The suffixes also place codes the table does not list.
    let category = match &code {
        FailureCode::PhoneNumberIncorrect
        | FailureCode::IvrFailure
        | FailureCode::PayerRefusal
        | FailureCode::RequiresOtherChannel => FailureCategory::SystemError,
        c if ["_NOT_FOUND", "_MISSING", "_INCORRECT"]
            .iter()
            .any(|suffix| c.as_str().ends_with(suffix)) =>
        {
            FailureCategory::NotFound
        }
        _ => category,
    };
    report.disposition = Disposition::Failed;
    report.captured.clear();
    report.failure = Some(FailureRecord::new(category, code, message));
}

/// The ten-digit NANP number in `text` (`+1 (800) 555-0100`, `800-555-0100`), if any.
pub fn ten_digits(text: &str) -> Option<String> {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    match digits.len() {
        10 => Some(digits),
        11 if digits.starts_with('1') => Some(digits[1..].to_owned()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
