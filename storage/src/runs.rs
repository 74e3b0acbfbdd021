//! Orchestration writes: starting a request's run, recording each transition, and finishing it.
//!
//! A request moves from the `due` index (booked, waiting for its day) to the `active` index (running) in
//! the same transaction that starts its run, and leaves `active` in the transaction that makes it terminal.
//! Start-up recovery therefore reads two small indexes instead of scanning every request.

use crate::{RequestRecord, StorageError, Store};
use chrono::NaiveDate;

/// A booked request whose day has come or passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueEntry {
    /// The business day it was booked on.
    pub day: NaiveDate,
    /// The request.
    pub request_id: String,
}

impl Store {
    /// Booked requests whose business day is `through` or earlier, oldest day first.
    pub fn due_through(&self, through: NaiveDate) -> Result<Vec<DueEntry>, StorageError> {
        let mut end = through.format("%Y-%m-%d").to_string().into_bytes();
        end.push(1); // just past every `day \0 id` key of that day
        let mut entries = Vec::new();
        for entry in self.due.range(..end) {
            let (key, _) = entry?;
            let text = std::str::from_utf8(&key).map_err(|_| corrupt("due key"))?;
            let (day, id) = text.split_once('\0').ok_or_else(|| corrupt("due key"))?;
            entries.push(DueEntry {
                day: NaiveDate::parse_from_str(day, "%Y-%m-%d").map_err(|_| corrupt("due day"))?,
                request_id: id.to_owned(),
            });
        }
        Ok(entries)
    }

    /// Ids of requests whose run has started and not finished.
    pub fn active_request_ids(&self) -> Result<Vec<String>, StorageError> {
        self.active
            .iter()
            .keys()
            .map(|k| Ok(String::from_utf8_lossy(&k?).into_owned()))
            .collect()
    }

    /// Applies `change` to a request atomically and returns the new record. The change also decides the
    /// request's place in the indexes: a started run leaves `due` and joins `active`; a terminal state
    /// leaves `active`. Not durable until [`Store::durable`].
    pub fn update_request(
        &self,
        id: &str,
        change: impl Fn(&mut RequestRecord),
    ) -> Result<RequestRecord, StorageError> {
        self.update_request_with_delivery(id, change, None)
    }
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "run index",
        reason: what.to_owned(),
    }
}
