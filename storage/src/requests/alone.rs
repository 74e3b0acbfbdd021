//! Requests stored alone: those created before batches were stored whole (layout 3 and earlier), which
//! `switchboard migrate` converted to layout 4 (see [`crate::layout`]).
//!
//! Their ids are plain UUID v7s that name no batch place, and clients hold them, so they are kept: each
//! such request has its record in `requests` under its id (read by id as any request with a record of its
//! own), a listing entry and a due entry of its own (empty value, next to the batches' entries), and its
//! name in the head its batch has in `intake` (`IntakeRecord::named`), which lists the batch.
//!
//! This is the one form the current layout keeps for them, for good: their entries cannot be folded
//! into batch entries, because a listing pages by `(created, id)` and a batch entry stands for ids that
//! follow each other in that order, which a batch's plain ids need not do. What the conversion removed is
//! the layout's own batch index (`batch_index`), which nothing reads any more.

use std::collections::BTreeMap;

use super::intake::{chunk_key, IntakeRecord};
use crate::codec::{decode, encode};
use crate::engine::{Batch, Tree, TxTree};
use crate::seal::Sealed;
use crate::{trees, RequestBatchId, RequestId, RequestRecord, StorageError, Store};

/// The batch that holds `record` in `intake`, the one its id names, or `None` when it is stored alone.
/// A lone create's request counts as placed: its client's batch id is its own id, and the batch its id
/// names holds it.
pub(crate) fn placed_batch(record: &RequestRecord) -> Option<RequestBatchId> {
    let (batch, _) = record.id.batch_place()?;
    let placed = batch == record.batch_id || record.batch_id.as_str() == record.id.as_str();
    placed.then_some(batch)
}

/// What the conversion to layout 4 did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Converted {
    /// Batches given a head naming their members.
    pub(crate) batches: u64,
    /// Listing and due entries of requests purged before, left behind, removed.
    pub(crate) stale_entries: u64,
}

impl Store {
    /// Inside a purge of `id`, a request stored alone: takes its name out of its batch's head, and the
    /// head itself with the last name.
    pub(crate) fn unname(
        &self,
        intake: &TxTree,
        batch: &RequestBatchId,
        id: &RequestId,
    ) -> Result<(), StorageError> {
        let fail = |e: sled::transaction::UnabortableTransactionError| StorageError::Corrupt {
            kind: "purge",
            reason: e.to_string(),
        };
        let key = chunk_key(batch, 0);
        let Some(bytes) = intake.get(&key).map_err(fail)? else {
            return Ok(());
        };
        let mut head: IntakeRecord = decode(&self.sealer.open(Sealed::Intake, &key, &bytes)?)?;
        head.named.retain(|named| named != id);
        head.count = head.named.len() as u32;
        if head.named.is_empty() {
            intake.remove(key).map_err(fail)?;
        } else {
            let sealed = self.sealer.seal(Sealed::Intake, &key, &encode(&head));
            intake.insert(key, sealed).map_err(fail)?;
        }
        Ok(())
    }

    /// The conversion to layout 4: each batch of layout 3's `batch_index` gets a head in `intake` naming
    /// its members, the entries of requests purged before are removed (a purge of a request whose id
    /// looked like a batch member's left them), and `batch_index` is emptied last. Idempotent: stopped
    /// anywhere, it is run again whole.
    pub(crate) fn convert_layout_three(&self) -> Result<Converted, StorageError> {
        let batch_index = self.db.open_tree(trees::BATCH_INDEX)?;
        let mut batches: BTreeMap<RequestBatchId, Vec<RequestId>> = BTreeMap::new();
        let mut spent = Batch::default();
        for entry in batch_index.iter() {
            let (key, _) = entry?;
            let id = indexed_id(&key, 3)?;
            spent.remove(key);
            // The record names the batch its client knows; one purged since has none.
            let Some(bytes) = self.group.requests.get(id.as_bytes())? else {
                continue;
            };
            let record: RequestRecord =
                decode(&self.sealer.open(Sealed::Requests, id.as_bytes(), &bytes)?)?;
            batches.entry(record.batch_id).or_default().push(record.id);
        }
        let mut converted = Converted::default();
        {
            let _open = self.group.gate.read().expect("write gate");
            for (batch, mut named) in batches {
                named.sort();
                named.dedup();
                let head = IntakeRecord {
                    count: named.len() as u32,
                    members: Vec::new(),
                    shared: false,
                    named,
                };
                let key = chunk_key(&batch, 0);
                let sealed = self.sealer.seal(Sealed::Intake, &key, &encode(&head));
                self.group.intake.insert(key, sealed)?;
                converted.batches += 1;
            }
            converted.stale_entries += self.remove_stale(&self.group.request_index, 2)?;
            converted.stale_entries += self.remove_stale(&self.group.due, 0)?;
        }
        // The heads are durable before the index they replace goes.
        self.flush_now()?;
        let _open = self.group.gate.read().expect("write gate");
        batch_index.apply_batch(spent)?;
        drop(_open);
        self.flush_now()?;
        Ok(converted)
    }

    /// Removes the entries of its own (empty value) in `index` whose request has no record: keys are
    /// `nuls` NUL-ended fields, a creation or due instant (u64), then the request id.
    fn remove_stale(&self, index: &Tree, nuls: usize) -> Result<u64, StorageError> {
        let mut stale = Batch::default();
        let mut removed = 0;
        for entry in index.iter() {
            let (key, value) = entry?;
            if !value.is_empty() {
                continue;
            }
            let id = indexed_id(&key, nuls)?;
            if !self.group.requests.contains_key(id.as_bytes())? {
                stale.remove(key);
                removed += 1;
            }
        }
        if removed > 0 {
            index.apply_batch(stale)?;
        }
        Ok(removed)
    }
}

/// The request id at the end of an index key made of `nuls` NUL-ended fields, an instant (u64 BE), and
/// the id.
fn indexed_id(key: &[u8], nuls: usize) -> Result<RequestId, StorageError> {
    let mut start = 0;
    for _ in 0..nuls {
        let end = key[start..].iter().position(|b| *b == 0);
        start += end.ok_or_else(|| malformed(key))? + 1;
    }
    let id = key.get(start + 8..).filter(|id| !id.is_empty());
    let id = id.and_then(|id| std::str::from_utf8(id).ok());
    id.map(RequestId::from).ok_or_else(|| malformed(key))
}

fn malformed(key: &[u8]) -> StorageError {
    StorageError::Corrupt {
        kind: "layout 3 index",
        reason: format!("an entry of {} bytes names no request", key.len()),
    }
}

/// Test support: writes `record` as layout 3 and earlier did, stored alone with its entry in the batch
/// index, as a store of that layout holds it.
#[cfg(test)]
pub(crate) fn store_as_layout_three(store: &Store, record: &RequestRecord) {
    use super::{created_key, due_key, Scope};

    let prefix = Scope::new(record.account_id.clone(), record.environment).prefix();
    let id = record.id.as_bytes();
    let sealed = store.sealer.seal(Sealed::Requests, id, &encode(record));
    store.group.requests.insert(id, sealed).unwrap();
    let group = &store.group;
    let listed = created_key(&prefix, record.created_at, id);
    group.request_index.insert(listed, &[]).unwrap();
    let mut batch_prefix = prefix;
    batch_prefix.extend_from_slice(record.batch_id.as_bytes());
    batch_prefix.push(0);
    let batch_index = store.db.open_tree(trees::BATCH_INDEX).unwrap();
    let in_batch = created_key(&batch_prefix, record.created_at, id);
    batch_index.insert(in_batch, &[]).unwrap();
    if record.run.is_none() {
        group.due.insert(due_key(record.due_at, id), &[]).unwrap();
    }
}
