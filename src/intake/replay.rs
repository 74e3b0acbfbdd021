//! The one place that decides whether a create entry replays an `internalId` (4.6): a key already claimed
//! in the account and environment returns the earlier request, and a key repeated within one POST returns
//! the entry that first used it. The decision comes before anything else of the entry is looked at, so a
//! replay is answered silently whatever its body says. The store's insert transaction re-checks the key as
//! the last line of defence; when a concurrent POST wins that race, the create runs this decision again.
//!
//! A key is nearly always new, so a POST's first decision is optimistic: it looks the key up in the store
//! only for an entry that fails validation (a replay is answered whatever its body says). A stored key
//! then declines the insert, and the decision is made again with every key looked up.

use std::collections::HashMap;

use serde_json::Value;
use switchboard_storage::{RequestRecord, Scope, Store};

use crate::domain::MAX_LABEL_BYTES;
use crate::errors::ApiError;

/// What an entry replays.
#[derive(Debug)]
pub enum Replay {
    /// A request stored by an earlier POST.
    Stored(Box<RequestRecord>),
    /// The new request of an earlier entry of this POST, by its index among the POST's new requests.
    Entry(usize),
}

/// The replay decision for the entries of one POST, in order.
pub struct Replays<'a> {
    store: &'a Store,
    scope: Scope,
    first_use: HashMap<String, usize>,
    /// Whether keys are looked up in the store only for entries that fail validation.
    optimistic: bool,
}

impl<'a> Replays<'a> {
    /// Decisions for one POST in `scope`; `optimistic` for its first.
    pub fn new(store: &'a Store, scope: Scope, optimistic: bool) -> Replays<'a> {
        Replays {
            store,
            scope,
            first_use: HashMap::new(),
            optimistic,
        }
    }

    /// The entry's idempotency key: a non-blank string `internalId` within the size limit (any other
    /// shape is the validation's business, and replays nothing: no such key is ever stored).
    pub fn key(item: &Value) -> Option<&str> {
        item.get("internalId")
            .and_then(Value::as_str)
            .filter(|key| !key.trim().is_empty() && key.len() <= MAX_LABEL_BYTES)
    }

    /// What the entry with `key` replays, if anything; when optimistic, only an earlier entry of the POST.
    pub async fn check(&self, key: Option<&str>) -> Result<Option<Replay>, ApiError> {
        let Some(key) = key else { return Ok(None) };
        if let Some(&index) = self.first_use.get(key) {
            return Ok(Some(Replay::Entry(index)));
        }
        if self.optimistic {
            return Ok(None);
        }
        self.stored(key).await
    }

    /// What an entry with `key` that failed validation replays: a replay is answered whatever its body
    /// says, so when optimistic the store is asked now.
    pub async fn check_rejected(&self, key: Option<&str>) -> Result<Option<Replay>, ApiError> {
        match key {
            Some(key) if self.optimistic => self.stored(key).await,
            _ => Ok(None),
        }
    }

    /// The stored request `key` replays. Not yet an answer: see [`Store::replays_durable`].
    async fn stored(&self, key: &str) -> Result<Option<Replay>, ApiError> {
        Ok(self
            .store
            .request_by_internal_id(&self.scope, key)
            .await?
            .map(|record| Replay::Stored(Box::new(record))))
    }

    /// The entry with `key` becomes new request number `index` of the POST.
    pub fn claim(&mut self, key: Option<&str>, index: usize) {
        if let Some(key) = key {
            self.first_use.insert(key.to_owned(), index);
        }
    }
}
