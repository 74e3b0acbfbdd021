//! The webhook outbox: deliveries waiting for a round, and the log of every attempt.
//!
//! A delivery is enqueued by the same transaction that makes its request terminal
//! ([`Store::commit_final`]), so no terminal request is ever without its webhook and no
//! webhook leaves before its request reads as terminal.

use chrono::{DateTime, Utc};
use futures::future::try_join_all;
use sled::transaction::UnabortableTransactionError;
use std::ops::Bound;

use std::sync::Arc;

use crate::audit::NewEvent;
use crate::codec::encode;
use crate::durability::Lane;
use crate::engine::operations::{AttemptEntry, WebhookAttempts};
use crate::group::{Queued, Txn};
use crate::{AttemptRecord, DeliveryRecord, RequestId, StorageError, Store};

impl Store {
    /// Deliveries whose next round is due at `now`, oldest first, at most `limit`, passing over the
    /// requests for which `skip` holds (rounds already running) by their queue key alone, without reading
    /// their records; and, given `after`, starting past that position instead of at the oldest entry.
    ///
    /// A delivery is handed out only once durable. The page ends before the first round whose write has
    /// not settled yet, so a caller resuming past the page's last entry still finds it; its settling
    /// signals [`Store::outbox_enqueued`]. While the last flush has failed the page is refused, since what
    /// it would read may not be on disk.
    pub async fn due_deliveries_except(
        &self,
        now: DateTime<Utc>,
        after: Option<&QueuePosition>,
        limit: usize,
        skip: impl Fn(&RequestId) -> bool,
    ) -> Result<Vec<DeliveryRecord>, StorageError> {
        let end = queue_key(now, "\u{10FFFF}");
        let mut start = match after {
            Some(position) => Bound::Excluded(position.0.clone()),
            None => Bound::Unbounded,
        };
        // In this order: the flusher records a failed flush before it ends the holds of its group, so a
        // round whose hold has ended by now is either durable or seen failing here.
        let held = self.outbox.held();
        if self.flush_failing() {
            return Err(StorageError::Flush(
                "the last flush failed; no webhook is sent until one succeeds".into(),
            ));
        }
        let mut due = Vec::new();
        let mut ended = false;
        // The queue's ids a page at a time, then their deliveries read together: on PostgreSQL one wait
        // on the network for the page, not one per delivery. A queue entry whose delivery has gone (a
        // purge) or that `skip` passes over leaves room that the next page fills.
        while due.len() < limit && !ended {
            let asked = limit - due.len();
            let range = (start.clone(), Bound::Excluded(end.clone()));
            let page = self
                .group
                .delivery_queue
                .read_range(range, false, asked)
                .await?;
            ended = page.len() < asked;
            let mut wanted = Vec::new();
            for (key, _) in page {
                let request_id = RequestId::from(String::from_utf8_lossy(&key[8..]).into_owned());
                start = Bound::Excluded(key.to_vec());
                if held(&request_id) {
                    ended = true;
                    break;
                }
                if !skip(&request_id) {
                    wanted.push(request_id);
                }
            }
            let read = try_join_all(
                wanted
                    .iter()
                    .map(|id| self.group.deliveries.get_async(id.as_str())),
            );
            for (id, bytes) in wanted.iter().zip(read.await?) {
                if let Some(bytes) = bytes {
                    due.push(self.deliveries.read(id.as_bytes(), &bytes)?);
                }
            }
        }
        Ok(due)
    }

    /// The delivery of a request.
    pub async fn delivery(
        &self,
        request_id: &RequestId,
    ) -> Result<Option<DeliveryRecord>, StorageError> {
        self.group
            .deliveries
            .get_async(request_id.as_str())
            .await?
            .map(|b| self.deliveries.read(request_id.as_bytes(), &b))
            .transpose()
    }

    /// Replaces a delivery after a round and moves its queue entry (or removes it once settled), grouped
    /// with every write waiting on the same flush; returns once it is durable. `previous_queued_at` is
    /// where the delivery stood in the queue when its round began ([`DeliveryRecord::queued_at`]).
    pub async fn commit_delivery(
        &self,
        previous_queued_at: DateTime<Utc>,
        delivery: &DeliveryRecord,
    ) -> Result<(), StorageError> {
        let generation = self.sealer.generation();
        let mut encoded = self
            .deliveries
            .store(delivery.request_id.as_bytes(), encode(delivery));
        let (sealer, storing, plain) = (
            Arc::clone(&self.sealer),
            self.deliveries.clone(),
            encode(delivery),
        );
        let (id, queued, queued_at) = (
            delivery.request_id.clone(),
            delivery.queued(),
            delivery.queued_at(),
        );
        let (job, done) = Queued::job(move |txn: &Txn| {
            // A request purged while its round ran: its delivery is not written back.
            if txn.deliveries.get(id.as_bytes())?.is_none() {
                return Ok(Ok(()));
            }
            // Sealed before a purge replaced keys: sealed again now.
            if sealer.generation() != generation {
                encoded = storing.store(id.as_bytes(), plain.clone());
            }
            txn.deliveries.put(id.as_bytes(), encoded.as_slice())?;
            txn.delivery_queue
                .remove(queue_key(previous_queued_at, id.as_str()))?;
            if queued {
                txn.delivery_queue
                    .put(queue_key(queued_at, id.as_str()), &[] as &[u8])?;
            }
            Ok(Ok(()))
        });
        self.submit(job, Lane::Background);
        done.await.map_err(|_| StorageError::Closed)?.into_result()
    }

    /// Asks for a request's webhook to be sent again at `at`, outside its rounds: the delivery is marked
    /// (`redelivery_at`, one more `redeliveries`) and queued at `at`, with `event` audited in the same
    /// transaction; returns once that is durable, so an acknowledged redelivery survives a crash. A
    /// redelivery already waiting is kept as it is (one send answers both calls). `None`: the request has
    /// no delivery (not terminal, no webhook URL, or purged).
    pub async fn request_redelivery(
        &self,
        request_id: &RequestId,
        at: DateTime<Utc>,
        event: NewEvent,
    ) -> Result<Option<DeliveryRecord>, StorageError> {
        let id = request_id.as_bytes();
        let marked = self.group.apply_one(|txn| {
            let Some(bytes) = txn.deliveries.get(id)? else {
                return Ok(Ok(None));
            };
            let mut delivery: DeliveryRecord = match self.deliveries.read(id, &bytes) {
                Ok(delivery) => delivery,
                Err(e) => return Ok(Err(e)),
            };
            if delivery.redelivery_at.is_none() {
                if delivery.queued() {
                    txn.delivery_queue
                        .remove(queue_key(delivery.queued_at(), request_id.as_str()))?;
                }
                delivery.redelivery_at = Some(at);
                delivery.redeliveries += 1;
                txn.delivery_queue
                    .put(queue_key(at, request_id.as_str()), &[] as &[u8])?;
                let stored = self.deliveries.store(id, encode(&delivery));
                txn.deliveries.put(id, stored)?;
            }
            txn.record(event.clone());
            Ok(Ok(Some(delivery)))
        })?;
        self.durable().await?;
        Ok(marked)
    }

    /// Appends an attempt, its outcome known, to the delivery log.
    pub async fn record_attempt(&self, attempt: &AttemptRecord) -> Result<(), StorageError> {
        self.engine().record_attempt(attempt).await
    }

    /// Appends an attempt about to be sent, `attempt` saying it has no outcome yet, and returns once that
    /// is durable: a receiver that has a webhook finds it in the log even when the process dies before
    /// the answer is recorded ([`Store::finish_attempt`] writes the outcome over it).
    pub async fn begin_attempt(
        &self,
        attempt: &AttemptRecord,
    ) -> Result<AttemptEntry, StorageError> {
        self.engine().begin_attempt(attempt).await
    }

    /// Writes `attempt`, now with its outcome, over the entry [`Store::begin_attempt`] made.
    pub async fn finish_attempt(
        &self,
        entry: &AttemptEntry,
        attempt: &AttemptRecord,
    ) -> Result<(), StorageError> {
        self.engine().finish_attempt(entry, attempt).await
    }

    /// Every attempt for a request, in order.
    pub async fn attempts(
        &self,
        request_id: &RequestId,
    ) -> Result<Vec<AttemptRecord>, StorageError> {
        self.engine().attempts(request_id).await
    }
}

/// Where a delivery stands in the outbox queue: a scan can resume past it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuePosition(Vec<u8>);

impl QueuePosition {
    /// The position of `delivery`'s queue entry.
    pub fn of(delivery: &DeliveryRecord) -> QueuePosition {
        QueuePosition(queue_key(
            delivery.queued_at(),
            delivery.request_id.as_str(),
        ))
    }
}

/// Enqueues a request's delivery for its first round, unless it has one already: in the transaction that
/// makes the request terminal.
/// `stored` is the delivery as stored (sealed), `next_at` when its first round is due.
pub(crate) fn enqueue_first_round(
    txn: &Txn,
    id: &RequestId,
    next_at: DateTime<Utc>,
    stored: &[u8],
) -> Result<(), UnabortableTransactionError> {
    if txn.deliveries.get(id.as_bytes())?.is_none() {
        txn.deliveries.put(id.as_bytes(), stored)?;
        txn.delivery_queue
            .put(queue_key(next_at, id.as_str()), &[] as &[u8])?;
    }
    Ok(())
}

pub(crate) fn queue_key(at: DateTime<Utc>, id: &str) -> Vec<u8> {
    let mut key = (at.timestamp_micros().max(0) as u64).to_be_bytes().to_vec();
    key.extend_from_slice(id.as_bytes());
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::Sealed;
    use crate::DeliveryStatus;

    #[tokio::test]
    async fn a_delivery_written_before_compression_reads_the_same_and_is_compressed_when_saved() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
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
            redelivery_at: None,
            redeliveries: 0,
            traceparent: None,
        };
        let mut plain = vec![1u8];
        plain.extend_from_slice(&serde_json::to_vec(&old).unwrap());
        let sealed = store.sealer.seal(Sealed::Deliveries, b"r1", &plain);
        store.group.deliveries.insert("r1", sealed).unwrap();
        assert_eq!(store.delivery(&"r1".into()).await.unwrap().unwrap(), old);
        store.commit_delivery(at, &old).await.unwrap();
        let raw = store.group.deliveries.get("r1").unwrap().unwrap();
        let raw = store.sealer.open(Sealed::Deliveries, b"r1", &raw).unwrap();
        assert_eq!(raw[0], 2);
        assert!(raw.len() < plain.len() / 2, "{} bytes", raw.len());
        assert_eq!(store.delivery(&"r1".into()).await.unwrap().unwrap(), old);
    }

    #[tokio::test]
    async fn a_redelivery_queues_the_delivery_now_once_and_its_round_puts_the_next_round_back() {
        use crate::audit::{Actor, Target};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        let terminal: DateTime<Utc> = "2026-11-23T14:00:00Z".parse().unwrap();
        let next_round = terminal + chrono::Duration::minutes(15);
        let pending = DeliveryRecord {
            request_id: "r1".into(),
            url: "https://client.example/hook".into(),
            signing_secret: "whsec".into(),
            payload: "{}".into(),
            terminal_at: terminal,
            next_round: 1,
            next_at: next_round,
            status: DeliveryStatus::Pending,
            attempts: 4,
            redelivery_at: None,
            redeliveries: 0,
            traceparent: None,
        };
        let stored = store.deliveries.store(b"r1", encode(&pending));
        store.group.deliveries.insert("r1", stored).unwrap();
        store
            .group
            .delivery_queue
            .insert(queue_key(next_round, "r1"), &[] as &[u8])
            .unwrap();
        let now = terminal + chrono::Duration::minutes(1);
        let event = || NewEvent {
            at: now,
            actor: Actor::operator("admin"),
            action: "webhook.redeliver".into(),
            target: Some(Target::new("request", "r1")),
            outcome: "ok".into(),
            ip: None,
            count: None,
        };
        let queued = |store: &Store| -> Vec<Vec<u8>> {
            store
                .group
                .delivery_queue
                .iter()
                .keys()
                .map(|k| k.unwrap().to_vec())
                .collect()
        };

        let marked = store
            .request_redelivery(&"r1".into(), now, event())
            .await
            .unwrap()
            .expect("a delivery");
        assert_eq!((marked.redelivery_at, marked.redeliveries), (Some(now), 1));
        assert_eq!(queued(&store), vec![queue_key(now, "r1")], "moved to now");
        assert_eq!(
            store
                .due_deliveries_except(now, None, 10, |_| false)
                .await
                .unwrap(),
            vec![marked.clone()]
        );

        // Asked again before it ran: the same redelivery, still one entry.
        let again = store
            .request_redelivery(&"r1".into(), now, event())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(again, marked);
        assert_eq!(queued(&store).len(), 1);

        // Its round failed: the mark goes, the next scheduled round comes back.
        let ran = DeliveryRecord {
            redelivery_at: None,
            attempts: 5,
            ..marked.clone()
        };
        store
            .commit_delivery(marked.queued_at(), &ran)
            .await
            .unwrap();
        assert_eq!(queued(&store), vec![queue_key(next_round, "r1")]);
        assert_eq!(store.delivery(&"r1".into()).await.unwrap().unwrap(), ran);

        assert_eq!(
            store
                .request_redelivery(&"nobody".into(), now, event())
                .await
                .unwrap(),
            None
        );
    }
}
