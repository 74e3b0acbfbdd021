//! What every handler shares.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use switchboard_actors::Clock;
use switchboard_storage::Store;

use crate::auth::TokenIssuer;
use crate::configuration::Settings;

/// Application state, handed to handlers as `web::Data<AppState>`.
pub struct AppState {
    /// The durable store.
    pub store: Store,
    /// The one clock.
    pub clock: Clock,
    /// The settings the server started with.
    pub settings: Arc<Settings>,
    /// Bearer-token issuer and verifier.
    pub tokens: TokenIssuer,
    ready: AtomicBool,
}

impl AppState {
    /// State that is not yet ready (see [`AppState::mark_ready`]).
    pub fn new(
        store: Store,
        clock: Clock,
        settings: Arc<Settings>,
        tokens: TokenIssuer,
    ) -> AppState {
        AppState {
            store,
            clock,
            settings,
            tokens,
            ready: AtomicBool::new(false),
        }
    }

    /// Whether start-up recovery has finished.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Declares start-up recovery finished; `/readyz` turns 200 and the API opens.
    pub fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// The product word that names headers and the realm.
    pub fn product_word(&self) -> &str {
        &self.settings.server.product_word
    }
}
