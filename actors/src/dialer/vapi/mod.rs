//! The Vapi adapter (`[dialer] kind = "vapi"`): each attempt becomes one Vapi phone call (`POST /call`)
//! placed with the operator's assistant and number. The call carries the request's inputs and the step's
//! questions as template variables, the step's extraction as a per-call
//! `assistantOverrides.analysisPlan.structuredDataPlan`, this server's event URL with its `x-vapi-secret`
//! header as `assistantOverrides.server`, and Switchboard's ids in `assistantOverrides.metadata`. Vapi's
//! server messages arrive at `POST /dialers/vapi/events`; the shared platform driver does the rest
//! (intent marker, stored call id, events once per call and type, polling `GET /call/{id}`, recordings).
//!
//! `types.rs` holds Vapi's wire shapes, `client.rs` the REST calls and the create body, `extraction.rs` the
//! structured-data schema, `events.rs` the server messages and the secret check, `mapping.rs` the call's
//! state in the driver's terms.

pub mod client;
pub mod events;
pub mod extraction;
pub mod mapping;
pub mod types;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use chrono::Duration;
use futures::FutureExt;
use switchboard_storage::CallId;
use tokio::sync::OnceCell;

use self::client::{create_body, VapiClient, SEARCH_WINDOW_HOURS};
use self::mapping::call_state;
use super::platform::{
    CallResult, PlatformAdapter, PlatformCallRequest, PlatformCallState, PlatformError,
    PlatformFuture,
};
use crate::Clock;

/// `[dialer.vapi]`, plus the per-call server URL.
#[derive(Clone, Debug)]
pub struct VapiConfig {
    /// Bearer key of Vapi's API.
    pub api_key: String,
    /// `https://api.vapi.ai`, or a local fake in tests.
    pub base_url: String,
    /// The operator's payer-calling assistant.
    pub assistant_id: String,
    /// The operator's Vapi number.
    pub phone_number_id: String,
    /// Sent as `x-vapi-secret` with every server message; events must carry it.
    pub server_secret: String,
    /// `{server.public_url}/dialers/vapi/events`.
    pub server_url: String,
}

/// Vapi as a [`PlatformAdapter`].
#[derive(Clone)]
pub struct VapiAdapter {
    client: VapiClient,
    config: VapiConfig,
    /// The operator's number behind `phone_number_id`, once looked up.
    caller: Arc<OnceCell<String>>,
}

impl VapiAdapter {
    /// An adapter for `config`.
    pub fn new(config: &VapiConfig) -> Result<VapiAdapter, reqwest::Error> {
        Ok(VapiAdapter {
            client: VapiClient::new(&config.base_url, &config.api_key)?,
            config: config.clone(),
            caller: Arc::default(),
        })
    }
}

/// The caller number of a call read with `GET /call/{id}`. Vapi fills the call's `phoneNumber` only for a
/// number given inline, and Switchboard calls from `phoneNumberId`: only the end-of-call report carries the
/// number. A call settled by a read (events lost, or after a restart) takes it from the phone-number
/// resource, looked up once; if that fails, the call just has no caller number.
async fn with_caller(
    mut state: PlatformCallState,
    client: &VapiClient,
    phone_number_id: &str,
    caller: &OnceCell<String>,
) -> PlatformCallState {
    if let PlatformCallState::Ended(result) = &mut state {
        if let CallResult::Platform(ended) = result.as_mut() {
            if ended.from_number.is_none() {
                ended.from_number = caller_number(client, phone_number_id, caller).await;
            }
        }
    }
    state
}

async fn caller_number(
    client: &VapiClient,
    phone_number_id: &str,
    caller: &OnceCell<String>,
) -> Option<String> {
    let looked_up = caller
        .get_or_try_init(|| async {
            let number = client.get_phone_number(phone_number_id).await?.number;
            number.ok_or_else(|| PlatformError::Rejected("the phone number has no number".into()))
        })
        .await;
    match looked_up {
        Ok(number) => Some(number.clone()),
        Err(e) => {
            tracing::warn!(error = %e, "cannot look up the Vapi caller number");
            None
        }
    }
}

impl PlatformAdapter for VapiAdapter {
    fn name(&self) -> &'static str {
        "vapi"
    }

    fn create(&self, request: &PlatformCallRequest) -> PlatformFuture<String> {
        let client = self.client.clone();
        let body = create_body(&self.config, request);
        async move { client.create_call(&body).await.map(|call| call.id) }.boxed()
    }

    fn find(&self, call_id: &CallId) -> PlatformFuture<Option<String>> {
        let client = self.client.clone();
        let config = self.config.clone();
        let call_id = call_id.clone();
        // Vapi stamps calls with its own time: the window is measured on the machine's wall clock, never on
        // Switchboard's (possibly manual) clock.
        let since = Clock::system().now() - Duration::hours(SEARCH_WINDOW_HOURS);
        async move {
            let found = client
                .find_call(
                    &config.assistant_id,
                    &config.phone_number_id,
                    call_id.as_str(),
                    since,
                )
                .await?;
            Ok(found.map(|call| call.id))
        }
        .boxed()
    }

    fn read(&self, platform_call_id: &str) -> Option<PlatformFuture<PlatformCallState>> {
        let client = self.client.clone();
        let id = platform_call_id.to_owned();
        let phone_number_id = self.config.phone_number_id.clone();
        let caller = Arc::clone(&self.caller);
        Some(
            async move {
                let call = client.get_call(&id).await?;
                let state = call_state(&call, Clock::system().now());
                Ok(with_caller(state, &client, &phone_number_id, &caller).await)
            }
            .boxed(),
        )
    }
}
