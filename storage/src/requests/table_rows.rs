//! The rows a request has in PostgreSQL's `requests` table ([`crate::engine::postgres::requests_table`]),
//! written by the transaction that creates, changes or purges it. sled keeps no such table: its indexes
//! answer what a DBA would ask the table.

use std::collections::HashSet;

use super::intake::IntakeRecord;
use crate::codec::decode;
use crate::engine::postgres::requests_table::RequestRow;
use crate::engine::{Tree, TxTree};
use crate::seal::Sealed;
use crate::{RequestId, RequestRecord, StorageError, Store};

/// `record`'s row, with its own sealed record when it has one.
fn row_of(record: &RequestRecord, sealed: Option<&[u8]>) -> RequestRow {
    let instant =
        |at: chrono::DateTime<chrono::Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    RequestRow {
        request_id: record.id.as_str().to_owned(),
        account_id: record.account_id.clone(),
        environment: record.environment.as_str().to_owned(),
        schema_id: record.schema_id.clone(),
        state: record.state.as_str().to_owned(),
        batch_id: record.batch_id.as_str().to_owned(),
        created_at: instant(record.created_at),
        due_date: record.due_date.format("%Y-%m-%d").to_string(),
        completed_at: record.completed_at.map(instant),
        sealed: sealed.map(<[u8]>::to_vec),
    }
}

/// Writes `record`'s row in the transaction `requests` belongs to (PostgreSQL only).
pub(crate) fn put_row(requests: &TxTree, record: &RequestRecord, sealed: Option<&[u8]>) {
    if let TxTree::Postgres(tree) = requests {
        tree.put_request_row(record.id.as_str(), Some(row_of(record, sealed)));
    }
}

/// Deletes the row of the request `id` in the transaction `requests` belongs to (PostgreSQL only).
pub(crate) fn delete_row(requests: &TxTree, id: &RequestId) {
    if let TxTree::Postgres(tree) = requests {
        tree.put_request_row(id.as_str(), None);
    }
}

/// Rows sent in one statement by [`Store::fill_requests_table`].
const FILL_PAGE: usize = 1_000;

impl Store {
    /// Gives every request of a store from before the `requests` table its row (PostgreSQL only): the
    /// requests with a record of their own, then the members of batches still as created. Answers how many.
    pub(crate) fn fill_requests_table(&self) -> Result<u64, StorageError> {
        let Tree::Postgres(table) = &self.group.requests else {
            return Ok(0);
        };
        let mut rows = Vec::new();
        let mut seen = HashSet::new();
        for entry in self.group.requests.iter() {
            let (key, bytes) = entry?;
            let record: RequestRecord =
                decode(&self.sealer.open(Sealed::Requests, &key, &bytes)?)?;
            seen.insert(record.id.as_str().to_owned());
            rows.push(row_of(&record, Some(&bytes)));
        }
        for entry in self.group.intake.iter() {
            let (key, bytes) = entry?;
            let chunk: IntakeRecord = decode(&self.sealer.open(Sealed::Intake, &key, &bytes)?)?;
            for member in chunk.members.iter().flatten() {
                if seen.insert(member.id.as_str().to_owned()) {
                    rows.push(row_of(member, None));
                }
            }
        }
        for page in rows.chunks(FILL_PAGE) {
            table.upsert_request_rows(page)?;
        }
        Ok(rows.len() as u64)
    }
}
