//! Lone creates share a batch. The single-request POSTs of one group commit, for one scope and due
//! instant, are stored as the members of one batch: one value per [`super::intake::CHUNK`] members, one
//! listing entry and one due entry for all of them, where each POST alone would write all three. On sled
//! a durable create costs about what the keys it writes cost, so this is most of a single create's write.
//!
//! A lone request's id is its place in the shared batch, so a read by id, the due pass, retirement and
//! purging treat it as any batch member. What its client knows as its batch (a single-item POST creates
//! a batch of size 1) is named by its own request id: an id with a place in its last four hex digits,
//! which the batch of a POST never has (theirs end in `0000`), so [`shared_member`] tells one from the
//! other. The shared batch's own id is shown to nobody.
//!
//! Members share the creation instant of the first to join, at most one flush earlier than their own:
//! listings order a batch's members by place under one creation instant, and a purge finds a batch's
//! listing entry under it.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::create::{put_batch, sealed_chunks, NewBatch};
use super::Scope;
use crate::engine::TxResult;
use crate::group::Txn;
use crate::seal::Sealer;
use crate::{RequestBatchId, RequestId, RequestRecord, BATCH_CAPACITY};

/// The shared batches of one transaction, filled as its lone creates run and written after them.
#[derive(Default)]
pub(crate) struct SharedBatches {
    open: Vec<SharedBatch>,
}

struct SharedBatch {
    id: RequestBatchId,
    /// Its scope's key prefix.
    prefix: Vec<u8>,
    created_at: DateTime<Utc>,
    due_at: DateTime<Utc>,
    /// Each member as stored, alone in the vector its create answers with.
    members: Vec<Arc<Vec<RequestRecord>>>,
}

impl SharedBatches {
    /// `record` as stored once it joins the shared batch of its scope and due instant: its id is its place
    /// there, its batch id that id, its creation instant the batch's.
    pub(crate) fn join(&mut self, record: &RequestRecord) -> Arc<Vec<RequestRecord>> {
        let prefix = Scope::new(record.account_id.clone(), record.environment).prefix();
        let open = self.open.iter().position(|batch| {
            batch.prefix == prefix
                && batch.due_at == record.due_at
                && batch.members.len() < BATCH_CAPACITY
        });
        let batch = match open {
            Some(index) => &mut self.open[index],
            None => {
                self.open.push(SharedBatch {
                    id: RequestBatchId::new(),
                    prefix,
                    created_at: record.created_at,
                    due_at: record.due_at,
                    members: Vec::new(),
                });
                self.open.last_mut().expect("just pushed")
            }
        };
        let id = batch.id.member(batch.members.len() + 1);
        let stored = Arc::new(vec![RequestRecord {
            batch_id: RequestBatchId::from(id.as_str()),
            id,
            created_at: batch.created_at,
            ..record.clone()
        }]);
        batch.members.push(Arc::clone(&stored));
        stored
    }

    /// Writes every shared batch whole, as a POST's batch is written.
    pub(crate) fn write(&self, txn: &Txn, sealer: &Sealer) -> TxResult<()> {
        for batch in &self.open {
            let members: Vec<&RequestRecord> =
                batch.members.iter().map(|member| &member[0]).collect();
            put_batch(
                txn,
                &NewBatch {
                    id: batch.id.clone(),
                    prefix: batch.prefix.clone(),
                    created_at: batch.created_at,
                    due_at: batch.due_at,
                    count: members.len() as u32,
                    chunks: sealed_chunks(sealer, &batch.id, &members, true),
                },
            )?;
        }
        Ok(())
    }
}

/// The request a client's batch id names when it is a lone request's: the request of that id.
pub(crate) fn shared_member(batch: &RequestBatchId) -> Option<RequestId> {
    let id = RequestId::from(batch.as_str());
    id.batch_place().map(|_| id)
}
