//! Orchestration writes: starting a request's run, recording each transition, and finishing it.
//!
//! A request moves from the `due` index (booked, waiting for its day) to the `active` index (running) in
//! the same transaction that starts its run, and leaves `active` in the transaction that makes it terminal.
//! Start-up recovery therefore reads two small indexes instead of scanning every request.

use crate::deliveries::write_request_update;
use crate::{RequestId, RequestRecord, StorageError, Store};
use chrono::{DateTime, Utc};

/// A booked request whose day has come.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueEntry {
    /// The instant its business day began.
    pub due_at: DateTime<Utc>,
    /// The request.
    pub request_id: RequestId,
}

impl Store {
    /// Booked requests not yet started whose day began at or before `now`, earliest first. The index is
    /// keyed by that instant, so requests booked for later days are never read.
    pub fn due_by(&self, now: DateTime<Utc>) -> Result<Vec<DueEntry>, StorageError> {
        let end = ((now.timestamp_micros().max(0) as u64) + 1).to_be_bytes();
        let mut entries = Vec::new();
        for entry in self.group.due.range(..end.to_vec()) {
            let (key, _) = entry?;
            let (instant, id) = key.split_at(8);
            let micros = u64::from_be_bytes(instant.try_into().map_err(|_| corrupt("due key"))?);
            entries.push(DueEntry {
                due_at: DateTime::from_timestamp_micros(micros as i64)
                    .ok_or_else(|| corrupt("due instant"))?,
                request_id: RequestId::from(String::from_utf8_lossy(id).into_owned()),
            });
        }
        Ok(entries)
    }

    /// Ids of requests whose run has started and not finished.
    pub fn active_request_ids(&self) -> Result<Vec<RequestId>, StorageError> {
        self.group
            .active
            .iter()
            .keys()
            .map(|k| Ok(RequestId::from(String::from_utf8_lossy(&k?).into_owned())))
            .collect()
    }

    /// Applies `change` to a request atomically and returns the new record. The change also decides the
    /// request's place in the indexes: a started run leaves `due` and joins `active`; a terminal state
    /// leaves `active`. Not durable until [`Store::durable`].
    pub fn update_request(
        &self,
        id: &RequestId,
        change: impl Fn(&mut RequestRecord),
    ) -> Result<RequestRecord, StorageError> {
        self.group
            .apply_one(|txn| write_request_update(txn, id, &change, None))
    }
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "run index",
        reason: what.to_owned(),
    }
}
