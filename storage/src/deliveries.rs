//! The webhook outbox: deliveries waiting for a round, and the log of every attempt.
//!
//! A delivery is enqueued by the same transaction that makes its request terminal
//! ([`Store::commit_update`]), so no terminal request is ever without its webhook and no
//! webhook leaves before its request reads as terminal.

use chrono::{DateTime, Utc};
use std::ops::Bound;

use crate::codec::{decode, encode};
use crate::durability::Lane;
use crate::group::{Queued, Txn, Verdict};
use crate::requests::due_key;
use crate::{
    AttemptRecord, DeliveryRecord, DeliveryStatus, RequestId, RequestRecord, StorageError, Store,
};

impl Store {
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

    /// Deliveries whose next round is due at `now`, oldest first, at most `limit`.
    pub fn due_deliveries(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<DeliveryRecord>, StorageError> {
        self.due_deliveries_except(now, None, limit, |_| false)
    }

    /// Like [`Store::due_deliveries`], passing over the requests for which `skip` holds (rounds already
    /// running) by their queue key alone, without reading their records; and, given `after`, starting
    /// past that position instead of at the oldest entry.
    pub fn due_deliveries_except(
        &self,
        now: DateTime<Utc>,
        after: Option<&QueuePosition>,
        limit: usize,
        skip: impl Fn(&RequestId) -> bool,
    ) -> Result<Vec<DeliveryRecord>, StorageError> {
        let end = queue_key(now, "\u{10FFFF}");
        let start = match after {
            Some(position) => Bound::Excluded(position.0.clone()),
            None => Bound::Unbounded,
        };
        let mut due = Vec::new();
        for entry in self
            .group
            .delivery_queue
            .range((start, Bound::Excluded(end)))
        {
            if due.len() == limit {
                break;
            }
            let (key, _) = entry?;
            let id = &key[8..];
            if skip(&RequestId::from(String::from_utf8_lossy(id).into_owned())) {
                continue;
            }
            if let Some(bytes) = self.group.deliveries.get(id)? {
                due.push(decode(&bytes)?);
            }
        }
        Ok(due)
    }

    /// The delivery of a request.
    pub fn delivery(&self, request_id: &RequestId) -> Result<Option<DeliveryRecord>, StorageError> {
        self.group
            .deliveries
            .get(request_id.as_str())?
            .map(|b| decode(&b))
            .transpose()
    }

    /// Replaces a delivery after a round and moves its queue entry (or removes it once settled), grouped
    /// with every write waiting on the same flush; returns once it is durable.
    pub async fn commit_delivery(
        &self,
        previous_next_at: DateTime<Utc>,
        delivery: &DeliveryRecord,
    ) -> Result<(), StorageError> {
        let encoded = encode(delivery);
        let (id, status, next_at) = (
            delivery.request_id.clone(),
            delivery.status,
            delivery.next_at,
        );
        let (job, done) = Queued::job(move |txn: &Txn| {
            txn.deliveries.insert(id.as_bytes(), encoded.as_slice())?;
            txn.delivery_queue
                .remove(queue_key(previous_next_at, id.as_str()))?;
            if status == DeliveryStatus::Pending {
                txn.delivery_queue
                    .insert(queue_key(next_at, id.as_str()), &[] as &[u8])?;
            }
            Ok(Ok(()))
        });
        self.submit(job, Lane::Background);
        done.await.map_err(|_| StorageError::Closed)?.into_result()
    }

    /// Appends an attempt to the delivery log.
    pub fn record_attempt(&self, attempt: &AttemptRecord) -> Result<(), StorageError> {
        let sequence = self.generate_id()?;
        let mut key = attempt.request_id.as_bytes().to_vec();
        key.push(0);
        key.extend_from_slice(&sequence.to_be_bytes());
        self.delivery_attempts.insert(key, encode(attempt))?;
        Ok(())
    }

    /// Every attempt for a request, in order.
    pub fn attempts(&self, request_id: &RequestId) -> Result<Vec<AttemptRecord>, StorageError> {
        let mut prefix = request_id.as_bytes().to_vec();
        prefix.push(0);
        self.delivery_attempts
            .scan_prefix(prefix)
            .values()
            .map(|v| decode(&v?))
            .collect()
    }
}

/// Where a delivery stands in the outbox queue: a scan can resume past it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuePosition(Vec<u8>);

impl QueuePosition {
    /// The position of `delivery`'s queue entry.
    pub fn of(delivery: &DeliveryRecord) -> QueuePosition {
        QueuePosition(queue_key(delivery.next_at, delivery.request_id.as_str()))
    }
}

/// A request's change, its moves between the `due` and `active` indexes, and its first delivery.
pub(crate) fn write_request_update(
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
    change(&mut record);
    txn.requests.insert(id.as_bytes(), encode(&record))?;
    if record.run.is_some() {
        txn.due.remove(due_key(record.due_at, id))?;
    }
    if record.run.is_some() && !record.state.is_terminal() {
        txn.active.insert(id.as_bytes(), &[] as &[u8])?;
    } else {
        txn.active.remove(id.as_bytes())?;
    }
    if let Some(delivery) = delivery {
        if txn.deliveries.get(id.as_bytes())?.is_none() {
            txn.deliveries.insert(id.as_bytes(), encode(delivery))?;
            txn.delivery_queue
                .insert(queue_key(delivery.next_at, id.as_str()), &[] as &[u8])?;
        }
    }
    Ok(Ok(record))
}

fn queue_key(at: DateTime<Utc>, id: &str) -> Vec<u8> {
    let mut key = (at.timestamp_micros().max(0) as u64).to_be_bytes().to_vec();
    key.extend_from_slice(id.as_bytes());
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeliveryStatus;

    #[tokio::test]
    async fn a_delivery_written_before_compression_reads_the_same_and_is_compressed_when_saved() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let at: DateTime<Utc> = "2026-11-23T14:00:00Z".parse().unwrap();
        let old = DeliveryRecord {
            request_id: "r1".into(),
            url: "https://client.example/hook".into(),
            signing_secret: "whsec".into(),
            payload: format!("{{\"summary\":\"{}\"}}", "The claim was paid. ".repeat(50)),
            terminal_at: at,
            next_round: 0,
            next_at: at,
            status: DeliveryStatus::Pending,
            attempts: 0,
        };
        let mut plain = vec![1u8];
        plain.extend_from_slice(&serde_json::to_vec(&old).unwrap());
        store.group.deliveries.insert("r1", plain.clone()).unwrap();
        assert_eq!(store.delivery(&"r1".into()).unwrap().unwrap(), old);
        store.commit_delivery(at, &old).await.unwrap();
        let raw = store.group.deliveries.get("r1").unwrap().unwrap();
        assert_eq!(raw[0], 2);
        assert!(raw.len() < plain.len() / 2, "{} bytes", raw.len());
        assert_eq!(store.delivery(&"r1".into()).unwrap().unwrap(), old);
    }
}
