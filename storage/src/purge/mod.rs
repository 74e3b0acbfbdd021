//! Purging a request: gone for clients, and its PHI unrecoverable from `data_dir` even with the master key.
//!
//! One transaction removes the request and everything written with it (its record or its place in its
//! batch, its index and due entries, its webhook and queue entry, its idempotency key), records the
//! `request.purge` event, and leaves a marker naming the keys to replace. Then [`shred`] replaces those keys
//! (see its docs): from that moment every copy of the request sled's log may still hold is noise. The
//! attempt log and recording files go after the transaction; a crash before the keys are replaced is
//! finished at the next opening, before anything is read.

mod shred;
mod test_hooks;

use crate::engine::operations::WebhookAttempts;
use crate::engine::TxTree;
use chrono::{DateTime, Utc};
use sled::transaction::ConflictableTransactionError;

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::requests::alone::placed_batch;
use crate::requests::{
    created_key, due_key, idempotency_key, intake_chunk_key, intake_chunks, member_slot,
    IntakeRecord, Scope,
};
use crate::seal::{owner_of_request, Sealed};
use crate::{RequestBatchId, RequestId, RequestRecord, RequestState, StorageError, Store};

/// What a purge removed, for the layers above.
#[derive(Debug)]
pub struct Purged {
    /// The request.
    pub request_id: RequestId,
    /// The names of its recordings, already removed.
    pub recordings: Vec<String>,
    /// Whether its run had started and not ended.
    pub was_running: bool,
    /// When it reached its terminal state, if it had.
    pub completed_at: Option<DateTime<Utc>>,
}

type Tx<T> = Result<T, ConflictableTransactionError<StorageError>>;

impl Store {
    /// Purges request `id` with `event` (its `request.purge`), durably; `None` when there is no such
    /// request (or it was purged already). Its recordings are removed.
    /// Its keys are replaced by [`Store::finish_purges`], once its work has stopped (or at the next
    /// opening).
    pub async fn purge_request(
        &self,
        id: &RequestId,
        event: NewEvent,
    ) -> Result<Option<Purged>, StorageError> {
        let g = &self.group;
        let trees = [
            &g.requests,
            &g.intake,
            &g.request_index,
            &g.idempotency,
            &g.due,
            &g.active,
            &g.deliveries,
            &g.delivery_queue,
            &self.shreds,
            &self.purged_calls,
        ];
        let purged = self.audited_if_changed(&trees, &[event], |t| {
            let removed = self.remove_request(t, id)?;
            let changed = removed.is_some();
            Ok((removed, changed))
        })?;
        let Some(record) = purged else {
            return Ok(None);
        };
        self.durable().await?;
        // Ids and status codes only, but a purged request leaves nothing.
        self.engine().remove_attempts(id).await?;
        let recordings = recording_files(&record);
        for name in &recordings {
            self.remove_recording(name).await?;
        }
        Ok(Some(Purged {
            request_id: id.clone(),
            recordings,
            was_running: record.run.is_some() && !record.state.is_terminal(),
            completed_at: record.completed_at,
        }))
    }

    /// Inside the purge's transaction: removes what is stored for `id` and marks its key for replacing.
    fn remove_request(&self, t: &[TxTree], id: &RequestId) -> Tx<Option<RequestRecord>> {
        let (requests, intake, index, idempotency, due, active, deliveries, queue, shreds) = (
            &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6], &t[7], &t[8],
        );
        let abort = ConflictableTransactionError::Abort;
        let own = requests.get(id.as_bytes())?;
        let slot = member_slot(id);
        let (record, chunk) = match (&own, &slot) {
            (Some(bytes), _) => (self.open_record(id, bytes).map_err(abort)?, None),
            (None, Some((key, index))) => {
                let Some(bytes) = intake.get(key)? else {
                    return Ok(None);
                };
                let chunk = self.open_chunk(key, &bytes).map_err(abort)?;
                match chunk.members.get(*index).and_then(Option::as_ref) {
                    Some(member) if member.id == *id => {
                        ((**member).clone(), Some((key.clone(), *index, chunk)))
                    }
                    _ => return Ok(None),
                }
            }
            (None, None) => return Ok(None),
        };
        let scope = Scope::new(record.account_id.clone(), record.environment);
        requests.remove(id.as_bytes())?;
        crate::requests::table_rows::delete_row(requests, id);
        active.remove(id.as_bytes())?;
        for call in record.run.iter().flat_map(|run| run.calls.iter()) {
            t[9].insert(call.id.as_bytes(), &[] as &[u8])?;
        }
        if let Some((key, index, mut chunk)) = chunk {
            chunk.members[index] = None;
            intake.insert(
                key.clone(),
                self.sealer.seal(Sealed::Intake, &key, &encode(&chunk)),
            )?;
        }
        match placed_batch(&record) {
            Some(batch) => {
                let others = self
                    .live_members(requests, intake, &batch, id)
                    .map_err(abort)?;
                if others == 0 {
                    self.remove_batch(intake, index, due, &batch, &record)
                        .map_err(abort)?;
                }
                mark_for_shred(shreds, batch.as_bytes(), others > 0)?;
            }
            None => {
                // Stored alone (see `requests::alone`): entries of its own, and its name in its batch's
                // head. Its values are sealed under the key of the owner its id names.
                index.remove(created_key(
                    &scope.prefix(),
                    record.created_at,
                    id.as_bytes(),
                ))?;
                due.remove(due_key(record.due_at, id.as_bytes()))?;
                self.unname(intake, &record.batch_id, id).map_err(abort)?;
                mark_for_shred(shreds, &owner_of_request(id.as_bytes()), false)?;
            }
        }
        if let Some(bytes) = deliveries.remove(id.as_bytes())? {
            let delivery: crate::DeliveryRecord = self
                .sealer
                .open(Sealed::Deliveries, id.as_bytes(), &bytes)
                .and_then(|plain| decode(&plain))
                .map_err(abort)?;
            queue.remove(crate::deliveries::queue_key(
                delivery.queued_at(),
                id.as_str(),
            ))?;
        }
        if let Some(internal_id) = &record.internal_id {
            let key = idempotency_key(&self.sealer, &scope, internal_id);
            if idempotency
                .get(&key)?
                .is_some_and(|claimed| claimed.as_ref() == id.as_bytes())
            {
                idempotency.remove(key)?;
            }
        }
        Ok(Some(record))
    }

    /// Members of `batch` other than `purged` that are still stored.
    fn live_members(
        &self,
        requests: &TxTree,
        intake: &TxTree,
        batch: &RequestBatchId,
        purged: &RequestId,
    ) -> Result<u32, StorageError> {
        let first = intake_chunk_key(batch, 0);
        let Some(bytes) = intake.get(&first).map_err(|e| StorageError::Corrupt {
            kind: "intake batch",
            reason: e.to_string(),
        })?
        else {
            return Ok(0);
        };
        let count = self.open_chunk(&first, &bytes)?.count;
        let mut live = 0;
        for member in IntakeRecord::ids_newest_first(batch, count) {
            if member == *purged {
                continue;
            }
            let stored = requests.get(member.as_bytes()).ok().flatten().is_some()
                || self.still_in_batch(intake, &member)?;
            live += u32::from(stored);
        }
        Ok(live)
    }

    fn still_in_batch(&self, intake: &TxTree, id: &RequestId) -> Result<bool, StorageError> {
        let Some((key, index)) = member_slot(id) else {
            return Ok(false);
        };
        let Some(bytes) = intake.get(&key).ok().flatten() else {
            return Ok(false);
        };
        let chunk = self.open_chunk(&key, &bytes)?;
        Ok(chunk.members.get(index).is_some_and(Option::is_some))
    }

    /// Removes a batch none of whose members is left: its chunks, listing entry and due entry.
    fn remove_batch(
        &self,
        intake: &TxTree,
        index: &TxTree,
        due: &TxTree,
        batch: &RequestBatchId,
        record: &RequestRecord,
    ) -> Result<(), StorageError> {
        let fail = |e: sled::transaction::UnabortableTransactionError| StorageError::Corrupt {
            kind: "purge",
            reason: e.to_string(),
        };
        let first = intake_chunk_key(batch, 0);
        let count = match intake.get(&first).map_err(fail)? {
            Some(bytes) => self.open_chunk(&first, &bytes)?.count,
            None => 0,
        };
        for chunk in 0..intake_chunks(count).max(1) {
            intake
                .remove(intake_chunk_key(batch, chunk))
                .map_err(fail)?;
        }
        let prefix = Scope::new(record.account_id.clone(), record.environment).prefix();
        index
            .remove(created_key(&prefix, record.created_at, batch.as_bytes()))
            .map_err(fail)?;
        due.remove(due_key(record.due_at, batch.as_bytes()))
            .map_err(fail)?;
        Ok(())
    }

    fn open_record(&self, id: &RequestId, bytes: &[u8]) -> Result<RequestRecord, StorageError> {
        decode(&self.sealer.open(Sealed::Requests, id.as_bytes(), bytes)?)
    }

    fn open_chunk(&self, key: &[u8], bytes: &[u8]) -> Result<IntakeRecord, StorageError> {
        decode(&self.sealer.open(Sealed::Intake, key, bytes)?)
    }

    /// Whether `call` belonged to a purged request (its recording is gone for good).
    pub async fn call_purged(&self, call: &crate::CallId) -> Result<bool, StorageError> {
        Ok(self
            .purged_calls
            .get_async(call.as_bytes())
            .await?
            .is_some())
    }

    /// Ids of terminal requests of `scope` created before `created_before` whose `completed_at` is before
    /// `ended_before`, at most `limit`: what retention purges.
    pub async fn expired_requests(
        &self,
        scope: &Scope,
        created_before: DateTime<Utc>,
        ended_before: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<RequestId>, StorageError> {
        let mut expired = Vec::new();
        let mut cursor = None;
        let epoch = DateTime::from_timestamp_micros(0).expect("1970");
        loop {
            let page = self
                .list_requests(scope, epoch, created_before, cursor.as_ref(), 256)
                .await?;
            let Some(last) = page.last() else {
                return Ok(expired);
            };
            cursor = Some(crate::Cursor {
                created_at: last.created_at,
                request_id: last.id.clone(),
            });
            for record in page {
                let ended = record.state != RequestState::Processing
                    && record.completed_at.is_some_and(|at| at < ended_before);
                if ended {
                    expired.push(record.id);
                    if expired.len() == limit {
                        return Ok(expired);
                    }
                }
            }
        }
    }
}

/// Records that `owner`'s key is to be replaced (and, with `rekey`, its other members sealed again).
fn mark_for_shred(shreds: &TxTree, owner: &[u8], rekey: bool) -> Tx<()> {
    shreds.insert(owner, vec![u8::from(rekey)])?;
    Ok(())
}

/// The recording files a request's calls kept.
pub(crate) fn recording_files(record: &RequestRecord) -> Vec<String> {
    record
        .run
        .iter()
        .flat_map(|run| run.calls.iter())
        .filter_map(|call| call.platform.as_ref()?.recording_file.clone())
        .collect()
}

/// Shared with the shredder: the members of `batch` as stored.
pub(crate) fn members(batch: &RequestBatchId, count: u32) -> Vec<RequestId> {
    IntakeRecord::ids_newest_first(batch, count).collect()
}

#[cfg(test)]
mod on_a_standby;
#[cfg(test)]
mod tests;
