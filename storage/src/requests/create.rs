//! Creating requests: a POST's batches encoded and sealed, then written in one grouped transaction with
//! their indexes, idempotency keys, bookings and `request.create` events.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::{Either, FutureExt};

use super::intake::{chunk_key, IntakeRecord, CHUNK};
use super::{booking_key, created_key, due_key, idempotency_key, read_count, Scope};
use crate::audit::{Actor, NewEvent, Target};
use crate::codec::{encode_as, encode_plain};
use crate::durability::Lane;
use crate::engine::TxResult;
use crate::group::{Committed, Queued, Txn, Verdict};
use crate::seal::{Sealed, Sealer};
use crate::{RequestBatchId, RequestId, RequestRecord, StorageError, Store};

impl Store {
    /// Inserts new requests with their indexes, idempotency keys and bookings, grouped with every write
    /// waiting on the same flush (one transaction and one fsync for all of them). Each request's id must be
    /// its place in its batch ([`RequestBatchId::member`], places from 1 in `records` order); a record that
    /// is not is declined as [`StorageError::NotABatchMember`] before anything is written. Whether an internal id
    /// replays an earlier request is decided before booking (intake); this write is the last line of
    /// defence against a concurrent create that claimed the same key in between: then nothing of it is
    /// written and the outcome is [`StorageError::InternalIdClaimed`].
    ///
    /// The write is queued at once, not when the answer is first awaited, and happens even if the answer is
    /// never awaited; the answer comes once the requests are durable. [`StorageError::Flush`] and
    /// [`StorageError::Closed`] leave it unknown whether they were stored; after any other error nothing of
    /// the create was written.
    pub fn commit_requests(
        &self,
        records: Arc<Vec<RequestRecord>>,
    ) -> impl Future<Output = Result<(), StorageError>> + 'static {
        self.commit_as_given(records, None, u32::MAX)
            .map(Committed::into_result)
    }

    /// The create of a client at address `ip`: [`Store::commit_requests`], with each request's
    /// `request.create` audit event, by its credential, written in the same transaction. No day may end
    /// with more than `capacity` requests booked: the counts are read in the transaction, so a create that
    /// another process booked the same places for is declined as [`StorageError::CapacityTaken`], with
    /// nothing written.
    ///
    /// A lone request (`records` of one) is not stored as given: it joins the batch its group shares with
    /// the other lone requests of its scope and due instant ([`super::shared`]), which names its id and
    /// creation instant, and its own batch id is its request id. The outcome is the requests as stored.
    pub fn commit_requests_from(
        &self,
        records: Arc<Vec<RequestRecord>>,
        ip: Option<std::net::IpAddr>,
        capacity: u32,
    ) -> impl Future<Output = Result<Arc<Vec<RequestRecord>>, StorageError>> + 'static {
        if records.len() == 1 {
            return Either::Left(
                self.commit_lone(records, ip, capacity)
                    .map(Committed::into_result),
            );
        }
        let given = self.commit_as_given(Arc::clone(&records), ip, capacity);
        Either::Right(given.map(move |committed| committed.into_result().map(|()| records)))
    }

    /// Queues the write of `records` under the ids they carry.
    fn commit_as_given(
        &self,
        records: Arc<Vec<RequestRecord>>,
        ip: Option<std::net::IpAddr>,
        capacity: u32,
    ) -> impl Future<Output = Committed<()>> + 'static {
        let generation = self.sealer.generation();
        let batches = batches(&self.sealer, &records);
        let sealer = Arc::clone(&self.sealer);
        let wants = self.announced_checks(&records);
        let done = batches.map(|mut batches| {
            let (job, done) = Queued::job_reading(wants, move |txn: &Txn| {
                // Sealed before a purge replaced keys: sealed again now (the ids were checked already).
                if sealer.generation() != generation {
                    if let Ok(again) = self::batches(&sealer, &records) {
                        batches = again;
                    }
                }
                let written = write_new_requests(txn, &sealer, &records, &batches, capacity)?;
                if written.is_ok() {
                    for record in records.iter() {
                        txn.record(created_event(record, ip));
                    }
                }
                Ok(written)
            });
            self.submit(job, Lane::Client);
            done
        });
        async move {
            match done {
                Ok(done) => done.await.unwrap_or(Committed {
                    outcome: Err(StorageError::Closed),
                    durable: Err(StorageError::Closed),
                }),
                Err(id) => Committed {
                    outcome: Err(StorageError::NotABatchMember(id)),
                    durable: Ok(()),
                },
            }
        }
    }

    /// Queues the write of a lone request (`records` of one), which joins its group's shared batch.
    fn commit_lone(
        &self,
        records: Arc<Vec<RequestRecord>>,
        ip: Option<std::net::IpAddr>,
        capacity: u32,
    ) -> impl Future<Output = Committed<Arc<Vec<RequestRecord>>>> + 'static {
        let (job, done) = self.lone_job(records, ip, capacity);
        self.submit(job, Lane::Client);
        async move {
            done.await.unwrap_or(Committed {
                outcome: Err(StorageError::Closed),
                durable: Err(StorageError::Closed),
            })
        }
    }

    /// The write of a lone request, not yet queued.
    pub(super) fn lone_job(
        &self,
        records: Arc<Vec<RequestRecord>>,
        ip: Option<std::net::IpAddr>,
        capacity: u32,
    ) -> (Box<dyn crate::group::Job>, Answer<Arc<Vec<RequestRecord>>>) {
        let sealer = Arc::clone(&self.sealer);
        let wants = self.announced_checks(&records);
        Queued::job_reading(wants, move |txn: &Txn| {
            let bookings = match checked_bookings(txn, &sealer, &records, capacity)? {
                Ok(bookings) => bookings,
                Err(declined) => return Ok(Err(declined)),
            };
            let stored = txn.shared.borrow_mut().join(&records[0]);
            super::table_rows::put_row(&txn.requests, &stored[0], None);
            claim_internal_ids(txn, &sealer, &stored)?;
            put_bookings(txn, bookings)?;
            txn.record(created_event(&stored[0], ip));
            Ok(Ok(stored))
        })
    }

    /// The reads the checks of a create of `records` will make, announced ahead on an engine that reads
    /// over the network; on sled the keys would be computed twice for nothing.
    pub(super) fn announced_checks(
        &self,
        records: &Arc<Vec<RequestRecord>>,
    ) -> Option<crate::group::Wants> {
        self.db.reads_over_network().then(|| {
            let (sealer, records) = (Arc::clone(&self.sealer), Arc::clone(records));
            Box::new(move |txn: &Txn| want_checks(txn, &sealer, &records)) as crate::group::Wants
        })
    }
}

/// Where a queued write's outcome arrives.
type Answer<T> = tokio::sync::oneshot::Receiver<Committed<T>>;

/// One batch of a create, encoded before the write.
pub(super) struct NewBatch {
    pub(super) id: RequestBatchId,
    /// Its scope's key prefix.
    pub(super) prefix: Vec<u8>,
    pub(super) created_at: DateTime<Utc>,
    pub(super) due_at: DateTime<Utc>,
    pub(super) count: u32,
    /// The encoded [`IntakeRecord`] of each chunk, in order.
    pub(super) chunks: Vec<Vec<u8>>,
}

/// Groups `records` into their batches and encodes each whole, or names the first record whose id is not
/// its place in its batch.
fn batches(sealer: &Sealer, records: &[RequestRecord]) -> Result<Vec<NewBatch>, RequestId> {
    let mut batches: Vec<(&RequestBatchId, Vec<&RequestRecord>)> = Vec::new();
    for record in records {
        match batches.iter_mut().find(|(id, _)| **id == record.batch_id) {
            Some((_, members)) => members.push(record),
            None => batches.push((&record.batch_id, vec![record])),
        }
    }
    batches
        .into_iter()
        .map(|(id, members)| {
            for (place, member) in members.iter().enumerate() {
                if member.id.batch_place() != Some((id.clone(), place + 1)) {
                    return Err(member.id.clone());
                }
            }
            let first = members[0];
            Ok(NewBatch {
                id: id.clone(),
                prefix: Scope::new(first.account_id.clone(), first.environment).prefix(),
                created_at: first.created_at,
                due_at: first.due_at,
                count: members.len() as u32,
                chunks: sealed_chunks(sealer, id, &members, false),
            })
        })
        .collect()
}

/// The sealed chunks of a batch whose members are `members`, in place order; `shared` if they are lone
/// requests that share it.
pub(super) fn sealed_chunks(
    sealer: &Sealer,
    id: &RequestBatchId,
    members: &[&RequestRecord],
    shared: bool,
) -> Vec<Vec<u8>> {
    let count = members.len() as u32;
    let plain = IntakeRecord::stored_plain(members);
    members
        .chunks(CHUNK)
        .enumerate()
        .map(|(place, chunk)| {
            let stored = IntakeOut {
                count,
                members: chunk,
                shared,
            };
            let encoded = if plain {
                encode_plain::<IntakeRecord>(&stored)
            } else {
                encode_as::<IntakeRecord>(&stored, false)
            };
            sealer.seal(Sealed::Intake, &chunk_key(id, place), &encoded)
        })
        .collect()
}

/// An [`IntakeRecord`] encoded from borrowed members, byte for byte the same.
#[derive(serde::Serialize)]
struct IntakeOut<'a> {
    count: u32,
    members: &'a [&'a RequestRecord],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    shared: bool,
}

/// Announces the reads of [`write_new_requests`]'s checks: idempotency keys and booking counts.
fn want_checks(txn: &Txn, sealer: &Sealer, records: &[RequestRecord]) {
    for record in records {
        let scope = Scope::new(record.account_id.clone(), record.environment);
        if let Some(internal_id) = &record.internal_id {
            txn.idempotency
                .want(idempotency_key(sealer, &scope, internal_id));
        }
        txn.bookings.want(booking_key(&scope, record.due_date));
    }
}

/// The creation write: every check (idempotency keys, booking counts) before the first write, so a declined
/// create leaves nothing in a group it shares.
fn write_new_requests(
    txn: &Txn,
    sealer: &Sealer,
    records: &[RequestRecord],
    batches: &[NewBatch],
    capacity: u32,
) -> Verdict<()> {
    let bookings = match checked_bookings(txn, sealer, records, capacity)? {
        Ok(bookings) => bookings,
        Err(declined) => return Ok(Err(declined)),
    };
    claim_internal_ids(txn, sealer, records)?;
    for batch in batches {
        put_batch(txn, batch)?;
    }
    for record in records {
        super::table_rows::put_row(&txn.requests, record, None);
    }
    put_bookings(txn, bookings)?;
    Ok(Ok(()))
}

/// The checks of a create of `records`: no internal id claimed already (or twice among them), and no day
/// booked past `capacity`. The answer is each day's booking count with `records` counted in, to be stored.
pub(super) fn checked_bookings(
    txn: &Txn,
    sealer: &Sealer,
    records: &[RequestRecord],
    capacity: u32,
) -> Verdict<BTreeMap<Vec<u8>, u32>> {
    let mut claimed = HashSet::new();
    let mut bookings: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    for record in records {
        let scope = Scope::new(record.account_id.clone(), record.environment);
        if let Some(internal_id) = &record.internal_id {
            let key = idempotency_key(sealer, &scope, internal_id);
            if txn.idempotency.get(&key)?.is_some() || !claimed.insert(key) {
                return Ok(Err(StorageError::InternalIdClaimed(internal_id.clone())));
            }
        }
        let booking = booking_key(&scope, record.due_date);
        if let Entry::Vacant(unread) = bookings.entry(booking) {
            let count = match txn.bookings.get(unread.key())? {
                Some(v) => match read_count(&v) {
                    Ok(count) => count,
                    Err(e) => return Ok(Err(e)),
                },
                None => 0,
            };
            unread.insert(count);
        }
    }
    for record in records {
        let scope = Scope::new(record.account_id.clone(), record.environment);
        *bookings
            .get_mut(&booking_key(&scope, record.due_date))
            .expect("every booking key was read above") += 1;
    }
    // The booking desk of this process placed them; another process on the same database may have
    // booked the same places since its ledger was read.
    if bookings.values().any(|count| *count > capacity) {
        return Ok(Err(StorageError::CapacityTaken));
    }
    Ok(Ok(bookings))
}

/// Claims the internal id of each of `records` for it.
pub(super) fn claim_internal_ids(
    txn: &Txn,
    sealer: &Sealer,
    records: &[RequestRecord],
) -> TxResult<()> {
    for record in records {
        if let Some(internal_id) = &record.internal_id {
            let scope = Scope::new(record.account_id.clone(), record.environment);
            txn.idempotency.put(
                idempotency_key(sealer, &scope, internal_id),
                record.id.as_bytes(),
            )?;
        }
    }
    Ok(())
}

/// Writes a batch whole: its chunks, its listing entry and its due entry.
pub(super) fn put_batch(txn: &Txn, batch: &NewBatch) -> TxResult<()> {
    let id = batch.id.as_bytes();
    let count = batch.count.to_be_bytes();
    for (chunk, value) in batch.chunks.iter().enumerate() {
        txn.intake
            .put(chunk_key(&batch.id, chunk), value.as_slice())?;
    }
    txn.request_index
        .put(created_key(&batch.prefix, batch.created_at, id), &count)?;
    txn.due.put(due_key(batch.due_at, id), &count)
}

/// Stores the booking counts [`checked_bookings`] answered.
pub(super) fn put_bookings(txn: &Txn, bookings: BTreeMap<Vec<u8>, u32>) -> TxResult<()> {
    for (key, count) in bookings {
        txn.bookings.put(key, &count.to_be_bytes())?;
    }
    Ok(())
}

/// The `request.create` event of `record`.
pub(super) fn created_event(record: &RequestRecord, ip: Option<std::net::IpAddr>) -> NewEvent {
    NewEvent {
        at: record.created_at,
        actor: Actor::api_key(record.credential_id.as_deref().unwrap_or("unknown")),
        action: "request.create".into(),
        target: Some(Target::new("request", record.id.as_str())),
        outcome: "ok".into(),
        ip,
        count: None,
    }
}
