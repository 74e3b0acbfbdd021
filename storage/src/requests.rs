//! Requests, their indexes, idempotency keys and the capacity ledger.
//!
//! Creation writes one transaction over six trees, so a request never exists without its indexes, its
//! idempotency key or its booking, and an idempotency key is checked and claimed in the same atomic step
//! that inserts the request.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use sled::transaction::ConflictableTransactionError;
use sled::Transactional;

use crate::codec::{decode, encode};
use crate::{Environment, RequestRecord, StorageError, Store};

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
    pub request_id: String,
}

impl Store {
    /// Reads a request by id.
    pub fn request(&self, id: &str) -> Result<Option<RequestRecord>, StorageError> {
        self.requests
            .get(id)?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    /// The request that claimed `internal_id` in `scope`.
    pub fn request_by_internal_id(
        &self,
        scope: &Scope,
        internal_id: &str,
    ) -> Result<Option<RequestRecord>, StorageError> {
        match self.idempotency.get(idempotency_key(scope, internal_id))? {
            Some(id) => self.request(&String::from_utf8_lossy(&id)),
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
        for entry in self.bookings.range(start..=end) {
            let (key, value) = entry?;
            let day = std::str::from_utf8(&key[prefix.len()..])
                .ok()
                .and_then(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d").ok())
                .ok_or_else(|| corrupt("booking key"))?;
            booked.insert(day, read_count(&value)?);
        }
        Ok(booked)
    }

    /// Inserts new requests with their indexes, idempotency keys and bookings in one transaction. Whether an
    /// internal id replays an earlier request is decided before booking (intake); this transaction is the
    /// last line of defence against a concurrent create that claimed the same key in between: then nothing
    /// is written and the error is [`StorageError::InternalIdClaimed`].
    /// The write is not yet durable: the caller awaits [`Store::durable`] before acknowledging it, so that
    /// concurrent creations share one flush.
    pub fn insert_requests(&self, records: &[RequestRecord]) -> Result<(), StorageError> {
        let encoded: Vec<Vec<u8>> = records.iter().map(encode).collect();
        let trees = (
            &self.requests,
            &self.request_index,
            &self.batch_index,
            &self.idempotency,
            &self.bookings,
            &self.due,
        );
        trees.transaction(
            |(requests, by_created, by_batch, idempotency, bookings, due)| {
                for (record, value) in records.iter().zip(&encoded) {
                    let scope = Scope::new(record.account_id.clone(), record.environment);
                    let prefix = scope.prefix();
                    if let Some(internal_id) = &record.internal_id {
                        let key = idempotency_key(&scope, internal_id);
                        if idempotency.insert(key, record.id.as_bytes())?.is_some() {
                            return Err(ConflictableTransactionError::Abort(
                                StorageError::InternalIdClaimed(internal_id.clone()),
                            ));
                        }
                    }
                    requests.insert(record.id.as_bytes(), value.as_slice())?;
                    by_created.insert(
                        created_key(&prefix, record.created_at, &record.id),
                        &[] as &[u8],
                    )?;
                    let mut batch_prefix = prefix;
                    batch_prefix.extend_from_slice(record.batch_id.as_bytes());
                    batch_prefix.push(0);
                    by_batch.insert(
                        created_key(&batch_prefix, record.created_at, &record.id),
                        &[] as &[u8],
                    )?;
                    let booking = booking_key(&scope, record.due_date);
                    let count = match bookings.get(&booking)? {
                        Some(v) => read_count(&v).map_err(ConflictableTransactionError::Abort)?,
                        None => 0,
                    };
                    bookings.insert(booking, &(count + 1).to_be_bytes())?;
                    due.insert(due_key(record.due_at, &record.id), &[] as &[u8])?;
                }
                Ok(())
            },
        )?;
        Ok(())
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
            &self.request_index,
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
        batch_id: &str,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        let mut prefix = scope.prefix();
        prefix.extend_from_slice(batch_id.as_bytes());
        prefix.push(0);
        self.page(&self.batch_index, &prefix, None, cursor, limit)
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
                .requests
                .get(id)?
                .ok_or_else(|| corrupt("index entry without request"))?;
            page.push(decode(&record)?);
        }
        Ok(page)
    }
}

fn micros(instant: DateTime<Utc>) -> u64 {
    // Creation times are after 1970; clamping keeps a pathological query window from wrapping around.
    instant.timestamp_micros().max(0) as u64
}

fn created_key(prefix: &[u8], created_at: DateTime<Utc>, id: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(prefix.len() + 8 + id.len());
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
pub(crate) fn due_key(due_at: DateTime<Utc>, id: &str) -> Vec<u8> {
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
mod tests {
    use super::*;
    use crate::RequestState;

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        (dir, store)
    }

    fn record(
        id: &str,
        environment: Environment,
        internal_id: Option<&str>,
        created_micros: i64,
    ) -> RequestRecord {
        let day: NaiveDate = "2026-11-23".parse().unwrap();
        RequestRecord {
            id: id.into(),
            account_id: "acme".into(),
            environment,
            batch_id: "batch-1".into(),
            schema_id: "vob".into(),
            schema_version: 1,
            request_type: "vob".into(),
            inputs: BTreeMap::new(),
            internal_id: internal_id.map(str::to_owned),
            internal_tag: None,
            webhook_url: None,
            ai_only: false,
            onshore_only: false,
            payer_lookup: None,
            dial: None,
            payer_electronic: false,
            electronic_payer_id: None,
            credential_id: None,
            state: RequestState::Processing,
            created_at: DateTime::from_timestamp_micros(created_micros).unwrap(),
            due_date: day,
            due_at: day.and_hms_opt(5, 0, 0).unwrap().and_utc(),
            completed_at: None,
            run: None,
        }
    }

    fn scope(environment: Environment) -> Scope {
        Scope::new("acme", environment)
    }

    #[test]
    fn a_claimed_internal_id_aborts_the_whole_insert_and_books_nothing() {
        let (_dir, store) = open();
        let first = record("r1", Environment::Production, Some("key"), 1_000);
        let sandbox = record("r3", Environment::Sandbox, Some("key"), 3_000);
        store.insert_requests(&[first.clone(), sandbox]).unwrap();
        let fresh = record("r4", Environment::Production, None, 4_000);
        let replay = record("r2", Environment::Production, Some("key"), 2_000);
        assert!(matches!(
            store.insert_requests(&[fresh, replay]),
            Err(StorageError::InternalIdClaimed(key)) if key == "key"
        ));
        assert!(store.request("r2").unwrap().is_none());
        assert!(store.request("r4").unwrap().is_none(), "all or nothing");
        let day = first.due_date;
        assert_eq!(
            store
                .bookings(&scope(Environment::Production), day, day)
                .unwrap()[&day],
            1
        );
        assert_eq!(
            store
                .bookings(&scope(Environment::Sandbox), day, day)
                .unwrap()[&day],
            1
        );
        assert_eq!(
            store
                .request_by_internal_id(&scope(Environment::Production), "key")
                .unwrap()
                .unwrap()
                .id,
            "r1"
        );
    }

    #[test]
    fn a_request_written_before_compression_reads_the_same() {
        let (_dir, store) = open();
        let mut old = record("old", Environment::Production, Some("key"), 1_000);
        old.inputs.insert("payerName".into(), "Aetna".into());
        let mut bytes = vec![1u8];
        bytes.extend_from_slice(&serde_json::to_vec(&old).unwrap());
        store.requests.insert("old", bytes).unwrap();
        assert_eq!(store.request("old").unwrap().unwrap(), old);
        // Rewritten, it is compressed under the current version.
        store.update_request("old", |_| {}).unwrap();
        let raw = store.requests.get("old").unwrap().unwrap();
        assert_eq!(raw[0], 2);
        assert_eq!(store.request("old").unwrap().unwrap(), old);
    }

    #[test]
    fn listing_is_newest_first_within_the_window_and_pages_by_keyset() {
        let (_dir, store) = open();
        let records: Vec<RequestRecord> = (0..25)
            .map(|i| {
                record(
                    &format!("r{i:02}"),
                    Environment::Production,
                    None,
                    1_000_000 + i * 10,
                )
            })
            .collect();
        store.insert_requests(&records).unwrap();
        let from = DateTime::from_timestamp_micros(0).unwrap();
        let to = DateTime::from_timestamp_micros(2_000_000).unwrap();
        let production = scope(Environment::Production);
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let page = store
                .list_requests(&production, from, to, cursor.as_ref(), 10)
                .unwrap();
            if page.is_empty() {
                break;
            }
            cursor = page.last().map(|r| Cursor {
                created_at: r.created_at,
                request_id: r.id.clone(),
            });
            seen.extend(page.into_iter().map(|r| r.id));
        }
        let expected: Vec<String> = (0..25).rev().map(|i| format!("r{i:02}")).collect();
        assert_eq!(seen, expected);
        // The window's end is exclusive; the start inclusive.
        let narrow_to = DateTime::from_timestamp_micros(1_000_050).unwrap();
        let narrow_from = DateTime::from_timestamp_micros(1_000_010).unwrap();
        let narrow: Vec<String> = store
            .list_requests(&production, narrow_from, narrow_to, None, 100)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(narrow, ["r04", "r03", "r02", "r01"]);
        assert!(store
            .list_requests(&scope(Environment::Sandbox), from, to, None, 100)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn only_requests_whose_day_has_begun_are_due() {
        let (_dir, store) = open();
        let mut today = record("today", Environment::Production, None, 1);
        today.due_at = "2026-11-23T05:00:00Z".parse().unwrap();
        let mut tomorrow = record("tomorrow", Environment::Production, None, 2);
        tomorrow.due_at = "2026-11-24T05:00:00Z".parse().unwrap();
        store.insert_requests(&[tomorrow, today]).unwrap();
        let ids = |now: &str| -> Vec<String> {
            store
                .due_by(now.parse().unwrap())
                .unwrap()
                .into_iter()
                .map(|e| e.request_id)
                .collect()
        };
        assert!(ids("2026-11-23T04:59:59Z").is_empty());
        assert_eq!(ids("2026-11-23T05:00:00Z"), ["today"]);
        assert_eq!(ids("2026-11-24T06:00:00Z"), ["today", "tomorrow"]);
    }

    #[test]
    fn a_batch_lists_regardless_of_dates() {
        let (_dir, store) = open();
        let mut other = record("other", Environment::Production, None, 5);
        other.batch_id = "batch-2".into();
        store
            .insert_requests(&[
                record("a", Environment::Production, None, 1),
                record("b", Environment::Production, None, 2),
                other,
            ])
            .unwrap();
        let ids: Vec<String> = store
            .list_batch(&scope(Environment::Production), "batch-1", None, 100)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, ["b", "a"]);
    }
}
