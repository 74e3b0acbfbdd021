//! The platform driver: runs one call on a voice platform so that a crash at any point neither loses the
//! call nor dials the payer twice.
//!
//! 1. Before asking the platform, the call record gets an intent marker (platform name, no id yet), flushed.
//! 2. The create carries Switchboard's call id; the platform's id is stored and flushed before any wait.
//! 3. The wait ends on the platform's final record, whichever way it arrives first: an event (delivered by
//!    the HTTP route through [`PlatformDialer::deliver`], persisted, then signalled) or a read of the call
//!    (polled every `poll_interval` while events are late). The final record is stored before the outcome
//!    is derived from it, so a restart in between does not need the platform again.
//! 4. After a restart the call actor runs the same call again: with a stored id it re-attaches; with only
//!    the intent it first asks the platform for a call tagged with this call id, and creates only when the
//!    platform has none.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use switchboard_storage::{
    CallId, CallRecord, Disposition, FailureCategory, FailureCode, FailureRecord,
    PlatformCallRecord, RequestId, Store,
};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::extraction::{extraction_fields, prompt_variables};
use super::{mapping, recording};
use super::{CallResult, PlatformAdapter, PlatformCallRequest, PlatformCallState, PlatformError};
use crate::dialer::{CallJob, CallReport, Dialer};

/// Tries of a create (or a find) whose answer got lost before the call fails.
const CREATE_ATTEMPTS: u32 = 3;

/// How the driver waits.
#[derive(Clone, Debug)]
pub struct PlatformOptions {
    /// Time between reads of a live call when no event has ended it.
    pub poll_interval: Duration,
    /// Longest wait for a call to end before it counts as a hold timeout.
    pub call_timeout: Duration,
}

/// Runs calls through one [`PlatformAdapter`]; implements [`Dialer`].
#[derive(Clone)]
pub struct PlatformDialer {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) adapter: Arc<dyn PlatformAdapter>,
    pub(super) store: Store,
    options: PlatformOptions,
    client: reqwest::Client,
    /// Calls this process is waiting on, by Switchboard call id.
    pub(super) waiters: Mutex<HashMap<CallId, Waiter>>,
    creates: AtomicU64,
}

pub(super) struct Waiter {
    pub(super) request_id: RequestId,
    pub(super) wake: Arc<Notify>,
}

type Step<T> = Result<T, Box<CallReport>>;

impl PlatformDialer {
    /// A driver for `adapter`, persisting in `store`.
    pub fn new(
        adapter: Arc<dyn PlatformAdapter>,
        store: Store,
        options: PlatformOptions,
    ) -> Result<PlatformDialer, reqwest::Error> {
        Ok(PlatformDialer {
            inner: Arc::new(Inner {
                adapter,
                store,
                options,
                client: reqwest::Client::builder()
                    .timeout(Duration::from_secs(60))
                    .build()?,
                waiters: Mutex::default(),
                creates: AtomicU64::new(0),
            }),
        })
    }

    /// The platform's name.
    pub fn platform(&self) -> &'static str {
        self.inner.adapter.name()
    }

    /// Create requests sent to the platform since start-up (retries of a lost answer included).
    pub fn creates(&self) -> u64 {
        self.inner.creates.load(Ordering::Relaxed)
    }
}

impl Inner {
    async fn stored_call(&self, job: &CallJob) -> Step<CallRecord> {
        let record = self
            .store
            .fetch_request(&job.request_id)
            .await
            .map_err(|e| system_failure(&format!("store read failed: {e}")))?
            .ok_or_else(|| system_failure("the request vanished"))?;
        record
            .run
            .as_ref()
            .and_then(|run| run.calls.iter().find(|c| c.id == job.call_id).cloned())
            .ok_or_else(|| system_failure("the call record vanished"))
    }

    /// Changes the call's platform record and waits for the change to be on disk.
    async fn update(
        &self,
        job: &CallJob,
        mut change: impl FnMut(&mut PlatformCallRecord) + Send + 'static,
    ) -> Step<()> {
        let platform = self.adapter.name();
        let now = job_now(job);
        let call_id = job.call_id.clone();
        self.store
            .commit_update(&job.request_id, move |record| {
                if let Some(call) = find_call(record, &call_id) {
                    // A record of another platform (the kind changed across a restart) is replaced: that
                    // platform is no longer reachable from here.
                    if call
                        .platform
                        .as_ref()
                        .is_some_and(|p| p.platform != platform)
                    {
                        call.platform = None;
                    }
                    let stored = call.platform.get_or_insert_with(|| PlatformCallRecord {
                        platform: platform.to_owned(),
                        requested_at: now,
                        platform_call_id: None,
                        events: Vec::new(),
                        result: None,
                        recording_file: None,
                    });
                    change(stored);
                }
            })
            .await
            .map(drop)
            .map_err(|e| system_failure(&format!("store write failed: {e}")))
    }

    async fn run(&self, job: &CallJob, wake: &Notify) -> Step<CallReport> {
        let stored = self
            .stored_call(job)
            .await?
            .platform
            .filter(|p| p.platform == self.adapter.name());
        let platform_call_id = match stored.as_ref().and_then(|p| p.platform_call_id.clone()) {
            Some(id) => {
                tracing::info!(
                    platform = self.adapter.name(),
                    "re-attached to the platform call"
                );
                id
            }
            None => {
                let found = match stored {
                    // The intent is stored but not the id: the platform may hold the call already.
                    Some(_) => self.find(job).await?,
                    None => {
                        self.update(job, |_| {}).await?;
                        None
                    }
                };
                match found {
                    Some(id) => {
                        tracing::info!(
                            platform = self.adapter.name(),
                            "found the call created before a restart"
                        );
                        self.store_id(job, &id).await?;
                        id
                    }
                    None => self.create(job).await?,
                }
            }
        };
        self.wait(job, &platform_call_id, wake).await
    }

    async fn store_id(&self, job: &CallJob, id: &str) -> Step<()> {
        let id = id.to_owned();
        self.update(job, move |p| {
            p.platform_call_id.get_or_insert_with(|| id.clone());
        })
        .await
    }

    async fn find(&self, job: &CallJob) -> Step<Option<String>> {
        for attempt in 1..=CREATE_ATTEMPTS {
            match self.adapter.find(&job.call_id).await {
                Ok(found) => return Ok(found),
                Err(e) => {
                    tracing::warn!(attempt, error = %e, "cannot ask the platform for an earlier call");
                    tokio::time::sleep(backoff(attempt)).await;
                }
            }
        }
        // Placing again without knowing would risk a second call to the payer: fail this attempt instead.
        Err(system_failure(
            "The voice platform could not be asked whether the call exists",
        ))
    }

    async fn create(&self, job: &CallJob) -> Step<String> {
        let request = PlatformCallRequest {
            extraction: extraction_fields(&job.schema),
            variables: {
                let mut variables = prompt_variables(&job.schema, &job.inputs, &job.known);
                variables.insert("payer_notes".into(), job.payer_notes.clone());
                variables
            },
            job: job.clone(),
        };
        for attempt in 1..=CREATE_ATTEMPTS {
            self.creates.fetch_add(1, Ordering::Relaxed);
            match self.adapter.create(&request).await {
                Ok(id) => {
                    tracing::info!(platform = self.adapter.name(), platform_call_id = %id, "platform call created");
                    self.store_id(job, &id).await?;
                    return Ok(id);
                }
                Err(PlatformError::Rejected(reason)) => {
                    tracing::warn!(reason = %reason, "the platform refused the call");
                    return Err(system_failure("The voice platform refused the call"));
                }
                Err(PlatformError::Unavailable(reason)) => {
                    tracing::warn!(attempt, reason = %reason, "create-call answer lost");
                    if let Some(id) = self.look_after_failed_create(job, attempt).await? {
                        return Ok(id);
                    }
                }
                Err(PlatformError::NotSent(reason)) => {
                    tracing::warn!(
                        attempt,
                        reason = %reason,
                        "create-call request did not reach the platform (no connection): nothing was sent"
                    );
                    if let Some(id) = self.look_after_failed_create(job, attempt).await? {
                        return Ok(id);
                    }
                }
            }
        }
        Err(system_failure("The voice platform could not be reached"))
    }

    /// After a create that failed without a refusal: waits, then looks for the call before the next
    /// create. Also after a create that was not sent, since an earlier attempt's may have taken effect.
    async fn look_after_failed_create(&self, job: &CallJob, attempt: u32) -> Step<Option<String>> {
        tokio::time::sleep(backoff(attempt)).await;
        if let Ok(Some(id)) = self.adapter.find(&job.call_id).await {
            self.store_id(job, &id).await?;
            return Ok(Some(id));
        }
        Ok(None)
    }

    async fn wait(&self, job: &CallJob, platform_call_id: &str, wake: &Notify) -> Step<CallReport> {
        let deadline = Instant::now() + self.options.call_timeout;
        // A re-attached call may have ended while nobody listened: read it soon rather than a full period on.
        let mut next_read = Instant::now() + self.options.poll_interval.min(Duration::from_secs(1));
        loop {
            let Some(stored) = self.stored_call(job).await?.platform else {
                return Err(system_failure("the call's platform record vanished"));
            };
            if let Some(result) = stored.result.clone() {
                return self.finish(job, stored, result).await;
            }
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep_until(next_read) => {
                    next_read = Instant::now() + self.options.poll_interval;
                    if let Some(read) = self.adapter.read(platform_call_id) {
                        match read.await {
                            Ok(PlatformCallState::Ended(result)) => {
                                let value = serde_json::to_value(&*result).ok();
                                self.update(job, move |p| {
                                    if p.result.is_none() {
                                        p.result = value.clone();
                                    }
                                })
                                .await?;
                            }
                            Ok(PlatformCallState::Live) => {}
                            Err(e) => tracing::warn!(error = %e, "cannot read the platform call"),
                        }
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    tracing::warn!(platform_call_id, "no end of the platform call within the call timeout");
                    let mut report = *system_failure("No end of the call from the voice platform within the call timeout");
                    report.disposition = Disposition::HoldTimeout;
                    report.failure = None;
                    return Ok(report);
                }
            }
        }
    }

    async fn finish(
        &self,
        job: &CallJob,
        stored: PlatformCallRecord,
        value: serde_json::Value,
    ) -> Step<CallReport> {
        let result: CallResult = serde_json::from_value(value)
            .map_err(|e| system_failure(&format!("stored platform result unreadable: {e}")))?;
        let recording_url = match &result {
            CallResult::Platform(p) => p.recording_url.clone(),
            CallResult::Agent(_) => None,
        };
        let mut report = mapping::report(job, result);
        let mut recording_file = stored.recording_file;
        if let (None, Some(url)) = (&recording_file, recording_url) {
            recording_file = recording::download(
                &self.client,
                &url,
                &self.store,
                &job.request_id,
                &job.call_id,
            )
            .await;
            if let Some(file) = &recording_file {
                let named = file.clone();
                let written = self
                    .update(job, move |p| p.recording_file = Some(named.clone()))
                    .await;
                // Purged while the audio downloaded: the purge removed the files the request named,
                // not this one, which must not outlive its request.
                if written.is_err()
                    && matches!(self.store.fetch_request(&job.request_id).await, Ok(None))
                {
                    if let Err(e) = self.store.remove_recording(file).await {
                        tracing::error!(error.message = %e, "cannot remove the recording of a purged request");
                    }
                }
                written?;
            }
        }
        if recording_file.is_some() {
            report.recording = true;
        }
        Ok(report)
    }
}

impl Dialer for PlatformDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        let inner = Arc::clone(&self.inner);
        async move {
            let wake = Arc::new(Notify::new());
            inner.waiters.lock().expect("waiters lock").insert(
                job.call_id.clone(),
                Waiter {
                    request_id: job.request_id.clone(),
                    wake: Arc::clone(&wake),
                },
            );
            let report = inner
                .run(&job, &wake)
                .await
                .unwrap_or_else(|failed| *failed);
            inner
                .waiters
                .lock()
                .expect("waiters lock")
                .remove(&job.call_id);
            report
        }
        .boxed()
    }
}

pub(super) fn find_call<'a>(
    record: &'a mut switchboard_storage::RequestRecord,
    call_id: &CallId,
) -> Option<&'a mut CallRecord> {
    record
        .run
        .as_mut()?
        .calls
        .iter_mut()
        .find(|c| c.id == *call_id)
}

/// The intent's timestamp: the call's own placement instant (from the injected clock, via the record).
fn job_now(job: &CallJob) -> chrono::DateTime<chrono::Utc> {
    job.placed_at
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(500 * u64::from(attempt))
}

/// A failed report (`SYSTEM_ERROR`/`OTHER`) with `message`.
fn system_failure(message: &str) -> Box<CallReport> {
    Box::new(CallReport {
        transcript_post_call: Some(message.to_owned()),
        failure: Some(FailureRecord::new(
            FailureCategory::SystemError,
            FailureCode::Other,
            message,
        )),
        ..CallReport::new(Disposition::Failed)
    })
}
