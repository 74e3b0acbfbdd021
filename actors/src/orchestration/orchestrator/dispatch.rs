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
    /// orchestrator waits for the store's answer (`ctx.wait`: none of its other messages runs meanwhile,
    /// so what it starts was not started by another pass in between); the request actors on its thread
    /// run on.
    pub(super) fn run_pass(&mut self, ctx: &mut Context<Self>, now: DateTime<Utc>) {
        // Actors whose start is not recorded yet are still due in the store: passed over, and not
        // counted against the wave.
        let running: HashSet<RequestId> = self.running.keys().cloned().collect();
        let (store, wave) = (self.shared.store.clone(), self.waves.size);
        let due = async move {
            let skip = |id: &RequestId| running.contains(id);
            store.due_work(now, wave, skip).await
        };
        ctx.wait(due.into_actor(self).map(move |due, act, ctx| {
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
