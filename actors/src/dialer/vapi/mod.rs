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

use chrono::Duration;
use futures::FutureExt;
use switchboard_storage::CallId;

use self::client::{create_body, VapiClient, SEARCH_WINDOW_HOURS};
use self::mapping::call_state;
use super::platform::{PlatformAdapter, PlatformCallRequest, PlatformCallState, PlatformFuture};
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
}

impl VapiAdapter {
    /// An adapter for `config`.
    pub fn new(config: &VapiConfig) -> Result<VapiAdapter, reqwest::Error> {
        Ok(VapiAdapter {
            client: VapiClient::new(&config.base_url, &config.api_key)?,
            config: config.clone(),
        })
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
        Some(
            async move {
                let call = client.get_call(&id).await?;
                Ok(call_state(&call, Clock::system().now()))
            }
            .boxed(),
        )
    }
}
