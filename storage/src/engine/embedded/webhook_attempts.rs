//! The webhook attempt log as a sled tree keyed by request id, a zero byte and the attempt's number.

use super::Embedded;
use crate::codec::{decode, encode};
use crate::engine::operations::{AttemptEntry, WebhookAttempts};
use crate::{AttemptRecord, RequestId, StorageError};

/// The keys of `request_id`'s attempts begin with this.
fn prefix(request_id: &RequestId) -> Vec<u8> {
    let mut prefix = request_id.as_bytes().to_vec();
    prefix.push(0);
    prefix
}

fn key(entry: &AttemptEntry) -> Vec<u8> {
    let mut key = prefix(&entry.request_id);
    key.extend_from_slice(&entry.seq.to_be_bytes());
    key
}

impl Embedded<'_> {
    /// A new place in the log of `attempt`'s request, after every earlier attempt.
    async fn next_entry(&self, attempt: &AttemptRecord) -> Result<AttemptEntry, StorageError> {
        Ok(AttemptEntry {
            request_id: attempt.request_id.clone(),
            seq: self.sled().generate_id()?,
        })
    }
}

impl WebhookAttempts for Embedded<'_> {
    async fn begin_attempt(&self, attempt: &AttemptRecord) -> Result<AttemptEntry, StorageError> {
        let entry = self.next_entry(attempt).await?;
        self.finish_attempt(&entry, attempt).await?;
        self.0.durable().await?;
        Ok(entry)
    }

    async fn record_attempt(&self, attempt: &AttemptRecord) -> Result<(), StorageError> {
        let entry = self.next_entry(attempt).await?;
        self.finish_attempt(&entry, attempt).await
    }

    async fn finish_attempt(
        &self,
        entry: &AttemptEntry,
        attempt: &AttemptRecord,
    ) -> Result<(), StorageError> {
        let _open = self.0.group.gate.read().expect("write gate");
        self.0
            .delivery_attempts
            .insert(key(entry), encode(attempt))?;
        Ok(())
    }

    async fn attempts(&self, request_id: &RequestId) -> Result<Vec<AttemptRecord>, StorageError> {
        self.0
            .delivery_attempts
            .read_prefix(prefix(request_id))
            .await?
            .iter()
            .map(|(_, value)| decode(value))
            .collect()
    }

    async fn remove_attempts(&self, request_id: &RequestId) -> Result<(), StorageError> {
        let _open = self.0.group.gate.read().expect("write gate");
        let mut removals = crate::engine::Batch::default();
        for key in self
            .0
            .delivery_attempts
            .scan_prefix(prefix(request_id))
            .keys()
        {
            removals.remove(key?);
        }
        if !removals.is_empty() {
            self.0.delivery_attempts.apply_batch(removals)?;
        }
        Ok(())
    }
}
