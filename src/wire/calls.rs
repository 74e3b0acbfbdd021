//! The phone-call side of a request on the wire: the first call's top-level fields, `attemptDetails`, and
//! the tracing trio `callSteps` / `contributingCalls` / `resultSources` (service-interface 2.4, 2.6).

use std::collections::BTreeMap;

use serde::Serialize;
use switchboard_storage::{
    CallRecord, Disposition, Feature, RequestRecord, RequestState, RunRecord, StepState,
};
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
    pub call_step: String,
    /// Attempt number within its step.
    pub attempt: u32,
    /// The dialed number (E.164).
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

/// One distinct calling effort, usually one schema (2.6).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallStepOut {
    /// Unique per step.
    pub key: String,
    /// Schema the step ran.
    pub schema_id: String,
    /// The step's name.
    pub name: String,
    /// The step's own state.
    pub state: StepStateOut,
    /// Fields the step asked for.
    pub fields_required: u32,
    /// Fields the step obtained.
    pub fields_captured: u32,
    /// Fields the step did not capture.
    pub missing_fields: Vec<String>,
    /// Calls in this step (a redial adds calls to the same step).
    pub num_contributing_calls: usize,
    /// `key` of the step that opened this one; `null` for the first step.
    #[schema(required = true)]
    pub triggered_by: Option<String>,
    /// Why a failed step failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error: Option<CallStepErrorOut>,
}

/// A step's state.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepStateOut {
    /// Still calling.
    Processing,
    /// Obtained what it asked for.
    Success,
    /// Ended without it.
    Failure,
}

/// The error of a failed step, with its own `missingFields`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallStepErrorOut {
    /// `NOT_FOUND` or `SYSTEM_ERROR`, as on the request's `error`.
    pub error_category: String,
    /// Open-ended, as on the request's `error`.
    pub error_code: String,
    /// Human-readable.
    pub error_message: String,
    /// Fields the step did not capture.
    pub missing_fields: Vec<String>,
}

/// One phone call that produced results, in placement order (2.6).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContributingCallOut {
    /// Opaque call identifier; not to be parsed.
    pub id: String,
    /// Sequence number in placement order.
    #[schema(minimum = 1)]
    pub call: u32,
    /// `key` of the step the call belongs to.
    pub call_step: String,
    /// Present when this call dialed a different number than the request's original call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub to: Option<String>,
    /// `HH:MM:SS`.
    #[schema(pattern = r"^\d{2,}:\d{2}:\d{2}$")]
    pub call_duration: String,
    /// Generated summary of the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub call_summary: Option<String>,
    /// When the call reached a representative.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub transcript: Option<String>,
    /// Signed, expiring link to the call's audio.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, format = "uri")]
    pub recording_download_url: Option<String>,
    /// Names of the fields this call captured.
    pub fields_captured: Vec<String>,
    /// Fields captured by this call.
    pub results: BTreeMap<String, String>,
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
            to: Some(e164(&call.to)),
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
                to: e164(&call.to),
                placed_at: format_timestamp(call.placed_at),
                ended_at: outcome.map(|o| format_timestamp(o.ended_at)),
                disposition: outcome.map(|o| o.disposition.into()),
            }
        })
        .collect()
}

/// `callSteps`, `contributingCalls` and `resultSources` of a completed request (single read only).
#[derive(Default)]
pub(super) struct Tracing {
    pub call_steps: Option<Vec<CallStepOut>>,
    pub contributing_calls: Option<Vec<ContributingCallOut>>,
    pub result_sources: Option<BTreeMap<String, u32>>,
}

impl Tracing {
    pub(super) fn of(record: &RequestRecord, run: &RunRecord, read: &ReadContext<'_>) -> Tracing {
        if run.steps.is_empty() {
            return Tracing::default(); // digital-only: no calls to trace
        }
        let call_steps = Some(run.steps.iter().map(|step| step_out(step, run)).collect());
        if !matches!(record.state, RequestState::Success | RequestState::Partial) {
            return Tracing {
                call_steps,
                ..Tracing::default()
            };
        }
        let original = run.calls.first().map(|c| c.to.as_str());
        let calls = run
            .calls
            .iter()
            .filter_map(|call| contributing_call(call, original, read))
            .collect();
        Tracing {
            call_steps,
            contributing_calls: Some(calls),
            result_sources: Some(run.result_sources.clone()),
        }
    }
}

fn step_out(step: &switchboard_storage::StepRecord, run: &RunRecord) -> CallStepOut {
    CallStepOut {
        key: step.key.clone(),
        schema_id: step.schema_id.clone(),
        name: step.name.clone(),
        state: match step.state {
            StepState::InProgress => StepStateOut::Processing,
            StepState::Succeeded => StepStateOut::Success,
            StepState::Failed => StepStateOut::Failure,
        },
        fields_required: step.fields_required,
        fields_captured: step.fields_captured,
        missing_fields: step.missing_fields.clone(),
        num_contributing_calls: run.calls.iter().filter(|c| c.step_key == step.key).count(),
        triggered_by: step.triggered_by.clone(),
        error: step.error.as_ref().map(|error| CallStepErrorOut {
            error_category: error.category.clone(),
            error_code: error.code.clone(),
            error_message: error.message.clone(),
            missing_fields: step.missing_fields.clone(),
        }),
    }
}

fn contributing_call(
    call: &CallRecord,
    original: Option<&str>,
    read: &ReadContext<'_>,
) -> Option<ContributingCallOut> {
    let outcome = call.outcome.as_ref()?;
    Some(ContributingCallOut {
        id: call.id.clone(),
        call: call.seq,
        call_step: call.step_key.clone(),
        to: (Some(call.to.as_str()) != original).then(|| e164(&call.to)),
        call_duration: hh_mm_ss(outcome.duration_seconds),
        call_summary: outcome.summary.clone(),
        transcript: outcome.transcript.clone(),
        recording_download_url: outcome
            .recording
            .then(|| read.links.url(&call.id, read.now)),
        fields_captured: outcome.captured.keys().cloned().collect(),
        results: outcome.captured.clone(),
    })
}

fn e164(digits: &str) -> String {
    UsPhone::parse(digits).map_or_else(|| format!("+1{digits}"), |p| p.e164())
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
