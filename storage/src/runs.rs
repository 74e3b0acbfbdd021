//! Orchestration writes: starting a request's run, recording each transition, and finishing it.
//!
//! A request moves from the `due` index (booked, waiting for its day) to the `active` index (running) in
//! the same transaction that starts its run, and leaves `active` in the transaction that makes it terminal.
//! Start-up recovery therefore reads two small indexes instead of scanning every request.

use crate::codec::{decode, encode};
use crate::deliveries::enqueue_first_round;
use crate::durability::Lane;
use crate::group::{Queued, Txn, Verdict};
use crate::requests::due_key;
use crate::{DeliveryRecord, RequestId, RequestRecord, StorageError, Store};
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

    /// Applies `change` to a request like [`Store::update_request`] and in the same transaction enqueues
    /// `delivery` (if any) for its first round, grouped with every write waiting on the same flush (one
    /// transaction and one fsync for all of them); returns the record as written once it is durable.
    /// Deliveries are enqueued only here, so [`Store::groups_durable`] covers every one that can be read.
    pub async fn commit_update(
        &self,
        id: &RequestId,
        change: impl Fn(&mut RequestRecord) + Send + 'static,
        delivery: Option<DeliveryRecord>,
    ) -> Result<RequestRecord, StorageError> {
        let enqueues = delivery.is_some();
        let lane = if enqueues {
            Lane::Client
        } else {
            Lane::Background
        };
        let job_id = id.clone();
        let (job, done) = Queued::job(move |txn: &Txn| {
            write_request_update(txn, &job_id, &change, delivery.as_ref())
        });
        self.submit(job, lane);
        let updated = done
            .await
            .map_err(|_| StorageError::Closed)?
            .into_result()?;
        if enqueues {
            self.signal_outbox();
        }
        Ok(updated)
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

/// A request's change, its moves between the `due` and `active` indexes, and its first delivery.
fn write_request_update(
    txn: &Txn,
    id: &RequestId,
    change: &dyn Fn(&mut RequestRecord),
    delivery: Option<&DeliveryRecord>,
) -> Verdict<RequestRecord> {
    let Some(bytes) = txn.requests.get(id.as_bytes())? else {
        return Ok(Err(StorageError::RequestMissing(id.clone())));
    };
    let mut record: RequestRecord = match decode(&bytes) {
        Ok(record) => record,
        Err(e) => return Ok(Err(e)),
    };
    // Only this write moves a request between the indexes, by the same rule every time, so the stored
    // record tells where it stands: most steps of a run move it nowhere and touch no index.
    let (was_started, was_active) = (started(&record), active(&record));
    change(&mut record);
    txn.requests.insert(id.as_bytes(), encode(&record))?;
    if started(&record) && !was_started {
        txn.due.remove(due_key(record.due_at, id))?;
    }
    match (was_active, active(&record)) {
        (false, true) => txn.active.insert(id.as_bytes(), &[] as &[u8]).map(drop)?,
        (true, false) => txn.active.remove(id.as_bytes()).map(drop)?,
        _ => {}
    }
    if let Some(delivery) = delivery {
        enqueue_first_round(txn, id, delivery)?;
    }
    Ok(Ok(record))
}

/// Out of the `due` index: its run has started.
fn started(record: &RequestRecord) -> bool {
    record.run.is_some()
}

/// In the `active` index: running and not finished.
fn active(record: &RequestRecord) -> bool {
    record.run.is_some() && !record.state.is_terminal()
}

fn corrupt(what: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "run index",
        reason: what.to_owned(),
    }
}
