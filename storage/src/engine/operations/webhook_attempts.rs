//! The log of webhook attempts: every HTTP attempt of a request's deliveries, in order. It holds ids,
//! times and status codes, none of the request's data, so it is neither sealed nor bound.

use super::{on_engine, Engine};
use crate::{AttemptRecord, RequestId, StorageError};

/// An attempt's place in the log: its request, and a number after every earlier attempt's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptEntry {
    pub(crate) request_id: RequestId,
    pub(crate) seq: u64,
}

/// What every engine does with the log.
pub(crate) trait WebhookAttempts {
    /// Logs `attempt`, about to be sent and without an outcome yet, after every earlier attempt of its
    /// request; returns once durable, so a receiver that has the webhook finds it in the log.
    async fn begin_attempt(&self, attempt: &AttemptRecord) -> Result<AttemptEntry, StorageError>;

    /// Logs `attempt`, its outcome known, after every earlier attempt of its request.
    async fn record_attempt(&self, attempt: &AttemptRecord) -> Result<(), StorageError>;

    /// Writes `attempt`, now with its outcome, in place of what `entry` logged.
    async fn finish_attempt(
        &self,
        entry: &AttemptEntry,
        attempt: &AttemptRecord,
    ) -> Result<(), StorageError>;

    /// Every attempt of `request_id`, in order.
    async fn attempts(&self, request_id: &RequestId) -> Result<Vec<AttemptRecord>, StorageError>;

    /// Removes every attempt of `request_id` (its purge).
    async fn remove_attempts(&self, request_id: &RequestId) -> Result<(), StorageError>;
}

impl WebhookAttempts for Engine<'_> {
    async fn begin_attempt(&self, attempt: &AttemptRecord) -> Result<AttemptEntry, StorageError> {
        on_engine!(self, e => e.begin_attempt(attempt))
    }

    async fn record_attempt(&self, attempt: &AttemptRecord) -> Result<(), StorageError> {
        on_engine!(self, e => e.record_attempt(attempt))
    }

    async fn finish_attempt(
        &self,
        entry: &AttemptEntry,
        attempt: &AttemptRecord,
    ) -> Result<(), StorageError> {
        on_engine!(self, e => e.finish_attempt(entry, attempt))
    }

    async fn attempts(&self, request_id: &RequestId) -> Result<Vec<AttemptRecord>, StorageError> {
        on_engine!(self, e => e.attempts(request_id))
    }

    async fn remove_attempts(&self, request_id: &RequestId) -> Result<(), StorageError> {
        on_engine!(self, e => e.remove_attempts(request_id))
    }
}
