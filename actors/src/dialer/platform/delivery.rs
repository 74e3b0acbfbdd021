//! Platform events into the store: each event is applied once per call and event type, flushed, and only
//! then acknowledged and signalled to the waiting call, so a platform's retry after a crash is harmless and
//! a duplicate changes nothing.

use switchboard_storage::{CallId, RequestId, StorageError};

use super::driver::{find_call, Inner, PlatformDialer};
use super::{PlatformCallState, PlatformEvent};

/// What became of a delivered event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Persisted (and the waiting call woken).
    Applied,
    /// This call already had an event of this type, or has ended: nothing changed.
    Duplicate,
    /// No call of this platform matches: nothing changed.
    UnknownCall,
}

impl PlatformDialer {
    /// Applies an authenticated event: persisted once per call and event type (flushed before this
    /// returns, so the platform's retry after a crash is harmless), then the waiting call is woken.
    pub async fn deliver(&self, event: PlatformEvent) -> Result<Delivery, StorageError> {
        let inner = &self.inner;
        let request_id = match event
            .request_id
            .clone()
            .or_else(|| inner.waiting_request(&event.call_id))
        {
            Some(id) => Some(id),
            None => inner.find_request(&event.call_id).await?,
        };
        let Some(request_id) = request_id else {
            return Ok(Delivery::UnknownCall);
        };
        if inner.store.fetch_request(&request_id).await?.is_none() {
            return Ok(Delivery::UnknownCall);
        }
        let platform = inner.adapter.name();
        let result = match &event.state {
            PlatformCallState::Ended(result) => serde_json::to_value(result).ok(),
            PlatformCallState::Live => None,
        };
        let (call_id, platform_call_id, event_type) = (
            event.call_id.clone(),
            event.platform_call_id.clone(),
            event.event_type.clone(),
        );
        let (_, verdict) = inner
            .store
            .commit_change(&request_id, move |record| {
                let Some(call) = find_call(record, &call_id) else {
                    return Delivery::UnknownCall;
                };
                let Some(stored) = call.platform.as_mut().filter(|p| p.platform == platform) else {
                    return Delivery::UnknownCall;
                };
                if stored
                    .platform_call_id
                    .as_ref()
                    .is_some_and(|id| *id != platform_call_id)
                {
                    return Delivery::UnknownCall;
                }
                if call.outcome.is_some() || stored.events.contains(&event_type) {
                    return Delivery::Duplicate;
                }
                stored.events.push(event_type.clone());
                stored
                    .platform_call_id
                    .get_or_insert_with(|| platform_call_id.clone());
                if stored.result.is_none() {
                    stored.result = result.clone();
                }
                Delivery::Applied
            })
            .await?;
        if verdict == Delivery::Applied {
            inner.wake(&event.call_id);
        }
        Ok(verdict)
    }
}

impl Inner {
    pub(super) fn waiting_request(&self, call_id: &CallId) -> Option<RequestId> {
        let waiters = self.waiters.lock().expect("waiters lock");
        waiters.get(call_id).map(|w| w.request_id.clone())
    }

    pub(super) fn wake(&self, call_id: &CallId) {
        let waiters = self.waiters.lock().expect("waiters lock");
        if let Some(waiter) = waiters.get(call_id) {
            // `notify_one` keeps a permit when nobody waits yet, so a wake between two checks is not lost.
            waiter.wake.notify_one();
        }
    }

    /// The running request holding `call_id`, for events that do not name their request (a voice agent's
    /// callback arriving before its call re-attached after a restart).
    pub(super) async fn find_request(
        &self,
        call_id: &CallId,
    ) -> Result<Option<RequestId>, StorageError> {
        for id in self.store.active_request_ids().await? {
            if let Some(record) = self.store.fetch_request(&id).await? {
                let holds = record
                    .run
                    .as_ref()
                    .is_some_and(|run| run.calls.iter().any(|c| c.id == *call_id));
                if holds {
                    return Ok(Some(id));
                }
            }
        }
        Ok(None)
    }
}
