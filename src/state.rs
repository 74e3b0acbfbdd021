//! What every handler shares.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use actix::Addr;
use switchboard_actors::orchestration::{DueWork, Orchestrator};
use switchboard_actors::scheduler::Scheduler;
use switchboard_actors::webhooks::WebhookDispatcher;
use switchboard_actors::{Clock, Metrics};
use switchboard_storage::{StorageError, Store};

use crate::auth::TokenIssuer;
use crate::configuration::Settings;
use crate::payers::PayerDirectory;
use crate::recordings::RecordingLinks;

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
    /// Checks API secrets on exchanges, keeping the verdicts.
    pub secret_checks: crate::auth::SecretChecks,
    /// Books new requests; the only writer of requests.
    pub scheduler: Scheduler,
    /// Runs requests once their day has come.
    pub orchestrator: Addr<Orchestrator>,
    /// Tells the orchestrator that requests booked for today were stored.
    pub due_work: DueWork,
    /// The production dialer's HTTP-facing parts: platform events and agent outcomes are handed to it.
    pub voice: crate::voice::VoiceDialers,
    /// Delivers webhooks (its address serves fault injection).
    pub dispatcher: Addr<WebhookDispatcher>,
    /// Key of page tokens (and other server-signed values).
    pub signing_key: Vec<u8>,
    /// Signs recording download links.
    pub links: RecordingLinks,
    /// Prometheus metrics, shared with the actors.
    pub metrics: Arc<Metrics>,
    /// Single-read bodies of unchanged requests, kept serialized.
    pub request_bodies: crate::routes::requests::bodies::RequestBodies,
    directory: RwLock<Arc<PayerDirectory>>,
    ready: AtomicBool,
    /// On PostgreSQL: the key that proves a client's address forwarded by a standby node.
    pub forwarding: Option<crate::client_ip::ForwardingKey>,
    /// When this server started, on its clock: the configured admin operator exists from then on.
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// Failed sign-ins counted, and the calls they refuse.
    pub throttle: crate::throttle::Throttle,
}

impl AppState {
    /// State that is not yet ready (see [`AppState::mark_ready`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        clock: Clock,
        settings: Arc<Settings>,
        signing_key: Vec<u8>,
        scheduler: Scheduler,
        orchestrator: Addr<Orchestrator>,
        due_work: DueWork,
        voice: crate::voice::VoiceDialers,
        dispatcher: Addr<WebhookDispatcher>,
        metrics: Arc<Metrics>,
    ) -> AppState {
        AppState {
            tokens: TokenIssuer::new(&signing_key),
            secret_checks: Default::default(),
            links: RecordingLinks::new(&signing_key, settings.server.public_url.as_str()),
            started_at: clock.now(),
            throttle: crate::throttle::Throttle::new(&settings.throttle, Arc::clone(&metrics)),
            store,
            clock,
            settings,
            scheduler,
            orchestrator,
            due_work,
            voice,
            dispatcher,
            signing_key,
            metrics,
            request_bodies: Default::default(),
            directory: RwLock::new(Arc::new(PayerDirectory::new(Vec::new()))),
            ready: AtomicBool::new(false),
            forwarding: None,
        }
    }

    /// The state of a node standing by on a shared PostgreSQL database, which serves reads and runs no work:
    /// its scheduler, orchestrator and webhook dispatcher never run (a message to them fails), it has no
    /// platform drivers, and it is ready at once. Only the read routes are given it (`standby/`).
    pub fn standby(
        store: Store,
        clock: Clock,
        settings: Arc<Settings>,
        signing_key: Vec<u8>,
        metrics: Arc<Metrics>,
    ) -> AppState {
        let (orchestrator, due_work) = Orchestrator::closed();
        let state = AppState::new(
            store,
            clock.clone(),
            settings,
            signing_key,
            Scheduler::closed(clock, Arc::clone(&metrics)),
            orchestrator,
            due_work,
            crate::voice::VoiceDialers::default(),
            switchboard_actors::supervision::closed_address(),
            metrics,
        );
        state.mark_ready();
        state
    }

    /// The payer directory as last loaded from the store.
    pub fn directory(&self) -> Arc<PayerDirectory> {
        Arc::clone(&self.directory.read().expect("directory lock"))
    }

    /// Rebuilds the payer directory from the store; called at start-up and after every payer change.
    pub async fn reload_directory(&self) -> Result<(), StorageError> {
        let fresh = Arc::new(PayerDirectory::new(self.store.payers().await?));
        *self.directory.write().expect("directory lock") = fresh;
        Ok(())
    }

    /// Whether start-up recovery has finished.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Declares start-up recovery finished; `/readyz` turns 200 and the API opens.
    pub fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// How a read of `kind` by `caller` renders requests.
    pub fn read_context<'a>(
        &'a self,
        account: &'a switchboard_storage::AccountRecord,
        kind: crate::wire::ReadKind,
    ) -> crate::wire::ReadContext<'a> {
        crate::wire::ReadContext {
            account,
            lookup_source: self.lookup_source_word(),
            links: &self.links,
            now: self.clock.now(),
            kind,
            prices: self.settings.prices,
        }
    }

    /// The product word: the bearer-token realm.
    pub fn product_word(&self) -> &str {
        &self.settings.server.product_word
    }

    /// The word of the `/v1/auth` headers (`{word}-API-Key`, `{word}-API-Secret`).
    pub fn auth_header_word(&self) -> &str {
        &self.settings.server.auth_header_word
    }

    /// `payerLookup.phoneNumberSource` of the built-in directory.
    pub fn lookup_source_word(&self) -> &str {
        &self.settings.server.lookup_source_word
    }
}
