//! The orchestrator's due pass: visiting the due requests a burst at a time, starting those whose day
//! has come, in waves, and retiring the batches the pass found done.

use std::panic::{resume_unwind, AssertUnwindSafe};

use actix::prelude::*;
use chrono::{DateTime, Utc};
use futures::FutureExt;
use switchboard_storage::{
    DueEntry, DuePass, RequestId, Retirement, Standing, StorageError, Visited,
};

use super::Orchestrator;
use crate::orchestration::reading::ready_now;
use crate::supervision::guarded;

impl Orchestrator {
    /// Starts a due request if it is waiting; answers whether it has left the due state (its run started
    /// and recorded, or it ended).
    fn dispatch_entry(
        &mut self,
        ctx: &mut Context<Self>,
        request_id: &RequestId,
        standing: Standing,
        now: DateTime<Utc>,
        starts: &mut usize,
    ) -> Visited {
        // Shared, not copied: only its standing is read here, and the actor started next finds it decoded.
        let record = match standing {
            // A due batch lists its members until it retires: those running are told apart without
            // decoding.
            Standing::Active => return Visited::LeftDue,
            Standing::Gone => return Visited::Waiting,
            Standing::Stored(record) => record,
        };
        if record.left_due() {
            return Visited::LeftDue;
        }
        // An actor may be running that has not recorded the start yet.
        if record.due_at <= now && !self.running.contains_key(request_id) {
            self.start_request(ctx, request_id.clone());
            *starts -= 1;
        }
        Visited::Waiting
    }

    /// Runs `pass` from its next burst on, starting at most `starts` requests: at once while bursts are
    /// ready (sled), else waiting for each (`ctx.wait`: no other message of the orchestrator runs in
    /// between, as with a blocking read, but the request actors on its thread do).
    pub(super) fn run_pass(
        &mut self,
        ctx: &mut Context<Self>,
        mut pass: DuePass,
        now: DateTime<Utc>,
        mut starts: usize,
    ) {
        loop {
            // A panic while reading is the handler's, as it was when the read blocked: it reaches
            // `guarded`, here or in the continuation, and restarts the orchestrator.
            let mut read = Box::pin(
                AssertUnwindSafe(async move {
                    let burst = pass.next_burst().await;
                    (pass, burst)
                })
                .catch_unwind(),
            );
            let Some(read) = ready_now(&mut read) else {
                let visit = move |read: std::thread::Result<_>,
                                  act: &mut Self,
                                  ctx: &mut Context<Self>| {
                    guarded(act, ctx, |act, ctx| {
                        let (pass, burst) = read.unwrap_or_else(|panic| resume_unwind(panic));
                        if let Some(pass) = act.visit_burst(ctx, pass, burst, now, &mut starts) {
                            act.run_pass(ctx, pass, now, starts);
                        }
                    });
                };
                ctx.wait(actix::fut::wrap_future::<_, Self>(read).map(visit));
                return;
            };
            let (back, burst) = read.unwrap_or_else(|panic| resume_unwind(panic));
            match self.visit_burst(ctx, back, burst, now, &mut starts) {
                Some(more) => pass = more,
                None => return,
            }
        }
    }

    /// Visits one burst of `pass`; answers the pass when it goes on. Once `starts` requests have
    /// started, the pass ends and the next wave is queued.
    fn visit_burst(
        &mut self,
        ctx: &mut Context<Self>,
        mut pass: DuePass,
        burst: Result<Vec<(DueEntry, Standing)>, StorageError>,
        now: DateTime<Utc>,
        starts: &mut usize,
    ) -> Option<DuePass> {
        let burst = match burst {
            Ok(burst) => burst,
            Err(e) => {
                // The sweep runs the next pass within a second.
                tracing::error!(error.message = %e, "cannot read the due requests");
                return None;
            }
        };
        if burst.is_empty() {
            self.retire(ctx, pass.finish());
            return None;
        }
        for (entry, standing) in burst {
            if *starts == 0 {
                pass.visited(&entry, Visited::Stop);
                self.retire(ctx, pass.finish());
                self.wake(ctx, self.waves.interval);
                return None;
            }
            let visited = self.dispatch_entry(ctx, &entry.request_id, standing, now, starts);
            pass.visited(&entry, visited);
        }
        // The wave is whole: the next burst is not read just to stop at its first request.
        if *starts == 0 && !pass.read_all() {
            self.retire(ctx, pass.stop());
            self.wake(ctx, self.waves.interval);
            return None;
        }
        Some(pass)
    }

    /// Retires what a pass found retirable on the blocking pool: a transaction, which on PostgreSQL
    /// waits on the network. This actor waits for it (no next pass meanwhile), its thread runs the
    /// request actors.
    fn retire(&mut self, ctx: &mut Context<Self>, retirement: Option<Retirement>) {
        let Some(retirement) = retirement else {
            return;
        };
        let retired = tokio::task::spawn_blocking(move || retirement.run());
        ctx.wait(
            async move {
                if retired.await.is_err() {
                    tracing::error!("retiring due batches panicked; a later pass retires them");
                }
            }
            .into_actor(self),
        );
    }
}
