//! Listings: a page of a scope's requests in a window, or of one batch, newest first, by keyset.
//!
//! A page is read as the index names its members, then their records: on PostgreSQL each record is a
//! statement, so the records of a page are asked for together (the client pipelines them on its
//! connection) and the page waits on the network about once, not once per member.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::try_join_all;

use super::intake::{member_slot, IntakeRecord};
use super::{created_key, micros, read_count, shared, Cursor, Scope};
use crate::engine::Bytes;
use crate::{RequestBatchId, RequestId, RequestRecord, StorageError, Store};

impl Store {
    /// Requests of `scope` created in `[from, to)`, newest first, after `cursor`, at most `limit`.
    pub async fn list_requests(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        self.page(&scope.prefix(), (from, to), cursor, limit).await
    }

    /// Every request of one batch in `scope`, newest first, after `cursor`, at most `limit`.
    pub async fn list_batch(
        &self,
        scope: &Scope,
        batch_id: &RequestBatchId,
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        if let Some(id) = shared::shared_member(batch_id) {
            return self.list_lone(scope, batch_id, &id, cursor).await;
        }
        let Some(head) = self.intake_head(batch_id)? else {
            return Ok(Vec::new());
        };
        if head.shared {
            // Not a batch of any client's: each of its members is a batch of its own.
            return Ok(Vec::new());
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let after = cursor.map(|c| &c.request_id);
        // A batch converted from layout 3 names its members in its head: their ids name no place.
        let named = head
            .named
            .iter()
            .rev()
            .filter(|id| after.is_none_or(|a| *id < a));
        let members: Box<dyn Iterator<Item = RequestId> + Send> = if head.named.is_empty() {
            Box::new(IntakeRecord::listed_after(batch_id, head.count, after))
        } else {
            Box::new(named.cloned())
        };
        let mut page = Page::new(limit);
        for member in members {
            if page.add(self, member).await? {
                break;
            }
        }
        let page = page.finish(self).await?;
        // Batch ids are not scoped: another account's batch lists as no batch at all.
        let foreign = |record: &RequestRecord| {
            record.account_id != scope.account_id || record.environment != scope.environment
        };
        Ok(if page.iter().any(foreign) {
            Vec::new()
        } else {
            page
        })
    }

    /// The batch of a lone request, which its id names: that request, if it is in `scope`, still stored,
    /// and after `cursor`.
    async fn list_lone(
        &self,
        scope: &Scope,
        batch_id: &RequestBatchId,
        id: &RequestId,
        cursor: Option<&Cursor>,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        if cursor.is_some_and(|after| after.request_id <= *id) {
            return Ok(Vec::new());
        }
        Ok(self
            .fetch_request(id)
            .await?
            .map(Arc::unwrap_or_clone)
            .filter(|record| {
                record.batch_id == *batch_id
                    && record.account_id == scope.account_id
                    && record.environment == scope.environment
            })
            .into_iter()
            .collect())
    }

    /// Keyset pagination over the listing index (`prefix + created + id`): the cost of a page does not
    /// depend on how deep it is.
    async fn page(
        &self,
        prefix: &[u8],
        (from, to): (DateTime<Utc>, DateTime<Utc>),
        cursor: Option<&Cursor>,
        limit: usize,
    ) -> Result<Vec<RequestRecord>, StorageError> {
        let mut start = prefix.to_vec();
        let mut end = prefix.to_vec();
        start.extend_from_slice(&micros(from).to_be_bytes());
        end.extend_from_slice(&micros(to).to_be_bytes());
        if let Some(cursor) = cursor {
            let after = created_key(prefix, cursor.created_at, cursor.request_id.as_bytes());
            if after < end {
                end = after;
            }
        }
        if start >= end || limit == 0 {
            return Ok(Vec::new());
        }
        let mut page = Page::new(limit);
        let index = &self.group.request_index;
        'index: for entry in index.range(start..end).rev() {
            let (key, value) = entry?;
            let (instant, id) = key[prefix.len()..].split_at(8);
            let id = String::from_utf8_lossy(id).into_owned();
            if value.is_empty() {
                // A request stored alone (see [`super::alone`]): an entry of its own.
                if page.add(self, RequestId::from(id)).await? {
                    break;
                }
                continue;
            }
            // A cursor at the batch's creation instant may fall inside it.
            let resume_after = cursor
                .filter(|c| instant == micros(c.created_at).to_be_bytes())
                .map(|c| &c.request_id);
            let batch = RequestBatchId::from(id);
            let members = IntakeRecord::listed_after(&batch, read_count(&value)?, resume_after);
            for member in members {
                if page.add(self, member).await? {
                    break 'index;
                }
            }
        }
        page.finish(self).await
    }
}

impl Store {
    /// The records of `ids`, as [`Store::fetch_request`] reads each, in two bursts: the records of their
    /// own, then the batch chunks holding the others, each chunk once (a chunk holds 64 members, and
    /// on PostgreSQL every read of it carries all of them).
    pub(crate) async fn fetch_members(
        &self,
        ids: &[RequestId],
    ) -> Result<Vec<Option<Arc<RequestRecord>>>, StorageError> {
        let own = try_join_all(
            ids.iter()
                .map(|id| self.group.requests.get_async(id.as_str())),
        )
        .await?;
        let mut chunks: BTreeMap<Vec<u8>, Option<Bytes>> = ids
            .iter()
            .zip(&own)
            .filter(|(_, own)| own.is_none())
            .filter_map(|(id, _)| Some((member_slot(id)?.0, None)))
            .collect();
        let keys: Vec<Vec<u8>> = chunks.keys().cloned().collect();
        let read = try_join_all(keys.iter().map(|key| self.group.intake.get_async(key))).await?;
        for (key, bytes) in keys.into_iter().zip(read) {
            chunks.insert(key, bytes);
        }
        let mut records = Vec::with_capacity(ids.len());
        for (id, own) in ids.iter().zip(own) {
            if let Some(bytes) = own {
                records.push(Some(self.decoded_requests.get(id.as_bytes(), bytes)?));
                continue;
            }
            let in_chunk = match member_slot(id) {
                Some((key, index)) => match chunks.get(&key).cloned().flatten() {
                    Some(bytes) => self.decoded_intake.get(&key, bytes)?.member(id, index),
                    None => None,
                },
                None => None,
            };
            records.push(match in_chunk {
                Some(record) => Some(record),
                // Purged, or started with its batch retired between the two bursts: read alone.
                None => self.fetch_request(id).await?,
            });
        }
        Ok(records)
    }
}

/// A page being gathered: the records read so far, and the members named since, read together once
/// there are as many as the page has room for.
struct Page {
    limit: usize,
    records: Vec<RequestRecord>,
    wanted: Vec<RequestId>,
}

impl Page {
    fn new(limit: usize) -> Page {
        Page {
            limit,
            records: Vec::with_capacity(limit.min(1024)),
            wanted: Vec::new(),
        }
    }

    /// Adds `id`; answers whether the page is full. A purged member is gone from listings, so its place
    /// is taken by the next.
    async fn add(&mut self, store: &Store, id: RequestId) -> Result<bool, StorageError> {
        self.wanted.push(id);
        if self.records.len() + self.wanted.len() < self.limit {
            return Ok(false);
        }
        self.read(store).await?;
        Ok(self.records.len() >= self.limit)
    }

    async fn read(&mut self, store: &Store) -> Result<(), StorageError> {
        let wanted = std::mem::take(&mut self.wanted);
        let read = store.fetch_members(&wanted).await?;
        self.records
            .extend(read.into_iter().flatten().map(Arc::unwrap_or_clone));
        Ok(())
    }

    async fn finish(mut self, store: &Store) -> Result<Vec<RequestRecord>, StorageError> {
        self.read(store).await?;
        Ok(self.records)
    }
}
