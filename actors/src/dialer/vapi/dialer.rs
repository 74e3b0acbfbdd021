//! [`VapiDialer`]: runs one attempt as one Vapi call and waits for its end, from the end-of-call report
//! (delivered by the events route through [`VapiDialer::receive`]) or, when that is late, from reading
//! `GET /call/{id}`.
//!
//! A call is never created twice for one attempt. The orchestration places an attempt that was in flight
//! before a restart again under the same call id, and nothing in the job tells a resumed attempt from a
//! new one: every attempt, and every create whose answer was lost, first searches Vapi for a call tagged
//! with its id (among the calls of the last [`SEARCH_WINDOW_HOURS`]) and attaches to it when there is one.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use switchboard_storage::{Disposition, FailureRecord};
use tokio::sync::oneshot;

use super::client::{VapiClient, VapiError};
use super::events::{parse, secret_matches};
use super::mapping::{ending_for, report_from_call, Ending};
use super::types::Call;
use crate::dialer::{CallJob, CallReport, Dialer, ElectronicJob};

/// Tries of a create that fails transiently (each after searching for a call the failed try made).
const CREATE_TRIES: u32 = 3;
/// Reads of an ended call still waiting for its analysis before it is taken as it is.
const ANALYSIS_READS: u32 = 3;
/// How far back the search for an attempt's existing call looks. Vapi stamps calls with its own time,
/// so the window is measured on the machine's wall clock, never on Switchboard's (possibly manual) clock.
const SEARCH_WINDOW_HOURS: i64 = 24;
/// Event keys remembered for de-duplication.
const SEEN_CAPACITY: usize = 10_000;

/// What became of a server message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventVerdict {
    /// It was new and acted on (or recorded).
    Accepted,
    /// The same message type for the same call came before: nothing changes.
    Duplicate,
    /// A type or call Switchboard does not follow.
    Ignored,
}

/// Why a server message was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventRefusal {
    /// No or a wrong `x-vapi-secret` (401).
    Unauthorized,
    /// Not a server message (400).
    Malformed,
}

#[derive(Default)]
struct Seen {
    keys: HashSet<(String, &'static str)>,
    order: VecDeque<(String, &'static str)>,
}

/// Places calls through Vapi.
#[derive(Clone)]
pub struct VapiDialer {
    client: VapiClient,
    poll_every: Duration,
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Call>>>>,
    seen: Arc<Mutex<Seen>>,
}

impl VapiDialer {
    /// A dialer reading a live call every `poll_every` while no end-of-call report has come.
    pub fn new(client: VapiClient, poll_every: Duration) -> VapiDialer {
        VapiDialer {
            client,
            poll_every,
            waiting: Arc::default(),
            seen: Arc::default(),
        }
    }

    /// Handles one server message: checks the secret (constant time), then hands an end-of-call report
    /// to the attempt waiting on its call. Idempotent per call and message type.
    pub fn receive(&self, body: &[u8], secret: Option<&str>) -> Result<EventVerdict, EventRefusal> {
        if !secret_matches(&self.client.config().server_secret, secret) {
            return Err(EventRefusal::Unauthorized);
        }
        let message = parse(body).map_err(|_| EventRefusal::Malformed)?.message;
        let Some(call) = message.call() else {
            return Ok(EventVerdict::Ignored);
        };
        if !self.first_time(&call.id, message.kind()) {
            return Ok(EventVerdict::Duplicate);
        }
        if let Some(ended) = message.ended_call() {
            let waiter = self.waiting.lock().expect("waiting lock").remove(&ended.id);
            if let Some(waiter) = waiter {
                let _ = waiter.send(ended);
            }
        }
        Ok(EventVerdict::Accepted)
    }

    fn first_time(&self, call_id: &str, kind: &'static str) -> bool {
        let mut seen = self.seen.lock().expect("seen lock");
        let key = (call_id.to_string(), kind);
        if !seen.keys.insert(key.clone()) {
            return false;
        }
        seen.order.push_back(key);
        if seen.order.len() > SEEN_CAPACITY {
            if let Some(old) = seen.order.pop_front() {
                seen.keys.remove(&old);
            }
        }
        true
    }

    /// The attempt's call: the one already made for it, else a new one.
    async fn call_for(&self, job: &CallJob) -> Result<Call, VapiError> {
        if let Some(call) = self.existing(job).await? {
            tracing::info!(call_id = %job.call_id, "re-attached to the Vapi call");
            return Ok(call);
        }
        let body = self.client.create_body(job);
        let mut tries = 0;
        loop {
            tries += 1;
            match self.client.create_call(&body).await {
                Ok(call) => return Ok(call),
                Err(e) if e.is_transient() && tries < CREATE_TRIES => {
                    tracing::warn!(call_id = %job.call_id, error = %e, "Vapi create failed; retrying");
                    tokio::time::sleep(Duration::from_secs(u64::from(tries))).await;
                    // The failed try may have created the call before its answer was lost.
                    if let Ok(Some(call)) = self.existing(job).await {
                        return Ok(call);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The call Vapi already has for the attempt.
    async fn existing(&self, job: &CallJob) -> Result<Option<Call>, VapiError> {
        let since = chrono::Utc::now() - chrono::Duration::hours(SEARCH_WINDOW_HOURS);
        self.client.find_call(&job.call_id, Some(since)).await
    }

    /// Waits for the end of `call`: its end-of-call report, or a read showing it ended.
    async fn ended(&self, call: Call) -> Option<Call> {
        let (sender, mut receiver) = oneshot::channel();
        self.waiting
            .lock()
            .expect("waiting lock")
            .insert(call.id.clone(), sender);
        let mut reads_after_end = 0;
        loop {
            tokio::select! {
                ended = &mut receiver => return ended.ok(),
                _ = tokio::time::sleep(self.poll_every) => {}
            }
            match self.client.get_call(&call.id).await {
                Ok(Some(read)) if read.has_ended() => {
                    let reason = read.ended_reason.as_deref().unwrap_or_default();
                    let analysed =
                        read.analysis.is_some() || ending_for(reason) != Ending::Conversation;
                    reads_after_end += 1;
                    if analysed || reads_after_end >= ANALYSIS_READS {
                        self.waiting.lock().expect("waiting lock").remove(&call.id);
                        return Some(read);
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => {
                    self.waiting.lock().expect("waiting lock").remove(&call.id);
                    return None;
                }
                Err(e) => tracing::warn!(error = %e, "reading the Vapi call failed; waiting on"),
            }
        }
    }
}

impl Dialer for VapiDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        let this = self.clone();
        async move {
            let call = match this.call_for(&job).await {
                Ok(call) => call,
                Err(e) => {
                    tracing::warn!(call_id = %job.call_id, error = %e, "Vapi did not place the call");
                    return failed("Vapi did not place the call.");
                }
            };
            tracing::info!(call_id = %job.call_id, vapi_call_id = %call.id, "Vapi call placed");
            match this.ended(call).await {
                Some(ended) => report_from_call(&ended, &job.schema.definition),
                None => failed("Vapi no longer knows the call."),
            }
        }
        .boxed()
    }

    fn electronic(&self, _: ElectronicJob) -> BoxFuture<'static, BTreeMap<String, String>> {
        // A voice platform has no electronic channel.
        futures::future::ready(BTreeMap::new()).boxed()
    }
}

fn failed(message: &str) -> CallReport {
    CallReport {
        disposition: Disposition::Failed,
        duration_seconds: 0,
        captured: BTreeMap::new(),
        transcript: None,
        transcript_post_call: Some(message.to_string()),
        summary: None,
        audit_summary: None,
        recording: false,
        from_number: None,
        failure: Some(FailureRecord {
            category: "SYSTEM_ERROR".to_string(),
            code: "OTHER".to_string(),
            message: message.to_string(),
        }),
        referral_number: None,
        follow_up_requested: false,
    }
}
