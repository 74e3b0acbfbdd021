//! SIGTERM and SIGINT, each a graceful stop, for the forwarding server and the full server alike (actix's
//! own handling would stop on SIGINT without letting requests finish). A node on a shared database catches
//! them from its first moment standing by, so a stop asked for while one server hands over to the other
//! (the lease just taken, the store opening) is not lost. And the forwards a handover left in flight,
//! which the node's exit waits for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::rt::task::JoinHandle;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::Notify;

use crate::startup::SHUTDOWN_GRACE_SECS;

/// Whether a stop was asked for, and a wait for it.
#[derive(Clone)]
pub struct StopAsked(Arc<(AtomicBool, Notify)>);

impl StopAsked {
    /// Listens from now on, for the rest of the process.
    pub fn listen() -> std::io::Result<StopAsked> {
        let (mut terminate, mut interrupt) = (
            signal(SignalKind::terminate())?,
            signal(SignalKind::interrupt())?,
        );
        let asked = StopAsked(Arc::new((AtomicBool::new(false), Notify::new())));
        let told = asked.clone();
        actix_web::rt::spawn(async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
            told.0 .0.store(true, Ordering::SeqCst);
            told.0 .1.notify_waiters();
        });
        Ok(asked)
    }

    /// Returns once a stop was asked for (at once if it was already).
    pub async fn wait(&self) {
        loop {
            let notified = self.0 .1.notified();
            if self.0 .0.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

/// The forwarding server after a handover: it accepts nothing new, and finishes the forwards that were
/// under way, which the full server did not wait for past its short grace.
pub struct Draining(Option<JoinHandle<std::io::Result<()>>>);

impl Draining {
    /// Every forward ended within the handover's grace.
    pub(super) fn done() -> Draining {
        Draining(None)
    }

    /// `served`, the forwarding server's task, still finishing forwards; it was asked to stop.
    pub(super) fn under_way(served: JoinHandle<std::io::Result<()>>) -> Draining {
        Draining(Some(served))
    }

    /// Returns once the forwards under way at the handover have ended: a node asked to stop waits for them
    /// before it exits, else they would be cut with it. The forwarding server ends them itself once
    /// [`SHUTDOWN_GRACE_SECS`] have passed since the handover; the bound here only keeps a stuck task from
    /// holding the exit.
    pub async fn finish(self) {
        let Some(served) = self.0 else {
            return;
        };
        if served.is_finished() {
            return;
        }
        tracing::info!("waiting for the forwards still in flight since the handover");
        let bound = Duration::from_secs(SHUTDOWN_GRACE_SECS + 1);
        if tokio::time::timeout(bound, served).await.is_err() {
            tracing::warn!("forwards from before the handover were still in flight at the exit");
        }
    }
}
