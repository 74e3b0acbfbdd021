//! The HTTP dialer: a voice agent of the operator's own, driven like any voice platform (see
//! [`super::platform`]) so its calls survive restarts too.
//!
//! A call job is POSTed to `[dialer] url` as JSON, signed with `X-Switchboard-Signature` (lowercase hex
//! HMAC-SHA256 of the body under `[dialer] secret`). The job's `callId` is the agent's idempotency key: the
//! job is posted once, and only re-posted after a crash that came between the post and storing its
//! acceptance. An accepted job is never posted again: after a restart the call waits for the agent's
//! report, which arrives at `POST /agent/v1/calls/{callId}/outcome`, signed the same way over a body that
//! also names the call and the time of signing ([`outcome`]), and is persisted before it is acknowledged. A job the agent does not accept fails the call (`SYSTEM_ERROR`/`OTHER`); an
//! accepted job without a report within the call timeout counts as a hold timeout, so the step redials
//! and, once its budget is spent, fails with `UNABLE_TO_REACH_HUMAN_IN_TIME`.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use switchboard_storage::{CallId, Disposition, FailureRecord};

use super::platform::{
    CallResult, PlatformAdapter, PlatformCallRequest, PlatformCallState, PlatformError,
    PlatformEvent, PlatformFuture,
};
use super::CallReport;
use crate::webhooks::signature;

pub mod outcome;

pub use outcome::OutcomeRefusal;

/// The agent's report of one call, as it POSTs it (less the `callId` and `timestamp` its signature covers,
/// see [`outcome`]): the wire twin of [`CallReport`] (camelCase, strict about keys), also kept as the stored platform result of the call until its outcome is written.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentOutcome {
    /// `completed`, `voicemail`, `hold_timeout`, `referred` or `failed`.
    pub disposition: Disposition,
    /// Length of the call.
    pub duration_seconds: u32,
    /// Captured values by schema field name.
    #[serde(default)]
    pub captured: BTreeMap<String, String>,
    /// Conversation transcript.
    pub transcript: Option<String>,
    /// Post-call notes.
    pub transcript_post_call: Option<String>,
    /// Summary.
    pub summary: Option<String>,
    /// Audit summary.
    pub audit_summary: Option<String>,
    /// Whether a recording exists.
    #[serde(default)]
    pub recording: bool,
    /// E.164 caller id used.
    pub from_number: Option<String>,
    /// For `failed`: category, code and message.
    pub failure: Option<FailureRecord>,
    /// For `referred`: the ten-digit number given.
    pub referral_number: Option<String>,
    /// The call surfaced a matter for the follow-up leg.
    #[serde(default)]
    pub follow_up_requested: bool,
}

impl From<AgentOutcome> for CallReport {
    fn from(outcome: AgentOutcome) -> CallReport {
        CallReport {
            disposition: outcome.disposition,
            duration_seconds: outcome.duration_seconds,
            captured: outcome.captured,
            transcript: outcome.transcript,
            transcript_post_call: outcome.transcript_post_call,
            summary: outcome.summary,
            audit_summary: outcome.audit_summary,
            recording: outcome.recording,
            from_number: outcome.from_number,
            failure: outcome.failure,
            referral_number: outcome.referral_number,
            follow_up_requested: outcome.follow_up_requested,
            // A voice agent of the operator's own reports no price: its calls are priced by the minute.
            cost_cents: None,
            // The agent protocol carries no phases.
            phases: None,
        }
    }
}

/// The adapter of a voice agent reached over HTTP.
#[derive(Clone)]
pub struct HttpAgent {
    client: reqwest::Client,
    url: String,
    secret: String,
}

impl HttpAgent {
    /// An agent taking jobs at `url`, signed with `secret`.
    pub fn new(url: &str, secret: &str) -> Result<HttpAgent, reqwest::Error> {
        Ok(HttpAgent {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(30))
                .build()?,
            url: url.to_owned(),
            secret: secret.to_owned(),
        })
    }

    /// The outcome `body` reports for `call_id`, if `signature_hex` signs it under the dialer secret, it
    /// names that call and it was signed within five minutes of `now` (see [`outcome`]).
    pub fn accept_outcome(
        &self,
        call_id: &CallId,
        body: &[u8],
        signature_hex: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<AgentOutcome, OutcomeRefusal> {
        outcome::accept(&self.secret, call_id, body, signature_hex, now)
    }
}

/// The agent's report of `call_id` as a platform event (the call id doubles as the platform's id).
pub fn outcome_event(call_id: &CallId, outcome: AgentOutcome) -> PlatformEvent {
    PlatformEvent {
        call_id: call_id.clone(),
        request_id: None,
        platform_call_id: call_id.to_string(),
        event_type: "outcome".into(),
        state: PlatformCallState::Ended(Box::new(CallResult::Agent(outcome))),
    }
}

impl PlatformAdapter for HttpAgent {
    fn name(&self) -> &'static str {
        "http"
    }

    fn create(&self, request: &PlatformCallRequest) -> PlatformFuture<String> {
        let job = &request.job;
        // Every field, as the operator contract has it; the payer's electronic answers go along as `known`,
        // for the agent not to ask again (and a `when` condition may name one of them).
        let fields: Vec<_> = job
            .schema
            .definition
            .fields
            .iter()
            .map(|f| {
                json!({
                    "name": f.name, "label": f.label, "question": f.description, "type": f.field_type.as_str(),
                    "allowedValues": f.allowed_values, "required": f.required,
                    "when": f.when.as_ref().map(|w| json!({ "field": w.field, "equals": w.equals })),
                })
            })
            .collect();
        let body = json!({
            "callId": job.call_id, "requestId": job.request_id, "call": job.seq, "attempt": job.attempt,
            "callStep": job.step_key, "to": format!("+1{}", job.number),
            "schema": { "schemaId": job.schema.id, "version": job.schema.version, "fields": fields },
            "inputs": job.inputs, "known": job.known, "aiOnly": job.ai_only, "onshoreOnly": job.onshore_only,
        })
        .to_string();
        let call_id = job.call_id.clone();
        let sent = self
            .client
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header(
                "X-Switchboard-Signature",
                signature(&self.secret, body.as_bytes()),
            )
            .body(body)
            .send();
        async move {
            match sent.await {
                Ok(response) if response.status().is_success() => Ok(call_id.into_string()),
                Ok(response) => Err(PlatformError::Rejected(format!(
                    "the voice agent answered {}",
                    response.status()
                ))),
                // The agent never said yes: nothing to re-attach to, and the job's callId lets the agent
                // recognise a job it did receive.
                Err(e) => Err(PlatformError::Rejected(format!(
                    "the voice agent is unreachable: {}",
                    e.without_url()
                ))),
            }
        }
        .boxed()
    }

    fn find(&self, _call_id: &CallId) -> PlatformFuture<Option<String>> {
        // The job protocol has no lookup; a job whose acceptance was not stored is posted again with the
        // same callId.
        futures::future::ready(Ok(None)).boxed()
    }

    fn read(&self, _platform_call_id: &str) -> Option<PlatformFuture<PlatformCallState>> {
        None
    }
}
