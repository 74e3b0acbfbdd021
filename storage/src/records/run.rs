use std::collections::BTreeMap;

use std::ops::Deref;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::FailureRecord;
use crate::{CallId, StepKey};

/// Everything that happened once a request's day came: steps, calls, merged results and the outcome.
/// Written after every transition, so a restart resumes exactly where the request stood.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// When orchestration picked the request up.
    pub started_at: Option<DateTime<Utc>>,
    /// The primary schema version the run is pinned to.
    pub schema_version: u32,
    /// Steps in the order opened.
    pub steps: Vec<StepRecord>,
    /// Calls in placement order; `seq` is the index plus one.
    pub calls: Vec<CallRecord>,
    /// The electronic-channel attempt, when one was made.
    pub electronic: Option<ElectronicRecord>,
    /// Merged captured values, by field name.
    pub results: BTreeMap<String, String>,
    /// Field name to the `seq` of the call that produced its final value.
    pub result_sources: BTreeMap<String, u32>,
    /// Fields not obtained, by schema field name.
    pub missing_fields: Vec<String>,
    /// How the result was obtained.
    pub modality: Option<Modality>,
    /// The failure, on `FAILURE`.
    pub error: Option<FailureRecord>,
    /// Prose summary of an electronic-only result.
    pub result_summary: Option<String>,
    /// Restarts of the request's actors after a fault, oldest first (bounded by the restart intensity).
    pub restarts: Vec<DateTime<Utc>>,
    /// Faults caught in the request's step and call actors (panics, vanished actors, store failures).
    pub faults: u32,
    /// The task a person works when the calls could not finish the request (`human_fallback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<super::TaskRecord>,
}

/// One calling effort.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Unique within the request.
    pub key: StepKey,
    /// Schema the step runs.
    pub schema_id: String,
    /// Its pinned version.
    pub schema_version: u32,
    /// Human-readable name.
    pub name: String,
    /// Running, succeeded or failed.
    pub state: StepState,
    /// Key of the step that opened this one.
    pub triggered_by: Option<StepKey>,
    /// Required fields of the step's schema.
    pub fields_required: u32,
    /// Required fields captured.
    pub fields_captured: u32,
    /// Fields the step did not capture.
    pub missing_fields: Vec<String>,
    /// Why the step failed.
    pub error: Option<FailureRecord>,
}

/// State of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum StepState {
    /// Calls are being placed.
    InProgress,
    /// Every required field captured.
    Succeeded,
    /// Gave up.
    Failed,
}

impl StepState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            StepState::InProgress => "IN_PROGRESS",
            StepState::Succeeded => "SUCCEEDED",
            StepState::Failed => "FAILED",
        }
    }
}

/// One phone call (a redial is another call).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Opaque id.
    pub id: CallId,
    /// 1, 2, ... in placement order.
    pub seq: u32,
    /// The step it belongs to.
    pub step_key: StepKey,
    /// Attempt number within its step, from 1.
    pub attempt: u32,
    /// Ten-digit number dialed.
    pub to: String,
    /// Where that number came from.
    pub number_source: super::NumberSource,
    /// When it was placed.
    pub placed_at: DateTime<Utc>,
    /// Set once it ended; `None` while in flight (a restart re-places such a call, unless `platform`
    /// says a platform already holds it). Shared, never changed once set: a record is copied at most
    /// writes and reads, and the outcome (transcripts, captured values) was most of each copy.
    pub outcome: Option<Arc<CallOutcomeRecord>>,
    /// The call as handed to a voice platform (or a voice agent); `None` for simulated calls and for
    /// records written before platforms existed.
    #[serde(default)]
    pub platform: Option<PlatformCallRecord>,
}

/// A call handed to a platform: written before the platform is asked (the intent), completed with the
/// platform's id before anything waits on it, so a restart re-attaches instead of dialing again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlatformCallRecord {
    /// The platform (`retell`, `vapi`, `http`).
    pub platform: String,
    /// When Switchboard decided to ask the platform for the call.
    pub requested_at: DateTime<Utc>,
    /// The platform's id of the call, once it answered; `None` means the create may or may not have
    /// reached the platform, which is asked before anything is placed again.
    #[serde(default)]
    pub platform_call_id: Option<String>,
    /// Event types already applied, in arrival order: a repeated event is acknowledged and ignored.
    #[serde(default)]
    pub events: Vec<String>,
    /// The platform's final report of the call (the dialer's own neutral JSON), once an event or a read
    /// delivered it and before the outcome was derived from it.
    #[serde(default)]
    pub result: Option<serde_json::Value>,
    /// File name of the downloaded recording under the data directory's `recordings/`.
    #[serde(default)]
    pub recording_file: Option<String>,
}

/// How a call ended and what it produced, as stored: the dialer's [`CallReport`], stamped with the time
/// the call ended. It reads as its report (`outcome.captured`); the stored JSON is one flat object, the end
/// time first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallOutcomeRecord {
    /// When it ended (the clock's time when the report came back, not the dialer's).
    pub ended_at: DateTime<Utc>,
    /// What the dialer reported.
    #[serde(flatten)]
    pub report: CallReport,
}

impl Deref for CallOutcomeRecord {
    type Target = CallReport;

    fn deref(&self) -> &CallReport {
        &self.report
    }
}

/// How a call went, as a dialer reports it: the stored outcome without its end time, which the call
/// actor takes from the clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallReport {
    /// The disposition.
    pub disposition: Disposition,
    /// Simulated or real length, in seconds.
    pub duration_seconds: u32,
    /// What the call captured, by field name (the schema field names of the call's step).
    pub captured: BTreeMap<String, String>,
    /// Conversation with the representative, when one was reached.
    pub transcript: Option<String>,
    /// Agent's notes after the call.
    pub transcript_post_call: Option<String>,
    /// Generated summary.
    pub summary: Option<String>,
    /// Generated audit summary.
    pub audit_summary: Option<String>,
    /// Whether a recording exists.
    pub recording: bool,
    /// E.164 number the call was placed from.
    pub from_number: Option<String>,
    /// For `Failed`: category, code and message (service-interface 7.3).
    pub failure: Option<FailureRecord>,
    /// For `Referred`: the ten-digit number the representative referred the caller to.
    pub referral_number: Option<String>,
    /// The call surfaced a matter for the schema's follow-up leg (a denied claim to appeal, say): on
    /// accounts with follow-up calls the leg runs as a second step.
    #[serde(default)]
    pub follow_up_requested: bool,
    /// What the call cost, in US cents. A dialer sets it only when its platform priced the call (Retell's
    /// `call_cost`, Vapi's `cost`); the call actor prices every other call by its duration before the
    /// outcome is stored, so a stored outcome always carries it. `None` in outcomes stored before costs
    /// were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cents: Option<u64>,
    /// How long the call spent in the phone tree, on hold and talking, when the dialer measured it (the
    /// simulator does): what Switchboard learns of the payer's line from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<super::CallPhases>,
}

impl CallReport {
    /// A report of `disposition` and nothing else (no time, capture, texts, recording or failure), for
    /// a dialer to fill in.
    pub fn new(disposition: Disposition) -> CallReport {
        CallReport {
            disposition,
            duration_seconds: 0,
            captured: BTreeMap::new(),
            transcript: None,
            transcript_post_call: None,
            summary: None,
            audit_summary: None,
            recording: false,
            from_number: None,
            failure: None,
            referral_number: None,
            follow_up_requested: false,
            cost_cents: None,
            phases: None,
        }
    }
}

/// The end of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// A representative answered; `captured` holds what was obtained.
    Completed,
    /// Only voicemail or an after-hours message: redial.
    Voicemail,
    /// Hold time exceeded: redial.
    HoldTimeout,
    /// The representative gave another number: redial there.
    Referred,
    /// The call failed in a way a redial will not fix (see `failure`).
    Failed,
}

/// The electronic-channel attempt and its trace: what filled which field, compactly (no raw response).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ElectronicRecord {
    /// When it ran.
    pub at: DateTime<Utc>,
    /// Fields it filled.
    pub captured: BTreeMap<String, String>,
    /// The channel that answered (`stedi`, `simulated`, `sandbox`).
    #[serde(default)]
    pub channel: Option<String>,
    /// The clearinghouse's transaction id.
    #[serde(default)]
    pub transaction_id: Option<String>,
    /// Field name to the element of the answer behind its value, e.g. `EB C IND Y 29 STC30`.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// How the attempt went, in a few words (answered, rejected with its AAA code, timed out, ...).
    #[serde(default)]
    pub outcome: Option<String>,
    /// No call follows this answer, even for required fields it leaves open: the request ends with what
    /// it filled (`digital_only`, data completeness `minimum`). Only the sandbox `digital` scenario answers
    /// so; a clearinghouse's answer leaves the open fields to the phone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closes_request: bool,
    /// What the attempt cost, in US cents: `[electronic] cost_per_transaction` for each clearinghouse
    /// inquiry it sent, nothing for a sandbox request or an inquiry never sent. `None` in records stored
    /// before costs were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cents: Option<u64>,
}

/// How a result was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Modality {
    /// Electronic channel only; no call placed.
    DigitalOnly,
    /// Calls only.
    PhoneOnly,
    /// Electronic channel, then a call for the rest.
    DigitalPlusPhone,
}

impl Modality {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Modality::DigitalOnly => "digital_only",
            Modality::PhoneOnly => "phone_only",
            Modality::DigitalPlusPhone => "digital_plus_phone",
        }
    }
}
