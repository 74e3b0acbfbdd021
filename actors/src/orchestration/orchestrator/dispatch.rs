//! The orchestrator's due pass: one store call names the due requests to start (and retires, inside the
//! store, what it found done); they are started here, in waves.

use std::collections::HashSet;

use actix::prelude::*;
use chrono::{DateTime, Utc};
use switchboard_storage::{RequestId, StorageError};

use super::Orchestrator;
use crate::supervision::guarded;

impl Orchestrator {
    /// Starts the requests due by `now`, at most a wave of them; a full wave queues the next one. The
    /// store's answer is awaited beside the orchestrator's other messages (`ctx.spawn`: on PostgreSQL a
    /// pass over thousands of due requests takes long, and the counters, the resumes and the request
    /// actors' reports must not wait behind it); one pass at a time, so what one starts no other starts,
    /// and a pass asked for meanwhile is the sweep's next one, within a second.
    pub(super) fn run_pass(&mut self, ctx: &mut Context<Self>, now: DateTime<Utc>) {
        if self.pass_in_flight {
            return;
        }
        self.pass_in_flight = true;
        // Actors whose start is not recorded yet are still due in the store: passed over, and not
        // counted against the wave.
        let running: HashSet<RequestId> = self.running.keys().cloned().collect();
        let (store, wave) = (self.shared.store.clone(), self.waves.size);
        let due = async move {
            let skip = |id: &RequestId| running.contains(id);
            store.due_work(now, wave, skip).await
        };
        ctx.spawn(due.into_actor(self).map(move |due, act, ctx| {
            act.pass_in_flight = false;
            guarded(act, ctx, |act, ctx| act.start_due(ctx, due, wave));
        }));
    }

    fn start_due(
        &mut self,
        ctx: &mut Context<Self>,
        due: Result<Vec<RequestId>, StorageError>,
        wave: usize,
    ) {
        let due = match due {
            Ok(due) => due,
            // The sweep runs the next pass within a second.
            Err(e) => return tracing::error!(error.message = %e, "cannot read the due requests"),
        };
        let whole = due.len() >= wave;
        for id in due {
            self.start_request(ctx, id);
        }
        if whole {
            self.wake(ctx, self.waves.interval);
        }
    }
}
