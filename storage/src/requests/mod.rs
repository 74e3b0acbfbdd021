//! Requests, their indexes, idempotency keys and the capacity ledger.
//!
//! Creation writes one transaction over six trees (shared with other writes waiting on the same flush), so a request never exists without its indexes, its
//! idempotency key or its booking, and an idempotency key is checked and claimed in the same atomic step
//! that inserts the request.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use crate::codec::{decode, encode};
use crate::durability::Lane;
use crate::group::{Committed, Queued, Txn, Verdict};
use crate::{Environment, RequestBatchId, RequestId, RequestRecord, StorageError, Store};

/// What one caller can see: one account in one environment. Sandbox and production never share a scope.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scope {
    /// Account id.
    pub account_id: String,
    /// Environment of the credential.
    pub environment: Environment,
}

impl Scope {
    /// The scope of an account in an environment.
    pub fn new(account_id: impl Into<String>, environment: Environment) -> Scope {
        Scope {
            account_id: account_id.into(),
            environment,
        }
    }

    fn prefix(&self) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.account_id.len() + 13);
        key.extend_from_slice(self.account_id.as_bytes());
        key.push(0);
        key.extend_from_slice(self.environment.as_str().as_bytes());
        key.push(0);
        key
    }
}

/// Position in a listing: the last request of the previous page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor {
    /// Its creation time.
    pub created_at: DateTime<Utc>,
    /// Its id.
    pub request_id: RequestId,
}

impl Store {
    /// Reads a request by id.
    pub fn request(&self, id: &RequestId) -> Result<Option<RequestRecord>, StorageError> {
        // A copy of the shared decoded record: the actors reading here change what they read, and a request
        // actor and its step often read the same bytes in turn.
        Ok(self.shared_request(id)?.map(Arc::unwrap_or_clone))
    }

    /// Reads a request by id without copying it: the decoded record is shared while the stored bytes stay
    /// the same.
    pub fn shared_request(
        &self,
        id: &RequestId,
    ) -> Result<Option<Arc<RequestRecord>>, StorageError> {
        self.group
            .requests
            .get(id.as_str())?
            .map(|bytes| self.decoded_requests.get(id.as_bytes(), bytes))
            .transpose()
    }

    /// The request that claimed `internal_id` in `scope`.
    pub fn request_by_internal_id(
        &self,
        scope: &Scope,
        internal_id: &str,
    ) -> Result<Option<RequestRecord>, StorageError> {
        match self
            .group
            .idempotency
            .get(idempotency_key(scope, internal_id))?
        {
            Some(id) => self.request(&RequestId::from(String::from_utf8_lossy(&id).into_owned())),
            None => Ok(None),
        }
    }

    /// Requests booked per day in `scope`, for days in `from..=to`.
    pub fn bookings(
        &self,
        scope: &Scope,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<BTreeMap<NaiveDate, u32>, StorageError> {
        let prefix = scope.prefix();
        let start = booking_key(scope, from);
        let end = booking_key(scope, to);
        let mut booked = BTreeMap::new();
        for entry in self.group.bookings.range(start..=end) {
            let (key, value) = entry?;
            let day = std::str::from_utf8(&key[prefix.len()..])
                .ok()
                .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
                .ok_or_else(|| corrupt("booking key"))?;
            booked.insert(day, read_count(&value)?);
        }
        Ok(booked)
    }

    /// Inserts new requests with their indexes, idempotency keys and bookings, grouped with every write
    /// waiting on the same flush (one transaction and one fsync for all of them). Whether an internal id
    /// replays an earlier request is decided before booking (intake); this write is the last line of
    /// defence against a concurrent create that claimed the same key in between: then nothing of it is
    /// written and the outcome is [`StorageError::InternalIdClaimed`].
    ///
    /// The write is queued at once, not when the answer is first awaited, and happens even if the answer is
    /// never awaited; the answer comes once the flush after its group is done. An `Ok` outcome means the
    /// requests are stored, even when the flush then failed.
    pub fn commit_requests(
        &self,
        records: Arc<Vec<RequestRecord>>,
    ) -> impl Future<Output = Committed<()>> + 'static {
        let encoded: Vec<Vec<u8>> = records.iter().map(encode).collect();
        let (job, done) = Queued::job(move |txn: &Txn| write_new_requests(txn, &records, &encoded));
        self.submit(job, Lane::Client);
        async move {
            done.await.unwrap_or(Committed {
                outcome: Err(StorageError::Closed),
                durable: Err(StorageError::Closed),
            })
        }
    }

    /// Requests of `scope` created in `[from, to)`, newest first, after `cursor`, at most `limit`.
    pub fn list_requests(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        let prefix = scope.prefix();
        self.page(
            &self.group.request_index,
            &prefix,
            Some((from, to)),
            cursor,
            limit,
        )
    }

    /// Every request of one batch in `scope`, newest first, after `cursor`, at most `limit`.
    pub fn list_batch(
        &self,
        scope: &Scope,
        batch_id: &RequestBatchId,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        let mut prefix = scope.prefix();
        prefix.extend_from_slice(batch_id.as_bytes());
        prefix.push(0);
        self.page(&self.group.batch_index, &prefix, None, cursor, limit)
    }

    /// Keyset pagination over a `prefix + created + id` index: the cost of a page does not depend on how
    /// deep it is.
    fn page(
        &self,
        index: &sled::Tree,
        prefix: &[u8],
        window: Option<(DateTime<Utc>, DateTime<Utc>)>,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        let mut start = prefix.to_vec();
        let mut end = prefix.to_vec();
        match window {
            Some((from, to)) => {
                start.extend_from_slice(&micros(from).to_be_bytes());
                end.extend_from_slice(&micros(to).to_be_bytes());
            }
            None => end.extend_from_slice(&u64::MAX.to_be_bytes()),
        }
        if let Some(cursor) = cursor {
            let after = created_key(prefix, cursor.created_at, &cursor.request_id);
            if after < end {
                end = after;
            }
        }
        if start >= end {
            return Ok(Vec::new());
        }
        let mut page = Vec::with_capacity(limit.min(1024));
        for entry in index.range(start..end).rev().take(limit) {
            let (key, _) = entry?;
            let id = &key[prefix.len() + 8..];
            let record = self
                .group
                .requests
                .get(id)?
                .ok_or_else(|| corrupt("index entry without request"))?;
            page.push(decode(&record)?);
        }
        Ok(page)
    }
}

/// The creation write: every check (idempotency keys, booking counts) before the first write, so a declined
/// create leaves nothing in a group it shares.
fn write_new_requests(txn: &Txn, records: &[RequestRecord], encoded: &[Vec<u8>]) -> Verdict<()> {
    let mut claimed = HashSet::new();
    let mut bookings: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    for record in records {
        let scope = Scope::new(record.account_id.clone(), record.environment);
        if let Some(internal_id) = &record.internal_id {
            let key = idempotency_key(&scope, internal_id);
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
    for (record, value) in records.iter().zip(encoded) {
        let scope = Scope::new(record.account_id.clone(), record.environment);
        let prefix = scope.prefix();
        if let Some(internal_id) = &record.internal_id {
            txn.idempotency
                .insert(idempotency_key(&scope, internal_id), record.id.as_bytes())?;
        }
        txn.requests
            .insert(record.id.as_bytes(), value.as_slice())?;
        txn.request_index.insert(
            created_key(&prefix, record.created_at, &record.id),
            &[] as &[u8],
        )?;
        let mut batch_prefix = prefix;
        batch_prefix.extend_from_slice(record.batch_id.as_bytes());
        batch_prefix.push(0);
        txn.batch_index.insert(
            created_key(&batch_prefix, record.created_at, &record.id),
            &[] as &[u8],
        )?;
        *bookings
            .get_mut(&booking_key(&scope, record.due_date))
            .expect("every booking key was read above") += 1;
        txn.due
            .insert(due_key(record.due_at, &record.id), &[] as &[u8])?;
    }
    for (key, count) in bookings {
        txn.bookings.insert(key, &count.to_be_bytes())?;
    }
    Ok(Ok(()))
}

fn micros(instant: DateTime<Utc>) -> u64 {
    // Creation times are after 1970; clamping keeps a pathological query window from wrapping around.
    instant.timestamp_micros().max(0) as u64
}

fn created_key(prefix: &[u8], created_at: DateTime<Utc>, id: &RequestId) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + 8 + id.as_bytes().len());
    key.extend_from_slice(prefix);
    key.extend_from_slice(&micros(created_at).to_be_bytes());
    key.extend_from_slice(id.as_bytes());
    key
}

fn idempotency_key(scope: &Scope, internal_id: &str) -> Vec<u8> {
    let mut key = scope.prefix();
    key.extend_from_slice(internal_id.as_bytes());
    key
}

fn booking_key(scope: &Scope, day: NaiveDate) -> Vec<u8> {
    let mut key = scope.prefix();
    key.extend_from_slice(day.format("%Y-%m-%d").to_string().as_bytes());
    key
}

/// `due_at (u64 micros BE) request id`: a scan up to now finds exactly what has fallen due.
pub(crate) fn due_key(due_at: DateTime<Utc>, id: &RequestId) -> Vec<u8> {
    let mut key = micros(due_at).to_be_bytes().to_vec();
    key.extend_from_slice(id.as_bytes());
    key
}

fn read_count(bytes: &[u8]) -> Result<u32, StorageError> {
    let array: [u8; 4] = bytes.try_into().map_err(|_| corrupt("booking count"))?;
    Ok(u32::from_be_bytes(array))
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "request index",
        reason: what.to_owned(),
    }
}

#[cfg(test)]
mod tests;
