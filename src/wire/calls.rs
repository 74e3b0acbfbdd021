//! The phone-call side of a request on the wire: enrichment fields of the first call, `attemptDetails`,
//! and the tracing trio `callSteps` / `contributingCalls` / `resultSources` (2.4, 2.6).

use serde_json::{json, Map, Value};
use switchboard_storage::{
    CallRecord, Disposition, Feature, RequestRecord, RequestState, RunRecord, StepState,
};

use super::format_timestamp;
use super::request::{ReadContext, ReadKind};
use crate::domain::UsPhone;

/// The call the top-level fields describe: the request's first call, meaning the last attempt of the
/// primary step (a redial replaces the attempt before it).
fn first_call(run: &RunRecord) -> Option<&CallRecord> {
    let primary = run.steps.first()?;
    run.calls
        .iter()
        .rev()
        .find(|c| c.step_key == primary.key && c.outcome.is_some())
}

/// Adds the top-level call fields, each only where the spec says it exists.
pub(super) fn enrich(out: &mut Map<String, Value>, run: &RunRecord, read: &ReadContext<'_>) {
    let Some(call) = first_call(run) else {
        return;
    };
    let outcome = call
        .outcome
        .as_ref()
        .expect("first_call only yields finished calls");
    let single = read.kind == ReadKind::Single;
    out.insert("to".into(), json!(e164(&call.to)));
    out.insert(
        "callDuration".into(),
        json!(hh_mm_ss(outcome.duration_seconds)),
    );
    if let Some(summary) = &outcome.summary {
        out.insert("callSummary".into(), json!(summary));
    }
    if let Some(audit) = &outcome.audit_summary {
        out.insert("callAuditSummary".into(), json!(audit));
    }
    // Dialers write a transcript only when a representative answered, whatever the call's end.
    if single {
        if let Some(transcript) = &outcome.transcript {
            out.insert("transcript".into(), json!(transcript));
        }
    }
    if single && read.account.has(Feature::TranscriptPostCall) {
        if let Some(notes) = &outcome.transcript_post_call {
            out.insert("transcriptPostCall".into(), json!(notes));
        }
    }
    if single && outcome.recording {
        out.insert(
            "recordingDownloadUrl".into(),
            json!(read.links.url(&call.id, read.now)),
        );
    }
    if read.account.has(Feature::CallFromNumber) {
        if let Some(from) = &outcome.from_number {
            out.insert("callFromNumber".into(), json!(from));
        }
    }
}

/// One entry per call attempt, in placement order.
pub(super) fn attempt_details(run: &RunRecord) -> Vec<Value> {
    run.calls
        .iter()
        .map(|call| {
            let outcome = call.outcome.as_ref();
            json!({
                "call": call.seq,
                "callStep": call.step_key,
                "attempt": call.attempt,
                "to": e164(&call.to),
                "placedAt": format_timestamp(call.placed_at),
                "endedAt": outcome.map(|o| format_timestamp(o.ended_at)),
                "disposition": outcome.map(|o| disposition_name(o.disposition)),
            })
        })
        .collect()
}

/// `callSteps`, `contributingCalls` and `resultSources` of a completed phone request (single read only).
pub(super) fn tracing_fields(
    out: &mut Map<String, Value>,
    record: &RequestRecord,
    run: &RunRecord,
    read: &ReadContext<'_>,
) {
    if run.steps.is_empty() {
        return; // digital-only: no calls to trace
    }
    let steps: Vec<Value> = run
        .steps
        .iter()
        .map(|step| {
            let mut entry = json!({
                "key": step.key,
                "schemaId": step.schema_id,
                "name": step.name,
                "state": step_state(step.state),
                "fieldsRequired": step.fields_required,
                "fieldsCaptured": step.fields_captured,
                "missingFields": step.missing_fields,
                "numContributingCalls": run.calls.iter().filter(|c| c.step_key == step.key).count(),
                "triggeredBy": step.triggered_by,
            });
            if let Some(error) = &step.error {
                entry["error"] = json!({
                    "errorCategory": error.category,
                    "errorCode": error.code,
                    "errorMessage": error.message,
                    "missingFields": step.missing_fields,
                });
            }
            entry
        })
        .collect();
    out.insert("callSteps".into(), json!(steps));
    if !matches!(record.state, RequestState::Success | RequestState::Partial) {
        return;
    }
    let original = run.calls.first().map(|c| c.to.as_str());
    let calls: Vec<Value> = run
        .calls
        .iter()
        .filter_map(|call| {
            let outcome = call.outcome.as_ref()?;
            let mut entry = Map::new();
            entry.insert("id".into(), json!(call.id));
            entry.insert("call".into(), json!(call.seq));
            entry.insert("callStep".into(), json!(call.step_key));
            if Some(call.to.as_str()) != original {
                entry.insert("to".into(), json!(e164(&call.to)));
            }
            entry.insert(
                "callDuration".into(),
                json!(hh_mm_ss(outcome.duration_seconds)),
            );
            if let Some(summary) = &outcome.summary {
                entry.insert("callSummary".into(), json!(summary));
            }
            if let Some(transcript) = &outcome.transcript {
                entry.insert("transcript".into(), json!(transcript));
            }
            if outcome.recording {
                entry.insert(
                    "recordingDownloadUrl".into(),
                    json!(read.links.url(&call.id, read.now)),
                );
            }
            entry.insert(
                "fieldsCaptured".into(),
                json!(outcome.captured.keys().collect::<Vec<_>>()),
            );
            entry.insert("results".into(), json!(outcome.captured));
            Some(Value::Object(entry))
        })
        .collect();
    out.insert("contributingCalls".into(), json!(calls));
    out.insert("resultSources".into(), json!(run.result_sources));
}

fn step_state(state: StepState) -> &'static str {
    match state {
        StepState::InProgress => "PROCESSING",
        StepState::Succeeded => "SUCCESS",
        StepState::Failed => "FAILURE",
    }
}

fn disposition_name(disposition: Disposition) -> &'static str {
    match disposition {
        Disposition::Completed => "completed",
        Disposition::Voicemail => "voicemail",
        Disposition::HoldTimeout => "hold_timeout",
        Disposition::Referred => "referred",
        Disposition::Failed => "failed",
    }
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
