//! Batches stored whole: the requests of one batch are written at creation as values under the batch id, one
//! per [`CHUNK`] members, and each request gets a record of its own (in `requests`) only with its first
//! change, when its run starts. A 50-entry POST is then one value and a few index entries instead of 50
//! records and 200 index entries; a request's id names its batch and place ([`RequestId::batch_place`]), so
//! nothing maps one to the other. The chunks bound what one read decodes, and what the decoded copies
//! hold, whatever the size of the POST.
//!
//! Once every member has a record of its own, the batch is *retired*: its due entry goes, its first chunk
//! shrinks to the member count, which listing the batch still needs, and the other chunks go.

use std::sync::Arc;

use crate::engine::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::due_key;
use crate::codec::{encode, Record};
use crate::decoded::Decoded;
use crate::group::{Queued, Txn, Verdict};
use crate::seal::Sealed;
use crate::{RequestBatchId, RequestId, RequestRecord, StorageError, Store};

/// Members stored in one value: a chunk decodes in well under a millisecond, and the decoded copies hold at
/// most [`crate::store::DECODED_CHUNKS`] chunks.
pub(crate) const CHUNK: usize = 64;

/// One chunk of a batch's requests as they were created.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct IntakeRecord {
    /// Members the whole batch has; their ids are [`RequestBatchId::member`] 1 to `count`.
    pub(crate) count: u32,
    /// This chunk's members as created, in place order (`None`, stored as `null`, for one purged); empty
    /// once the batch is retired.
    pub(crate) members: Vec<Option<Arc<RequestRecord>>>,
    /// Whether the members are lone requests that shared the batch ([`super::shared`]): each is a batch of
    /// its own to its client, and this batch's id lists nothing. Written only when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) shared: bool,
    /// The members' ids, in id order, of a batch converted from layout 3 (see [`super::alone`]): their
    /// ids name no place, so the batch's head names them. Empty for every other batch, and not written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) named: Vec<RequestId>,
}

/// The key of chunk `chunk` (from 0) of `batch`: the batch id and the chunk number (u16 BE).
pub(crate) fn chunk_key(batch: &RequestBatchId, chunk: usize) -> Vec<u8> {
    key_of_chunk(&[batch.as_str()], chunk)
}

/// [`chunk_key`] of the batch whose id is `id`'s parts in order.
fn key_of_chunk(id: &[&str], chunk: usize) -> Vec<u8> {
    let mut key = Vec::with_capacity(id.iter().map(|part| part.len()).sum::<usize>() + 2);
    for part in id {
        key.extend_from_slice(part.as_bytes());
    }
    key.extend_from_slice(&(chunk as u16).to_be_bytes());
    key
}

/// Where the request `id` is stored as created, if it is a batch member: its chunk's key and its index
/// there.
pub(crate) fn member_slot(id: &RequestId) -> Option<(Vec<u8>, usize)> {
    // The batch's id is the member's stem and zeros: its key is built without a string of its own.
    let (stem, place) = id.member_stem()?;
    let batch = [stem, crate::ids::BATCH_ZEROS];
    Some((
        key_of_chunk(&batch, (place - 1) / CHUNK),
        (place - 1) % CHUNK,
    ))
}

/// Chunks a batch of `count` members is stored in.
pub(crate) fn chunks(count: u32) -> usize {
    (count as usize).div_ceil(CHUNK)
}

impl Record for IntakeRecord {
    const KIND: &'static str = "intake batch";
    /// 2: zstd-compressed JSON. 1: plain JSON, written for a lone request and for a batch booked for the
    /// day it is created on (see [`IntakeRecord::stored_plain`]).
    const VERSION: u8 = 2;
    const COMPRESSED: bool = true;

    fn upgrade(version: u8, body: &[u8]) -> Result<Self, StorageError> {
        crate::codec::upgrade_from_plain(version, body)
    }
}

impl IntakeRecord {
    /// Whether a batch of new `members` is stored as plain JSON instead of compressed:
    /// - one retired as soon as their runs start (each is replaced soon, booked for the day it is created
    ///   on) lasts seconds, and the shrunk value replaces it;
    /// - a lone request compresses to half its 1.3 KB at zstd's level 1, for 6 µs, while the members of a
    ///   larger batch share their keys and compress many times better for the same time per byte. Those
    ///   6 µs were a tenth of a single create's time, and the 650 bytes are spent only while it waits for
    ///   its day.
    pub(crate) fn stored_plain(members: &[&RequestRecord]) -> bool {
        members.len() == 1 || members.iter().all(|member| member.replaced_soon())
    }

    /// The member `id` names at `index` of this chunk, if the chunk still holds it as created.
    pub(super) fn member(&self, id: &RequestId, index: usize) -> Option<Arc<RequestRecord>> {
        let member = self.members.get(index)?.as_ref()?;
        (member.id == *id).then(|| Arc::clone(member))
    }

    /// Ids of the members a listing shows after `cursor` (the last id of the previous page, if it fell in
    /// this batch), last place first: members share one creation instant, so newest first is last place
    /// first.
    pub(crate) fn listed_after<'a>(
        batch: &'a RequestBatchId,
        count: u32,
        cursor: Option<&'a RequestId>,
    ) -> impl Iterator<Item = RequestId> + 'a {
        IntakeRecord::ids_newest_first(batch, count)
            .filter(move |member| cursor.is_none_or(|after| member < after))
    }

    /// Ids of the members, last place first (the newest-first order listings use).
    pub(crate) fn ids_newest_first(
        batch: &RequestBatchId,
        count: u32,
    ) -> impl DoubleEndedIterator<Item = RequestId> + '_ {
        (1..=count as usize)
            .rev()
            .map(move |place| batch.member(place))
    }
}

impl Store {
    /// A request that has no record of its own yet, as its batch stored it at creation.
    pub(crate) async fn intake_member(
        &self,
        id: &RequestId,
    ) -> Result<Option<Arc<RequestRecord>>, StorageError> {
        let Some((key, index)) = member_slot(id) else {
            return Ok(None);
        };
        match self.group.intake.get_async(&key).await? {
            Some(bytes) => Ok(self.decoded_intake.get(&key, bytes)?.member(id, index)),
            None => Ok(None),
        }
    }

    /// The head (first chunk) of `batch`, if it is stored.
    pub(crate) fn intake_head(
        &self,
        batch: &RequestBatchId,
    ) -> Result<Option<Arc<IntakeRecord>>, StorageError> {
        let key = chunk_key(batch, 0);
        match self.group.intake.get(&key)? {
            Some(bytes) => self.decoded_intake.get(&key, bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Retires the due batches of `batches` whose members all have records of their own that left the
    /// due state (a run started, or ended without one): the due entry goes and the value keeps only the
    /// count. A batch with a member still waiting, or one that cannot be read, is left as it is. One
    /// grouped write for all; returns how many were retired. Idempotent: a retirement lost in a crash is
    /// made again at the next due pass.
    pub(crate) async fn retire_batches(
        &self,
        batches: Vec<(DateTime<Utc>, RequestBatchId)>,
    ) -> Result<usize, StorageError> {
        if batches.is_empty() {
            return Ok(0);
        }
        let store = self.clone();
        let job = Queued::job(move |txn: &Txn| {
            let mut retired = 0;
            for (due_at, batch) in &batches {
                match store.all_left_due(txn, batch)? {
                    Ok(Some((count, shared))) => {
                        txn.due.remove(due_key(*due_at, batch.as_bytes()))?;
                        let spent = IntakeRecord {
                            count,
                            members: Vec::new(),
                            shared,
                            named: Vec::new(),
                        };
                        let key = chunk_key(batch, 0);
                        let stored = store.sealer.seal(Sealed::Intake, &key, &encode(&spent));
                        txn.intake.insert(key, stored)?;
                        for chunk in 1..chunks(count) {
                            txn.intake.remove(chunk_key(batch, chunk))?;
                        }
                        retired += 1;
                    }
                    Ok(None) => {}
                    // Left for a later pass; the others retire (a grouped write declines only before
                    // its first write, so this one never declines).
                    Err(e) => {
                        tracing::error!(error.message = %e, batch = %batch, "cannot retire a due batch")
                    }
                }
            }
            Ok(Ok(retired))
        });
        self.request_write(job, false).await
    }

    /// The member count of `batch`, and whether lone requests share it, if every member has a record of
    /// its own that left the due state.
    fn all_left_due(&self, txn: &Txn, batch: &RequestBatchId) -> Verdict<Option<(u32, bool)>> {
        let key = chunk_key(batch, 0);
        let Some(bytes) = txn.intake.get(&key)? else {
            return Ok(Ok(None));
        };
        let (count, shared) = match self.decoded_intake.peek(&key, &bytes) {
            Ok(intake) if !intake.members.is_empty() => (intake.count, intake.shared),
            Ok(_) => return Ok(Ok(None)),
            Err(e) => return Ok(Err(e)),
        };
        for id in IntakeRecord::ids_newest_first(batch, count) {
            let Some(bytes) = txn.requests.get(id.as_bytes())? else {
                // A member purged before its run started has left for good; one still waiting has not.
                match stored_request(txn, &self.decoded_intake, &id)? {
                    Ok(None) => continue,
                    Ok(Some(_)) => return Ok(Ok(None)),
                    Err(e) => return Ok(Err(e)),
                }
            };
            match self.decoded_requests.peek(id.as_bytes(), &bytes) {
                Ok(record) if record.left_due() => {}
                Ok(_) => return Ok(Ok(None)),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(Ok(Some((count, shared))))
    }
}

/// Inside a grouped write: the record stored for `id`, its own or its batch's copy, and whether it is its
/// own (whose bytes are given, for the decoded copies).
pub(crate) enum Stored {
    /// `requests` holds the record: these bytes.
    Own(Bytes),
    /// Only its batch holds it, as created.
    InBatch(Arc<RequestRecord>),
}

/// Reads what is stored for `id` inside a transaction.
pub(crate) fn stored_request(
    txn: &Txn,
    intake: &Decoded<IntakeRecord>,
    id: &RequestId,
) -> Verdict<Option<Stored>> {
    if let Some(bytes) = txn.requests.get(id.as_bytes())? {
        return Ok(Ok(Some(Stored::Own(bytes))));
    }
    let Some((key, index)) = member_slot(id) else {
        return Ok(Ok(None));
    };
    let Some(bytes) = txn.intake.get(&key)? else {
        return Ok(Ok(None));
    };
    Ok(intake
        .peek(&key, &bytes)
        .map(|chunk| chunk.member(id, index).map(Stored::InBatch)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_slot_is_its_batch_chunk_key_and_index_at_every_chunk_edge() {
        let batch = RequestBatchId::new();
        for place in [
            1,
            CHUNK,
            CHUNK + 1,
            3 * CHUNK + 7,
            crate::ids::BATCH_CAPACITY,
        ] {
            assert_eq!(
                member_slot(&batch.member(place)),
                Some((chunk_key(&batch, (place - 1) / CHUNK), (place - 1) % CHUNK)),
                "place {place}"
            );
        }
        assert_eq!(member_slot(&RequestId::from(batch.as_str())), None);
        assert_eq!(member_slot(&RequestId::from("not-a-uuid")), None);
    }
}
