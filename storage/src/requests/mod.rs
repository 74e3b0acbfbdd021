//! Requests, their indexes, idempotency keys and the capacity ledger.
//!
//! Creation writes one transaction (shared with other writes waiting on the same flush): each batch of the
//! POST whole (`intake`), one listing entry and one due entry per batch, an idempotency key per request that
//! has an internal id, and the day's booking count. So a request never exists without its indexes, its
//! idempotency key or its booking, and an idempotency key is checked and claimed in the same atomic step
//! that inserts the request. Requests created before batches were stored whole have a record and an entry
//! in each index of their own; every read takes both layouts.

mod create;
mod intake;
mod shared;

pub(crate) use shared::SharedBatches;

pub(crate) use intake::{
    chunk_key as intake_chunk_key, chunks as intake_chunks, member_slot, stored_request,
    IntakeRecord, Stored,
};

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use crate::engine::resolve;
use crate::seal::Sealer;
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

    pub(crate) fn prefix(&self) -> Vec<u8> {
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
    /// the same. On PostgreSQL this blocks the thread for the round trip; an async caller awaits
    /// [`Store::fetch_request`] instead.
    pub fn shared_request(
        &self,
        id: &RequestId,
    ) -> Result<Option<Arc<RequestRecord>>, StorageError> {
        resolve(self.fetch_request(id))
    }

    /// [`Store::shared_request`], awaited: the HTTP handlers read this way, so a worker thread serves
    /// other calls while PostgreSQL answers.
    pub async fn fetch_request(
        &self,
        id: &RequestId,
    ) -> Result<Option<Arc<RequestRecord>>, StorageError> {
        if let Some(bytes) = self.group.requests.get_async(id.as_str()).await? {
            return self.decoded_requests.get(id.as_bytes(), bytes).map(Some);
        }
        // Not started yet: only its batch holds it.
        if let Some(member) = self.intake_member(id).await? {
            return Ok(Some(member));
        }
        // Or it started, and its batch was retired, between the two reads: a batch retires only once
        // every member has a record of its own.
        match self.group.requests.get_async(id.as_str()).await? {
            Some(bytes) => self.decoded_requests.get(id.as_bytes(), bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The request that claimed `internal_id` in `scope`. It may be a concurrent create's whose flush is
    /// still running: a caller that answers a client with it awaits [`Store::replays_durable`] first.
    pub fn request_by_internal_id(
        &self,
        scope: &Scope,
        internal_id: &str,
    ) -> Result<Option<RequestRecord>, StorageError> {
        match self
            .group
            .idempotency
            .get(idempotency_key(&self.sealer, scope, internal_id))?
        {
            Some(id) => self.request(&RequestId::from(String::from_utf8_lossy(&id).into_owned())),
            None => Ok(None),
        }
    }

    /// Waits until every request [`Store::request_by_internal_id`] can find now is durable, so a replay
    /// never answers with a request a crash could still undo. Once for all the lookups of a POST: keys
    /// are claimed only by grouped creates, and this waits for the group being written, if any.
    pub async fn replays_durable(&self) -> Result<(), StorageError> {
        self.groups_durable().await
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
        if let Some(id) = shared::shared_member(batch_id) {
            return self.list_lone(scope, batch_id, &id, cursor);
        }
        let Some((count, shared)) = self.intake_count(batch_id)? else {
            // A batch created before batches were stored whole has an index of its own.
            let mut prefix = scope.prefix();
            prefix.extend_from_slice(batch_id.as_bytes());
            prefix.push(0);
            return self.page(&self.group.batch_index, &prefix, None, cursor, limit);
        };
        if shared {
            // Not a batch of any client's: each of its members is a batch of its own.
            return Ok(Vec::new());
        }
        let after = cursor.map(|c| &c.request_id);
        let mut page = Vec::with_capacity(limit.min(count as usize));
        let members = IntakeRecord::listed_after(batch_id, count, after);
        for member in members {
            if page.len() == limit {
                break;
            }
            // A purged member is gone from listings.
            let Some(record) = self.listed(&member)? else {
                continue;
            };
            // Batch ids are not scoped: another account's batch lists as no batch at all.
            if record.account_id != scope.account_id || record.environment != scope.environment {
                return Ok(Vec::new());
            }
            page.push(record);
        }
        Ok(page)
    }

    /// The batch of a lone request, which its id names: that request, if it is in `scope`, still stored,
    /// and after `cursor`.
    fn list_lone(
        &self,
        scope: &Scope,
        batch_id: &RequestBatchId,
        id: &RequestId,
        cursor: Option<&Cursor>,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        if cursor.is_some_and(|after| after.request_id <= *id) {
            return Ok(Vec::new());
        }
        Ok(self
            .listed(id)?
            .filter(|record| {
                record.batch_id == *batch_id
                    && record.account_id == scope.account_id
                    && record.environment == scope.environment
            })
            .into_iter()
            .collect())
    }

    /// Keyset pagination over a `prefix + created + id` index: the cost of a page does not depend on how
    /// deep it is.
    fn page(
        &self,
        index: &crate::engine::Tree,
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
            let after = created_key(prefix, cursor.created_at, cursor.request_id.as_bytes());
            if after < end {
                end = after;
            }
        }
        if start >= end {
            return Ok(Vec::new());
        }
        let mut page = Vec::with_capacity(limit.min(1024));
        for entry in index.range(start..end).rev() {
            if page.len() == limit {
                break;
            }
            let (key, value) = entry?;
            let (instant, id) = key[prefix.len()..].split_at(8);
            let id = String::from_utf8_lossy(id).into_owned();
            if value.is_empty() {
                // A request created before batches were stored whole: an entry of its own.
                page.extend(self.listed(&RequestId::from(id))?);
                continue;
            }
            // A cursor at the batch's creation instant may fall inside it.
            let resume_after = cursor
                .filter(|c| instant == micros(c.created_at).to_be_bytes())
                .map(|c| &c.request_id);
            let batch = RequestBatchId::from(id);
            let members = IntakeRecord::listed_after(&batch, read_count(&value)?, resume_after);
            for member in members {
                if page.len() == limit {
                    break;
                }
                page.extend(self.listed(&member)?);
            }
        }
        Ok(page)
    }

    /// A request an index lists, by its id; `None` for a member of a batch purged since.
    fn listed(&self, id: &RequestId) -> Result<Option<RequestRecord>, StorageError> {
        Ok(self.shared_request(id)?.map(Arc::unwrap_or_clone))
    }
}

fn micros(instant: DateTime<Utc>) -> u64 {
    // Creation times are after 1970; clamping keeps a pathological query window from wrapping around.
    instant.timestamp_micros().max(0) as u64
}

/// `prefix + created (u64 micros BE) + id`: a request's listing entry, or a batch's.
pub(crate) fn created_key(prefix: &[u8], created_at: DateTime<Utc>, id: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + 8 + id.len());
    key.extend_from_slice(prefix);
    key.extend_from_slice(&micros(created_at).to_be_bytes());
    key.extend_from_slice(id);
    key
}

/// `scope, keyed hash of the internal id`: clients put claim and record numbers in internal ids, so the
/// text never becomes a key of the store.
pub(crate) fn idempotency_key(sealer: &Sealer, scope: &Scope, internal_id: &str) -> Vec<u8> {
    let mut key = scope.prefix();
    key.extend_from_slice(&sealer.index_hash(internal_id.as_bytes()));
    key
}

fn booking_key(scope: &Scope, day: NaiveDate) -> Vec<u8> {
    let mut key = scope.prefix();
    key.extend_from_slice(day.format("%Y-%m-%d").to_string().as_bytes());
    key
}

/// `due_at (u64 micros BE) id` (a request's, or a batch's): a scan up to now finds exactly what has fallen
/// due.
pub(crate) fn due_key(due_at: DateTime<Utc>, id: &[u8]) -> Vec<u8> {
    let mut key = micros(due_at).to_be_bytes().to_vec();
    key.extend_from_slice(id);
    key
}

pub(crate) fn read_count(bytes: &[u8]) -> Result<u32, StorageError> {
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
mod shared_tests;
#[cfg(test)]
mod tests;

/// Records for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::{new_batch, scope_of};
}
