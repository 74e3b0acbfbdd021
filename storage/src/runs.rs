//! Orchestration writes: starting a request's run, recording each transition, and finishing it.
//!
//! A request moves from the `due` index (booked, waiting for its day) to the `active` index (running) in
//! the same transaction that starts its run, and leaves `active` in the transaction that makes it terminal.
//! Start-up recovery therefore reads two small indexes instead of scanning every request.

use std::sync::Arc;

use crate::codec::encode;
use crate::decoded::Decoded;
use crate::deliveries::enqueue_first_round;
use crate::durability::Lane;
use crate::engine::Bytes;
use crate::group::{Committed, Job, Queued, Txn, Verdict};
use crate::requests::{due_key, read_count, stored_request, IntakeRecord, Stored};
use crate::seal::{Sealed, Sealer};
use crate::{
    DeliveryRecord, PayerLearning, RequestBatchId, RequestId, RequestRecord, StorageError, Store,
};
use chrono::{DateTime, Utc};
use sled::transaction::UnabortableTransactionError;
use tokio::sync::oneshot;

/// A booked request whose day has come.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueEntry {
    /// The instant its business day began.
    pub due_at: DateTime<Utc>,
    /// The request.
    pub request_id: RequestId,
    /// The batch whose due entry stands for it, until it retires; `None` for a request stored alone
    /// (converted from layout 3, see `requests::alone`), which has a due entry of its own. The store's
    /// own business ([`Store::due_work`]).
    pub(crate) batch: Option<RequestBatchId>,
}

impl Store {
    /// Booked requests whose day began at or before `now`, earliest first: the requests of a batch not yet
    /// retired (some may have started since), and the requests with an entry of their own not yet started.
    /// The index is keyed by that instant, so requests booked for later days are never read.
    pub async fn due_by(&self, now: DateTime<Utc>) -> Result<Vec<DueEntry>, StorageError> {
        let end = ((now.timestamp_micros().max(0) as u64) + 1).to_be_bytes();
        let mut entries = Vec::new();
        let due = self.group.due.read_range(..end.to_vec(), false, usize::MAX);
        for (key, value) in due.await? {
            let (instant, id) = key.split_at(8);
            let micros = u64::from_be_bytes(instant.try_into().map_err(|_| corrupt("due key"))?);
            let due_at = DateTime::from_timestamp_micros(micros as i64)
                .ok_or_else(|| corrupt("due instant"))?;
            let id = String::from_utf8_lossy(id).into_owned();
            if value.is_empty() {
                entries.push(DueEntry {
                    due_at,
                    request_id: RequestId::from(id),
                    batch: None,
                });
                continue;
            }
            let batch = RequestBatchId::from(id);
            for request_id in IntakeRecord::ids_newest_first(&batch, read_count(&value)?).rev() {
                entries.push(DueEntry {
                    due_at,
                    request_id,
                    batch: Some(batch.clone()),
                });
            }
        }
        Ok(entries)
    }

    /// Ids of requests whose run has started and not finished.
    pub async fn active_request_ids(&self) -> Result<Vec<RequestId>, StorageError> {
        let active = self
            .group
            .active
            .read_range::<&[u8], _>(.., false, usize::MAX);
        Ok(active
            .await?
            .iter()
            .map(|(key, _)| RequestId::from(String::from_utf8_lossy(key).into_owned()))
            .collect())
    }

    /// Applies `change` to a request atomically, grouped with every write waiting on the same flush (one
    /// transaction and one fsync for all of them); returns the record as written once it is durable. The
    /// change also decides the request's place in the indexes: a started run leaves `due` and joins
    /// `active`; a terminal state leaves `active`.
    pub async fn commit_update(
        &self,
        id: &RequestId,
        mut change: impl FnMut(&mut RequestRecord) + Send + 'static,
    ) -> Result<RequestRecord, StorageError> {
        let (record, ()) = self.commit_change(id, move |r| change(r)).await?;
        Ok(record)
    }

    /// [`Store::commit_update`] for a change that also tells its caller what it found. `change` may run
    /// more than once (the transaction runs again after a conflict), each time on the record as stored:
    /// what it returns is what its last run found.
    pub async fn commit_change<T: Send + 'static>(
        &self,
        id: &RequestId,
        mut change: impl FnMut(&mut RequestRecord) -> T + Send + 'static,
    ) -> Result<(RequestRecord, T), StorageError> {
        let job_id = id.clone();
        let decoded = Arc::clone(&self.decoded_requests);
        let intake = Arc::clone(&self.decoded_intake);
        let sealer = Arc::clone(&self.sealer);
        let job = Queued::job(move |txn: &Txn| {
            write_request_update(txn, &decoded, &intake, &sealer, &job_id, &mut change)
        });
        let (updated, found) = self.request_write(job, false).await?;
        Ok((Arc::unwrap_or_clone(updated), found))
    }

    /// Stores `record`, a request's final state, in place of its running one and enqueues `delivery` (if
    /// any) and adds `learning` (what its calls taught about its payer's line) in the same transaction,
    /// grouped like [`Store::commit_update`]; returns once durable, with whether `record` was stored. A
    /// request already terminal keeps its stored record (the answer is `false`), and neither a webhook
    /// is enqueued nor anything learned for the record not stored.
    ///
    /// A change that overwrote the whole record would decode the stored one, copy the new one in and
    /// encode it, all on the flusher thread. Here the caller's thread encodes it, the stored record is
    /// only looked at for its standing, through the decoded copies (the finishing actor has just read it,
    /// so that is usually a hit), and the final record joins them for the reads that follow.
    pub async fn commit_final(
        &self,
        record: RequestRecord,
        delivery: Option<DeliveryRecord>,
        learning: Option<PayerLearning>,
    ) -> Result<bool, StorageError> {
        let enqueues = delivery.is_some();
        let id = record.id.clone();
        let generation = self.sealer.generation();
        let sealer = Arc::clone(&self.sealer);
        let storing = self.deliveries.clone();
        let plain_delivery = delivery.as_ref().map(encode);
        let mut encoded = Bytes::from(self.sealer.seal(
            Sealed::Requests,
            id.as_bytes(),
            &encode(&record),
        ));
        // Sealed here too, on the caller's thread rather than the flusher's.
        let mut delivery = delivery.map(|delivery| {
            let stored = self.deliveries.store(id.as_bytes(), encode(&delivery));
            (delivery.next_at, stored)
        });
        let record = Arc::new(record);
        let decoded = Arc::clone(&self.decoded_requests);
        let intake = Arc::clone(&self.decoded_intake);
        // Dropped with the job, once its flush has settled: the first round is handed out from then on.
        let hold = enqueues.then(|| self.outbox.hold(&id));
        let job = Queued::job(move |txn: &Txn| {
            let _held_until_durable = &hold;
            let stored = match stored_record(txn, &decoded, &intake, &id)? {
                Ok(stored) => stored,
                Err(e) => return Ok(Err(e)),
            };
            // A request already terminal was finished, webhook included, by the write that made it so.
            if stored.state.is_terminal() {
                return Ok(Ok(false));
            }
            // Sealed before a purge replaced keys: sealed again now.
            if sealer.generation() != generation {
                encoded =
                    Bytes::from(sealer.seal(Sealed::Requests, id.as_bytes(), &encode(&*record)));
                if let (Some((_, stored)), Some(plain)) =
                    (delivery.as_mut(), plain_delivery.as_ref())
                {
                    *stored = storing.store(id.as_bytes(), plain.clone());
                }
            }
            store_written(
                txn,
                &decoded,
                &id,
                Standing::of(&stored),
                &record,
                encoded.clone(),
            )?;
            if let Some((next_at, stored)) = delivery.as_ref() {
                enqueue_first_round(txn, &id, *next_at, stored)?;
            }
            if let Some(learning) = learning.as_ref() {
                crate::payer_stats::learn(txn, learning)?;
            }
            Ok(Ok(true))
        });
        self.request_write(job, enqueues).await
    }

    /// Queues a grouped request write and waits until it is durable. A write that enqueues a webhook has a
    /// client waiting on its delivery, so it goes first.
    pub(crate) async fn request_write<T>(
        &self,
        (job, done): (Box<dyn Job>, oneshot::Receiver<Committed<T>>),
        enqueues: bool,
    ) -> Result<T, StorageError> {
        let lane = if enqueues {
            Lane::Client
        } else {
            Lane::Background
        };
        self.submit(job, lane);
        done.await.map_err(|_| StorageError::Closed)?.into_result()
    }
}

/// A request's change and its moves between the `due` and `active` indexes.
fn write_request_update<T>(
    txn: &Txn,
    decoded: &Decoded<RequestRecord>,
    intake: &Decoded<IntakeRecord>,
    sealer: &Sealer,
    id: &RequestId,
    change: &mut dyn FnMut(&mut RequestRecord) -> T,
) -> Verdict<(Arc<RequestRecord>, T)> {
    let record = match stored_request(txn, intake, id)? {
        // The record a step or its actor read last is usually still decoded: taken, not decoded again.
        Ok(Some(Stored::Own(bytes))) => decoded.take(id.as_bytes(), &bytes),
        // Its first change: the record of its own starts as its batch's copy.
        Ok(Some(Stored::InBatch(record))) => Ok(Arc::unwrap_or_clone(record)),
        Ok(None) => Err(StorageError::RequestMissing(id.clone())),
        Err(e) => Err(e),
    };
    let mut record = match record {
        Ok(record) => record,
        Err(e) => return Ok(Err(e)),
    };
    let before = Standing::of(&record);
    let found = change(&mut record);
    let encoded = Bytes::from(sealer.seal(Sealed::Requests, id.as_bytes(), &encode(&record)));
    let record = Arc::new(record);
    store_written(txn, decoded, id, before, &record, encoded)?;
    Ok(Ok((record, found)))
}

/// Stores a request's new bytes, moves it between the indexes from where it stood `before`, and hands the
/// record over to the decoded copies for the actor that reads it next (and the write after that).
pub(crate) fn store_written(
    txn: &Txn,
    decoded: &Decoded<RequestRecord>,
    id: &RequestId,
    before: Standing,
    record: &Arc<RequestRecord>,
    encoded: Bytes,
) -> Result<(), UnabortableTransactionError> {
    txn.requests.put(id.as_bytes(), encoded.clone())?;
    crate::requests::table_rows::put_row(&txn.requests, record, Some(&encoded));
    reindex(txn, id, before, Standing::of(record))?;
    decoded.put(id.as_bytes(), encoded, Arc::clone(record));
    Ok(())
}

/// Where a request stands in the `due` and `active` indexes, by the one rule every write follows, so the
/// stored record tells where it stands: most steps of a run move it nowhere and touch no index.
#[derive(Clone, Copy)]
pub(crate) struct Standing {
    /// Out of `due`: its run has started.
    started: bool,
    /// In `active`: running and not finished.
    active: bool,
    due_at: DateTime<Utc>,
}

impl Standing {
    pub(crate) fn of(record: &RequestRecord) -> Standing {
        Standing {
            started: record.run.is_some(),
            active: record.run.is_some() && !record.state.is_terminal(),
            due_at: record.due_at,
        }
    }
}

/// Moves a request between the indexes as its standing changed.
fn reindex(
    txn: &Txn,
    id: &RequestId,
    before: Standing,
    after: Standing,
) -> Result<(), UnabortableTransactionError> {
    if after.started && !before.started {
        // Only a request stored alone has an entry of its own: a batch's goes at retirement.
        txn.due.remove(due_key(after.due_at, id.as_bytes()))?;
    }
    match (before.active, after.active) {
        (false, true) => txn.active.put(id.as_bytes(), &[] as &[u8])?,
        (true, false) => txn.active.remove(id.as_bytes()).map(drop)?,
        _ => {}
    }
    Ok(())
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "run index",
        reason: what.to_owned(),
    }
}

/// Request `id` as stored, read in `txn`: its own value decoded (through `decoded`), or its place in its
/// batch; [`StorageError::RequestMissing`] when it has neither.
pub(crate) fn stored_record(
    txn: &Txn,
    decoded: &Decoded<RequestRecord>,
    intake: &Decoded<IntakeRecord>,
    id: &RequestId,
) -> Verdict<Arc<RequestRecord>> {
    Ok(match stored_request(txn, intake, id)? {
        Ok(Some(Stored::Own(bytes))) => decoded.peek(id.as_bytes(), &bytes),
        Ok(Some(Stored::InBatch(record))) => Ok(record),
        Ok(None) => Err(StorageError::RequestMissing(id.clone())),
        Err(e) => Err(e),
    })
}
