//! Requests, their indexes, idempotency keys and the capacity ledger.
//!
//! Creation writes one transaction (shared with other writes waiting on the same flush): each batch of the
//! POST whole (`intake`), one listing entry and one due entry per batch, an idempotency key per request that
//! has an internal id, and the day's booking count. So a request never exists without its indexes, its
//! idempotency key or its booking, and an idempotency key is checked and claimed in the same atomic step
//! that inserts the request. The requests converted from layout 3, whose ids name no batch, are stored
//! alone ([`alone`]).

pub(crate) mod alone;
mod create;
mod intake;
mod listing;
mod shared;
pub(crate) mod table_rows;

pub(crate) use shared::SharedBatches;

pub(crate) use intake::{
    chunk_key as intake_chunk_key, chunks as intake_chunks, member_slot, stored_request,
    IntakeRecord, Stored,
};

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};

use crate::seal::Sealer;
use crate::{Environment, RequestId, RequestRecord, StorageError, Store};

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
    pub async fn request(&self, id: &RequestId) -> Result<Option<RequestRecord>, StorageError> {
        // A copy of the shared decoded record: the actors reading here change what they read, and a request
        // actor and its step often read the same bytes in turn.
        Ok(self.fetch_request(id).await?.map(Arc::unwrap_or_clone))
    }

    /// Reads a request by id without copying it: the decoded record is shared while the stored bytes stay
    /// the same.
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
    pub async fn request_by_internal_id(
        &self,
        scope: &Scope,
        internal_id: &str,
    ) -> Result<Option<RequestRecord>, StorageError> {
        let key = idempotency_key(&self.sealer, scope, internal_id);
        match self.group.idempotency.get_async(key).await? {
            Some(id) => {
                self.request(&RequestId::from(String::from_utf8_lossy(&id).into_owned()))
                    .await
            }
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
    pub async fn bookings(
        &self,
        scope: &Scope,
        from: NaiveDate,
        to: NaiveDate,
    ) -> Result<BTreeMap<NaiveDate, u32>, StorageError> {
        let prefix = scope.prefix();
        let start = booking_key(scope, from);
        let end = booking_key(scope, to);
        let mut booked = BTreeMap::new();
        for (key, value) in self
            .group
            .bookings
            .read_range(start..=end, false, usize::MAX)
            .await?
        {
            let day = std::str::from_utf8(&key[prefix.len()..])
                .ok()
                .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
                .ok_or_else(|| corrupt("booking key"))?;
            booked.insert(day, read_count(&value)?);
        }
        Ok(booked)
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
mod alone_tests;
#[cfg(test)]
mod shared_tests;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;

/// Records for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::{new_batch, scope_of};
}
