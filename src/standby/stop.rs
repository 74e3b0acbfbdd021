//! SIGTERM and SIGINT for a node on a shared database, caught from its first moment standing by: the
//! forwarding server and the full server each handle signals only while they run, and a stop asked for
//! while one hands over to the other (the lease just taken, the store opening) must not be lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::Notify;

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
