//! The threads of the actors that run beside the HTTP workers (the capacity scheduler, the webhook
//! dispatcher). Nothing stops an actix arbiter's thread but its `stop`: its own thread keeps a handle to it,
//! so it outlives every `Arbiter` value, and with it the actors' clones of the store.

use actix::Arbiter;

/// Named arbiter threads, stopped when dropped: a server whose runtime ends before it ran to its stop (a
/// test's server when the test returns) leaves no thread holding its store open (a PostgreSQL store's
/// connections stayed open to the end of the process).
pub(crate) struct ActorThreads(Vec<(&'static str, Arbiter)>);

impl ActorThreads {
    pub(crate) fn new(threads: Vec<(&'static str, Arbiter)>) -> ActorThreads {
        ActorThreads(threads)
    }

    /// Stops each thread and waits for it to end, so the actors' clones of the store are gone after.
    pub(crate) fn stop_and_join(mut self) {
        for (name, thread) in std::mem::take(&mut self.0) {
            thread.stop();
            if thread.join().is_err() {
                tracing::error!(thread = name, "an actor thread panicked while stopping");
            }
        }
    }
}

impl Drop for ActorThreads {
    fn drop(&mut self) {
        for (_, thread) in &self.0 {
            thread.stop();
        }
    }
}
