//! The webhook outbox's signal, and the first rounds it must not hand out yet.
//!
//! sled makes a write readable before the flush that makes it durable, and no webhook may announce a
//! state that a crash could still undo. So a terminal write that enqueues a first round holds its request
//! here from before it is queued until its group's flush has settled: the outbox page passes over held
//! requests, and the hold's end wakes the dispatcher, which then finds the round. On an engine whose
//! commits are durable when they return, a hold ends with its commit, so the page sees what any reader
//! sees.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::RequestId;

/// The outbox's wake-up and its held requests.
#[derive(Default)]
pub(crate) struct Outbox {
    wake: Notify,
    /// Held requests, each with its count of holds (a request finished twice at once holds twice).
    held: Mutex<HashMap<RequestId, usize>>,
}

/// A request's first round held back from the outbox page until this is dropped, which the write that
/// queues it does once its flush has settled (or its group failed, and nothing was queued).
pub(crate) struct Hold {
    outbox: Arc<Outbox>,
    request_id: RequestId,
}

impl Outbox {
    /// Wakes the dispatcher: a round was queued, or may now be handed out.
    pub(crate) fn signal(&self) {
        self.wake.notify_one();
    }

    /// Waits for the next [`Outbox::signal`] (one sent while nobody waited is kept).
    pub(crate) async fn signalled(&self) {
        self.wake.notified().await;
    }

    /// Holds `request_id`'s first round back until the hold is dropped.
    pub(crate) fn hold(self: &Arc<Self>, request_id: &RequestId) -> Hold {
        *self.lock().entry(request_id.clone()).or_default() += 1;
        Hold {
            outbox: Arc::clone(self),
            request_id: request_id.clone(),
        }
    }

    /// Whether a request is held: as of this call (a hold that ends later, after its flush failed, is
    /// still seen, since the caller checks for a failed flush after this call), or now (a hold taken
    /// during the page, whose round sled may make readable before it is durable). The copy is of a set
    /// that is nearly always empty; no lock is held across the page's reads.
    pub(crate) fn held(self: &Arc<Self>) -> impl Fn(&RequestId) -> bool {
        let held = self.lock();
        let snapshot: Option<HashSet<RequestId>> =
            (!held.is_empty()).then(|| held.keys().cloned().collect());
        drop(held);
        let outbox = Arc::clone(self);
        move |id| {
            snapshot.as_ref().is_some_and(|held| held.contains(id))
                || outbox.lock().contains_key(id)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, usize>> {
        // A panic while holding this lock leaves the map whole (each change is one insert or removal).
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        {
            let mut held = self.outbox.lock();
            if let Some(count) = held.get_mut(&self.request_id) {
                *count -= 1;
                if *count == 0 {
                    held.remove(&self.request_id);
                }
            }
        }
        self.outbox.signal();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_held_until_its_last_hold_ends() {
        let outbox = Arc::new(Outbox::default());
        let id = RequestId::from("r1".to_owned());
        let first = outbox.hold(&id);
        let second = outbox.hold(&id);
        assert!(outbox.held()(&id));
        assert!(!outbox.held()(&RequestId::from("r2".to_owned())));
        drop(first);
        assert!(outbox.held()(&id), "one hold is left");
        drop(second);
        assert!(!outbox.held()(&id));
    }

    /// A page's check, taken before the page reads the queue, also sees a hold taken while it reads: the
    /// terminal write that took it may already be readable (sled) before its flush.
    #[test]
    fn a_check_taken_before_a_hold_sees_it() {
        let outbox = Arc::new(Outbox::default());
        let id = RequestId::from("r1".to_owned());
        let held = outbox.held();
        let hold = outbox.hold(&id);
        assert!(held(&id));
        drop(hold);
        assert!(!held(&id));
    }

    #[tokio::test]
    async fn a_hold_ending_wakes_the_dispatcher() {
        let outbox = Arc::new(Outbox::default());
        let hold = outbox.hold(&RequestId::from("r1".to_owned()));
        drop(hold);
        // The signal was sent while nobody waited: it is kept for the next wait.
        tokio::time::timeout(std::time::Duration::from_secs(5), outbox.signalled())
            .await
            .expect("the hold's end signals the outbox");
    }
}
