//! Due work for the orchestrator, in one call: the requests whose day has come and whose run has not
//! started. The store keeps to itself how due requests are laid out (a batch's one due entry standing for
//! its members) and retires, in the same call, each batch every member of which has left the due state.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::try_join_all;

use crate::{DueEntry, RequestBatchId, RequestId, RequestRecord, StorageError, Store};

/// Due requests whose standing is read together: on PostgreSQL a pass waits on the network about three
/// times per burst (whether each runs, the records of their own, the batch chunks holding the others),
/// not twice per request.
const BURST: usize = 64;

/// What the store holds of a due request when a pass reaches it.
enum Standing {
    /// Its run has started and not finished, told apart without decoding the record.
    Active,
    /// Not running: its record (its batch's copy, until it has one of its own).
    Stored(Arc<RequestRecord>),
    /// Nothing: purged since it was booked.
    Gone,
}

impl Standing {
    /// Whether the request has left the due state: its run started (and is recorded), or it ended.
    fn left_due(&self) -> bool {
        match self {
            Standing::Active => true,
            Standing::Stored(record) => record.left_due(),
            Standing::Gone => false,
        }
    }
}

impl Store {
    /// At most `limit` requests due by `now` to start, earliest first: booked for a day that has begun,
    /// not started, and not passed over by `skip` (the caller's runs that have not recorded their start
    /// yet, which do not count against `limit`). A caller that gets `limit` requests asks again for the
    /// rest; one that starts fewer loses nothing, as the others stay due.
    ///
    /// The batches whose members this call saw all leave the due state are retired before it answers, so
    /// the next call reads none of them again; one seen only in part (the call ended inside it) is not.
    /// Retiring writes only the store's own layout, checked again inside its write, and a retirement lost
    /// in a crash is made by a later call.
    pub async fn due_work(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        skip: impl Fn(&RequestId) -> bool,
    ) -> Result<Vec<RequestId>, StorageError> {
        let entries = self.due_by(now).await?;
        let mut to_start = Vec::new();
        // Per batch: its due instant, and whether every member seen so far has left the due state.
        let mut retirable: HashMap<RequestBatchId, (DateTime<Utc>, bool)> = HashMap::new();
        let mut seen = 0;
        'pass: for burst in entries.chunks(BURST) {
            // The wave is whole: the next burst is not read just to stop at its first request.
            if to_start.len() == limit {
                break;
            }
            let standings = self.standings(burst).await?;
            for (entry, standing) in burst.iter().zip(standings) {
                if to_start.len() == limit {
                    break 'pass;
                }
                seen += 1;
                let left_due = standing.left_due();
                if let Some(batch) = &entry.batch {
                    retirable
                        .entry(batch.clone())
                        .or_insert((entry.due_at, true))
                        .1 &= left_due;
                }
                if let Standing::Stored(record) = standing {
                    if !left_due && record.due_at <= now && !skip(&entry.request_id) {
                        to_start.push(entry.request_id.clone());
                    }
                }
            }
        }
        // A batch seen in part cannot tell whether all its members left the due state.
        if let Some(batch) = entries.get(seen).and_then(|next| next.batch.as_ref()) {
            retirable.remove(batch);
        }
        let retire: Vec<(DateTime<Utc>, RequestBatchId)> = retirable
            .into_iter()
            .filter(|(_, (_, all_left))| *all_left)
            .map(|(batch, (due_at, _))| (due_at, batch))
            .collect();
        // Due work is still answered: a batch not retired now is retired by a later call.
        if let Err(e) = self.retire_batches(retire).await {
            tracing::error!(error.message = %e, "cannot retire due batches");
        }
        Ok(to_start)
    }

    /// The standing of each of `entries`: whether it runs, in one burst, then the records of those
    /// that do not, in [`Store::fetch_members`]'s two.
    async fn standings(&self, entries: &[DueEntry]) -> Result<Vec<Standing>, StorageError> {
        let active = try_join_all(
            entries
                .iter()
                .map(|entry| self.group.active.get_async(entry.request_id.as_bytes())),
        )
        .await?;
        let waiting: Vec<RequestId> = entries
            .iter()
            .zip(&active)
            .filter(|(_, active)| active.is_none())
            .map(|(entry, _)| entry.request_id.clone())
            .collect();
        let mut records = self.fetch_members(&waiting).await?.into_iter();
        Ok(active
            .iter()
            .map(|active| match active {
                Some(_) => Standing::Active,
                None => match records.next().flatten() {
                    Some(record) => Standing::Stored(record),
                    None => Standing::Gone,
                },
            })
            .collect())
    }
}
