//! A pass over the requests that have fallen due, for the orchestrator: it decides what to start, and the
//! store keeps to itself how due requests are laid out (a batch's one due entry standing for its members,
//! retired once every member has left the due state).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::{RequestBatchId, RequestId, StorageError, Store};

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

impl Store {
    /// Visits every request due by `now`, earliest first, until `visit` answers [`Visited::Stop`]; then
    /// retires each batch whose members were all visited and all left the due state, so the next pass
    /// reads none of them again. A retirement that fails is logged and made at a later pass.
    pub fn due_pass<E: From<StorageError>>(
        &self,
        now: DateTime<Utc>,
        mut visit: impl FnMut(&RequestId, DateTime<Utc>) -> Result<Visited, E>,
    ) -> Result<(), E> {
        let mut retirable: HashMap<RequestBatchId, (DateTime<Utc>, bool)> = HashMap::new();
        for entry in self.due_by(now)? {
            let visited = visit(&entry.request_id, entry.due_at)?;
            if visited == Visited::Stop {
                // A batch seen in part cannot tell whether all its members left the due state.
                if let Some(batch) = &entry.batch {
                    retirable.remove(batch);
                }
                break;
            }
            if let Some(batch) = entry.batch {
                retirable.entry(batch).or_insert((entry.due_at, true)).1 &=
                    visited == Visited::LeftDue;
            }
        }
        let retiring: Vec<(DateTime<Utc>, RequestBatchId)> = retirable
            .into_iter()
            .filter(|(_, (_, all_left))| *all_left)
            .map(|(batch, (due_at, _))| (due_at, batch))
            .collect();
        // A batch that cannot retire (an unreadable member) must not stop the pass's caller.
        if let Err(e) = self.retire_batches(&retiring) {
            tracing::error!(error.message = %e, "cannot retire due batches");
        }
        Ok(())
    }
}
