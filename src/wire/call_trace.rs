//! The tracing trio of a completed request's single read: `callSteps`, `contributingCalls` and
//! `resultSources` (service-interface 2.6).

use std::collections::BTreeMap;

use serde::Serialize;
use switchboard_actors::cost::Prices;
use switchboard_storage::{
    CallId, CallRecord, FailureCategory, FailureCode, RequestRecord, RequestState, RunRecord,
    StepKey, StepRecord, StepState,
};
use utoipa::ToSchema;

use super::calls::{hh_mm_ss, sanitized};
use super::cost::dollars;
use super::ReadContext;

/// One distinct calling effort, usually one schema (2.6).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallStepOut {
    /// Unique per step.
    #[schema(value_type = String)]
    pub key: StepKey,
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
    #[schema(required = true, value_type = Option<String>)]
    pub triggered_by: Option<StepKey>,
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
    #[schema(schema_with = super::outcome::error_category_schema)]
    pub error_category: FailureCategory,
    /// Open-ended, as on the request's `error`.
    #[schema(value_type = String)]
    pub error_code: FailureCode,
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
    #[schema(value_type = String)]
    pub id: CallId,
    /// Sequence number in placement order.
    #[schema(minimum = 1)]
    pub call: u32,
    /// `key` of the step the call belongs to.
    #[schema(value_type = String)]
    pub call_step: StepKey,
    /// The number this call dialed, sanitized (ten digits); present when it differs from the request's
    /// original call's.
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
    /// Who placed the call, when a person did (a task of the work queue); absent for automated calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub placed_by: Option<PlacedByOut>,
    /// What this call cost in US dollars, two places: the voice platform's own price where it reports
    /// one, else the call's connected minutes (each started minute) at the configured rate; `0.00` for a
    /// call a person placed and on sandbox requests. The request's `cost.calls` is the sum over its calls.
    #[schema(pattern = r"^\d+\.\d{2}$", example = "1.56")]
    pub cost: String,
}

/// The person who placed a call.
#[derive(Debug, Serialize, ToSchema)]
pub struct PlacedByOut {
    /// Always `operator`.
    pub kind: &'static str,
    /// The operator's name.
    pub name: String,
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
        let prices = read.prices.for_environment(record.environment);
        let person = run
            .task
            .as_ref()
            .and_then(|task| Some((task.call_seq?, task.closed_by.clone()?)));
        let calls = run
            .calls
            .iter()
            .filter_map(|call| {
                let mut out = contributing_call(call, original, read, prices)?;
                out.placed_by =
                    person
                        .as_ref()
                        .filter(|(seq, _)| *seq == call.seq)
                        .map(|(_, name)| PlacedByOut {
                            kind: "operator",
                            name: name.clone(),
                        });
                Some(out)
            })
            .collect();
        Tracing {
            call_steps,
            contributing_calls: Some(calls),
            result_sources: Some(run.result_sources.clone()),
        }
    }
}

fn step_out(step: &StepRecord, run: &RunRecord) -> CallStepOut {
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
    prices: Prices,
) -> Option<ContributingCallOut> {
    let outcome = call.outcome.as_ref()?;
    Some(ContributingCallOut {
        id: call.id.clone(),
        call: call.seq,
        call_step: call.step_key.clone(),
        to: (Some(call.to.as_str()) != original).then(|| sanitized(&call.to)),
        call_duration: hh_mm_ss(outcome.duration_seconds),
        call_summary: outcome.summary.clone(),
        transcript: outcome.transcript.clone(),
        recording_download_url: outcome
            .recording
            .then(|| read.links.url(&call.id, read.now)),
        fields_captured: outcome.captured.keys().cloned().collect(),
        results: outcome.captured.clone(),
        placed_by: None,
        cost: dollars(prices.call_cents(outcome)),
    })
}
