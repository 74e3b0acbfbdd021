//! The phone-call side of a request's top level (service-interface 2.4): the first call's fields and
//! `attemptDetails`, and the number and duration formats every call field uses.

use serde::Serialize;
use switchboard_storage::{Disposition, Feature, RunRecord, StepKey};
use utoipa::ToSchema;

use super::{format_timestamp, ReadContext};
use crate::domain::UsPhone;

/// One call attempt (this server's shape of the optional `attemptDetails`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttemptOut {
    /// Sequence number in placement order.
    pub call: u32,
    /// `key` of the step the attempt belongs to.
    #[schema(value_type = String)]
    pub call_step: StepKey,
    /// Attempt number within its step.
    pub attempt: u32,
    /// The dialed number, sanitized (ten digits).
    pub to: String,
    /// When the call was placed.
    pub placed_at: String,
    /// When the call ended; `null` while it is in progress.
    #[schema(required = true)]
    pub ended_at: Option<String>,
    /// How the call ended; `null` while it is in progress.
    #[schema(required = true)]
    pub disposition: Option<DispositionOut>,
}

/// How a call ended.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DispositionOut {
    /// A representative answered and the call ran to its end.
    Completed,
    /// Voicemail picked up.
    Voicemail,
    /// Nobody answered within the hold limit.
    HoldTimeout,
    /// The payer referred the call to another number.
    Referred,
    /// The call failed.
    Failed,
}

impl From<Disposition> for DispositionOut {
    fn from(disposition: Disposition) -> DispositionOut {
        match disposition {
            Disposition::Completed => DispositionOut::Completed,
            Disposition::Voicemail => DispositionOut::Voicemail,
            Disposition::HoldTimeout => DispositionOut::HoldTimeout,
            Disposition::Referred => DispositionOut::Referred,
            Disposition::Failed => DispositionOut::Failed,
        }
    }
}

/// The request's top-level call fields, from its first call: the last attempt of the primary step (a
/// redial replaces the attempt before it). Each is set only where the spec says it exists.
#[derive(Default)]
pub(super) struct FirstCall {
    pub to: Option<String>,
    pub call_duration: Option<String>,
    pub call_summary: Option<String>,
    pub call_audit_summary: Option<String>,
    pub transcript: Option<String>,
    pub transcript_post_call: Option<String>,
    pub recording_download_url: Option<String>,
    pub call_from_number: Option<String>,
}

impl FirstCall {
    pub(super) fn of(run: &RunRecord, read: &ReadContext<'_>) -> Option<FirstCall> {
        let primary = run.steps.first()?;
        let call = run
            .calls
            .iter()
            .rev()
            .find(|c| c.step_key == primary.key && c.outcome.is_some())?;
        let outcome = call.outcome.as_ref()?;
        let single = read.single();
        let account = read.account;
        Some(FirstCall {
            to: Some(sanitized(&call.to)),
            call_duration: Some(hh_mm_ss(outcome.duration_seconds)),
            call_summary: outcome.summary.clone(),
            call_audit_summary: outcome.audit_summary.clone(),
            // Dialers write a transcript only when a representative answered, whatever the call's end.
            transcript: outcome.transcript.clone().filter(|_| single),
            transcript_post_call: outcome
                .transcript_post_call
                .clone()
                .filter(|_| single && account.has(Feature::TranscriptPostCall)),
            recording_download_url: (single && outcome.recording)
                .then(|| read.links.url(&call.id, read.now)),
            call_from_number: outcome
                .from_number
                .clone()
                .filter(|_| account.has(Feature::CallFromNumber)),
        })
    }
}

/// One entry per call attempt, in placement order.
pub(super) fn attempt_details(run: &RunRecord) -> Vec<AttemptOut> {
    run.calls
        .iter()
        .map(|call| {
            let outcome = call.outcome.as_ref();
            AttemptOut {
                call: call.seq,
                call_step: call.step_key.clone(),
                attempt: call.attempt,
                to: sanitized(&call.to),
                placed_at: format_timestamp(call.placed_at),
                ended_at: outcome.map(|o| format_timestamp(o.ended_at)),
                disposition: outcome.map(|o| o.disposition.into()),
            }
        })
        .collect()
}

/// A dialed number as the interface shows it: sanitized as inputs are (section 7.4: no spaces, punctuation,
/// `+` or leading `1`), the ten digits. Only the caller number (`callFromNumber`) is E.164.
pub(super) fn sanitized(number: &str) -> String {
    UsPhone::parse(number).map_or_else(|| number.to_owned(), |p| p.digits().to_owned())
}

/// `HH:MM:SS`.
pub fn hh_mm_ss(seconds: u32) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_are_hours_minutes_seconds() {
        assert_eq!(super::hh_mm_ss(0), "00:00:00");
        assert_eq!(super::hh_mm_ss(754), "00:12:34");
        assert_eq!(super::hh_mm_ss(3_725), "01:02:05");
    }
}
