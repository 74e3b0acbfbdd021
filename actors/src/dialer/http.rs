//! The HTTP dialer: hands each call to a real voice agent and waits for the agent's report.
//!
//! A call job is POSTed to `[dialer] url` as JSON, signed with `X-Switchboard-Signature` (lowercase hex
//! HMAC-SHA256 of the body under `[dialer] secret`). The agent places the call and reports its outcome to
//! `POST /agent/v1/calls/{callId}/outcome`, signed the same way; the HTTP layer verifies it and hands it to
//! [`HttpDialer::complete`]. A job the agent does not accept fails the call (`SYSTEM_ERROR`/`OTHER`); an
//! accepted job without a report within the call timeout counts as a hold timeout, so the step redials
//! and, once its budget is spent, fails with `UNABLE_TO_REACH_HUMAN_IN_TIME`. Redials, follow-ups, state
//! and webhooks stay Switchboard's.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::Sha256;
use switchboard_storage::{Disposition, FailureRecord};
use tokio::sync::oneshot;

use super::{CallJob, CallReport, Dialer};
use crate::webhooks::signature;

/// The agent's report of one call, as it POSTs it.
#[derive(Clone, Debug, Deserialize, Serialize)]
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
        }
    }
}

/// Calls waiting for the agent's report, by call id.
type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<CallReport>>>>;

/// Hands calls to a voice agent over HTTP.
#[derive(Clone)]
pub struct HttpDialer {
    client: reqwest::Client,
    url: String,
    secret: String,
    call_timeout: Duration,
    pending: Pending,
}

impl HttpDialer {
    /// A dialer posting jobs to `url`, signing with `secret`, waiting at most `call_timeout` per call.
    pub fn new(
        url: &str,
        secret: &str,
        call_timeout: Duration,
    ) -> Result<HttpDialer, reqwest::Error> {
        Ok(HttpDialer {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(30))
                .build()?,
            url: url.to_owned(),
            secret: secret.to_owned(),
            call_timeout,
            pending: Arc::default(),
        })
    }

    /// Whether `signature_hex` signs `body` under the dialer secret (constant time).
    pub fn verify(&self, body: &[u8], signature_hex: &str) -> bool {
        let Ok(presented) = hex::decode(signature_hex) else {
            return false;
        };
        let mut mac = Hmac::<Sha256>::new_from_slice(self.secret.as_bytes())
            .expect("HMAC takes keys of any length");
        mac.update(body);
        // `verify_slice` compares in constant time.
        mac.verify_slice(&presented).is_ok()
    }

    /// Delivers the agent's report of `call_id`; `false` when no call is waiting for it (unknown, already
    /// reported, or timed out).
    pub fn complete(&self, call_id: &str, outcome: AgentOutcome) -> bool {
        let waiting = self
            .pending
            .lock()
            .expect("pending calls lock")
            .remove(call_id);
        match waiting {
            Some(sender) => sender.send(outcome.into()).is_ok(),
            None => false,
        }
    }
}

fn failed(message: &str) -> CallReport {
    CallReport {
        disposition: Disposition::Failed,
        duration_seconds: 0,
        captured: BTreeMap::new(),
        transcript: None,
        transcript_post_call: Some(message.to_owned()),
        summary: None,
        audit_summary: None,
        recording: false,
        from_number: None,
        failure: Some(FailureRecord {
            category: "SYSTEM_ERROR".into(),
            code: "OTHER".into(),
            message: message.to_owned(),
        }),
        referral_number: None,
        follow_up_requested: false,
    }
}

impl Dialer for HttpDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        let this = self.clone();
        async move {
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
                "inputs": job.inputs, "aiOnly": job.ai_only, "onshoreOnly": job.onshore_only,
            })
            .to_string();
            let (sender, receiver) = oneshot::channel();
            this.pending.lock().expect("pending calls lock").insert(job.call_id.clone(), sender);
            let accepted = this
                .client
                .post(&this.url)
                .header("Content-Type", "application/json")
                .header("X-Switchboard-Signature", signature(&this.secret, body.as_bytes()))
                .body(body)
                .send()
                .await
                .map(|r| r.status().is_success());
            if !matches!(accepted, Ok(true)) {
                this.pending.lock().expect("pending calls lock").remove(&job.call_id);
                tracing::warn!(call_id = %job.call_id, "voice agent did not accept the call job");
                return failed("The voice agent did not accept the call job");
            }
            match tokio::time::timeout(this.call_timeout, receiver).await {
                Ok(Ok(report)) => report,
                _ => {
                    this.pending.lock().expect("pending calls lock").remove(&job.call_id);
                    let mut report = failed("No report from the voice agent within the call timeout");
                    report.disposition = Disposition::HoldTimeout;
                    report.failure = None;
                    report
                }
            }
        }
        .boxed()
    }
}
