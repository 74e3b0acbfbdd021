//! Where the node that holds the orchestrator lease is reached, as the lease said at its last reading.

use std::sync::{Arc, RwLock};

/// Shared between the lease thread, which sets it every second, and the forwarding handlers.
#[derive(Clone, Default)]
pub struct Route(Arc<RwLock<Option<url::Url>>>);

impl Route {
    /// The holder's `node_url`; `None` while no node holds the lease, or its holder named no address.
    pub fn current(&self) -> Option<url::Url> {
        self.0.read().expect("route lock").clone()
    }

    /// Records what the lease says now.
    pub fn set(&self, holder: Option<url::Url>) {
        *self.0.write().expect("route lock") = holder;
    }
}
