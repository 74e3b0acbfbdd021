//! A pass over the requests that have fallen due, for the orchestrator: it decides what to start, and the
//! store keeps to itself how due requests are laid out (a batch's one due entry standing for its members,
//! retired once every member has left the due state).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::try_join_all;

use crate::{DueEntry, RequestBatchId, RequestId, RequestRecord, StorageError, Store};

/// Due requests whose standing is read together, ahead of their visits: on PostgreSQL a pass waits on
/// the network about three times per burst (whether each runs, the records of their own, the batch
/// chunks holding the others), not twice per request.
const BURST: usize = 64;

/// What a due pass's visitor made of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visited {
    /// Its run started (and is recorded), or it ended: it is due no more.
    LeftDue,
    /// Still waiting: its day has not begun, or its start is not recorded yet.
    Waiting,
    /// The pass ends here, before this request; the rest wait for the next pass.
    Stop,
}

/// What the store holds of a due request when the pass reaches it.
#[derive(Debug)]
pub enum Standing {
    /// Its run has started and not finished, told apart without decoding the record.
    Active,
    /// Not running: its record (its batch's copy, until it has one of its own).
    Stored(Arc<RequestRecord>),
    /// Nothing: purged since it was booked.
    Gone,
}

/// A pass over the requests due by an instant, earliest first, read a burst at a time
/// ([`DuePass::next_burst`], awaited, so an actor's thread is free while PostgreSQL answers). The visitor
/// tells the pass what it made of each request ([`DuePass::visited`]); [`DuePass::finish`] then retires
/// each batch whose members were all visited and all left the due state, so the next pass reads none of
/// them again.
pub struct DuePass {
    store: Store,
    now: DateTime<Utc>,
    /// The due requests not read yet, from the due index read with the first burst.
    unread: Option<VecDeque<DueEntry>>,
    retirable: HashMap<RequestBatchId, (DateTime<Utc>, bool)>,
}

impl Store {
    /// A pass over every request due by `now`: the due index is read with the first burst, the
    /// requests' standings burst by burst.
    pub fn due_pass(&self, now: DateTime<Utc>) -> DuePass {
        DuePass {
            store: self.clone(),
            now,
            unread: None,
            retirable: HashMap::new(),
        }
    }
}

impl DuePass {
    /// The next due requests, with their standing, read together; empty once the pass has read them all.
    /// Visits only start actors, which write later: what a burst read stays what its visits see.
    pub async fn next_burst(&mut self) -> Result<Vec<(DueEntry, Standing)>, StorageError> {
        let unread = match &mut self.unread {
            Some(unread) => unread,
            None => self
                .unread
                .insert(self.store.due_by(self.now).await?.into()),
        };
        let burst: Vec<DueEntry> = unread.drain(..BURST.min(unread.len())).collect();
        let standings = self.store.standings(&burst).await?;
        Ok(burst.into_iter().zip(standings).collect())
    }

    /// Whether every due request has been read (none is left for another burst).
    pub fn read_all(&self) -> bool {
        self.unread.as_ref().is_some_and(VecDeque::is_empty)
    }

    /// Ends the pass before the next request it would read: like [`Visited::Stop`] on that request.
    pub fn stop(mut self) -> Option<Retirement> {
        let next = self.unread.as_ref().and_then(VecDeque::front);
        if let Some(batch) = next.and_then(|entry| entry.batch.as_ref()) {
            self.retirable.remove(batch);
        }
        self.finish()
    }

    /// Records what the visitor made of `entry`. After [`Visited::Stop`] the pass ends: the caller
    /// visits nothing more, and finishes it.
    pub fn visited(&mut self, entry: &DueEntry, visited: Visited) {
        let Some(batch) = &entry.batch else { return };
        if visited == Visited::Stop {
            // A batch seen in part cannot tell whether all its members left the due state.
            self.retirable.remove(batch);
            return;
        }
        self.retirable
            .entry(batch.clone())
            .or_insert((entry.due_at, true))
            .1 &= visited == Visited::LeftDue;
    }

    /// Ends the pass: the batches every member of which was visited and left the due state, to retire,
    /// if any.
    pub fn finish(self) -> Option<Retirement> {
        let batches: Vec<(DateTime<Utc>, RequestBatchId)> = self
            .retirable
            .into_iter()
            .filter(|(_, (_, all_left))| *all_left)
            .map(|(batch, (due_at, _))| (due_at, batch))
            .collect();
        (!batches.is_empty()).then_some(Retirement {
            store: self.store,
            batches,
        })
    }
}

/// The batches a pass found all started or ended, retired in one transaction by [`Retirement::run`]: a
/// blocking write, which on PostgreSQL waits on the network, so the caller runs it off an actor's thread.
pub struct Retirement {
    store: Store,
    batches: Vec<(DateTime<Utc>, RequestBatchId)>,
}

impl Retirement {
    /// Retires the batches. A failure is logged, and the retirement made at a later pass.
    pub fn run(self) {
        // A batch that cannot retire (an unreadable member) must not stop the pass's caller.
        if let Err(e) = self.store.retire_batches(&self.batches) {
            tracing::error!(error.message = %e, "cannot retire due batches");
        }
    }
}

/// A whole pass on this thread, for tests: `visit` is asked about each due request until it answers
/// [`Visited::Stop`].
#[cfg(test)]
pub(crate) fn visit_due(
    store: &Store,
    now: DateTime<Utc>,
    mut visit: impl FnMut(&RequestId, DateTime<Utc>, Standing) -> Visited,
) {
    let mut pass = store.due_pass(now);
    loop {
        let burst = crate::engine::resolve(pass.next_burst()).unwrap();
        if burst.is_empty() {
            break;
        }
        for (entry, standing) in burst {
            let visited = visit(&entry.request_id, entry.due_at, standing);
            pass.visited(&entry, visited);
            if visited == Visited::Stop {
                return pass.finish().into_iter().for_each(Retirement::run);
            }
        }
    }
    pass.finish().into_iter().for_each(Retirement::run)
}

impl Store {
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
