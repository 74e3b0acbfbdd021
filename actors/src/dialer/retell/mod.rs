//! The Retell AI adapter (`[dialer] kind = "retell"`): places each call with `POST /v2/create-phone-call`
//! on the operator's agent (`override_agent_id`), with the step's extraction as the per-call
//! `agent_override.agent.post_call_analysis_data` and this server's event URL as its `webhook_url`.
//! Retell's webhooks arrive at `POST /dialers/retell/events` (verified by [`events::verify`]); the shared
//! platform driver does the rest.

pub mod client;
pub mod events;
pub mod mapping;

use chrono::{DateTime, Utc};
use futures::FutureExt;
use switchboard_storage::{CallId, RequestId};

use self::client::{RetellClient, CALL_ID_KEY, REQUEST_ID_KEY};
use self::events::RetellEvent;
use self::mapping::{call_state, create_body, RetellCallSettings};
use super::platform::{
    PlatformAdapter, PlatformCallRequest, PlatformCallState, PlatformEvent, PlatformFuture,
};
use crate::Clock;

/// `[dialer.retell]`.
#[derive(Clone, Debug)]
pub struct RetellConfig {
    /// API key: bearer of the API and key of the webhook signatures.
    pub api_key: String,
    /// The API's base URL.
    pub base_url: String,
    /// The operator's payer-calling agent.
    pub agent_id: String,
    /// The E.164 number held in Retell that calls come from.
    pub from_number: String,
    /// Where this call's webhooks go: `{server.public_url}/dialers/retell/events`.
    pub webhook_url: String,
}

/// Retell as a [`PlatformAdapter`].
#[derive(Clone)]
pub struct RetellAdapter {
    client: RetellClient,
    settings: RetellCallSettings,
}

impl RetellAdapter {
    /// An adapter for `config`.
    pub fn new(config: &RetellConfig) -> Result<RetellAdapter, reqwest::Error> {
        Ok(RetellAdapter {
            client: RetellClient::new(&config.base_url, &config.api_key)?,
            settings: RetellCallSettings {
                agent_id: config.agent_id.clone(),
                from_number: config.from_number.clone(),
                webhook_url: config.webhook_url.clone(),
            },
        })
    }
}

/// A verified webhook body as a platform event, read at `now`; `None` for events that say nothing about
/// the call's end, and for calls not placed by Switchboard (no call id in the metadata).
pub fn platform_event(event: RetellEvent, now: DateTime<Utc>) -> Option<PlatformEvent> {
    if !events::CALL_EVENTS.contains(&event.event.as_str()) {
        return None;
    }
    let call_id = CallId::from(event.call.metadata_str(CALL_ID_KEY)?);
    let request_id = event.call.metadata_str(REQUEST_ID_KEY).map(RequestId::from);
    let state = call_state(&event.call, now);
    Some(PlatformEvent {
        call_id,
        request_id,
        platform_call_id: event.call.call_id.clone(),
        event_type: event.event,
        state,
    })
}

impl PlatformAdapter for RetellAdapter {
    fn name(&self) -> &'static str {
        "retell"
    }

    fn create(&self, request: &PlatformCallRequest) -> PlatformFuture<String> {
        let client = self.client.clone();
        let body = create_body(&self.settings, request);
        async move {
            client
                .create_phone_call(&body)
                .await
                .map(|call| call.call_id)
        }
        .boxed()
    }

    fn find(&self, call_id: &CallId) -> PlatformFuture<Option<String>> {
        let client = self.client.clone();
        let call_id = call_id.clone();
        async move {
            Ok(client
                .find_by_call_id(call_id.as_str())
                .await?
                .map(|call| call.call_id))
        }
        .boxed()
    }

    fn read(&self, platform_call_id: &str) -> Option<PlatformFuture<PlatformCallState>> {
        let client = self.client.clone();
        let id = platform_call_id.to_owned();
        Some(
            async move {
                client
                    .get_call(&id)
                    .await
                    .map(|call| call_state(&call, Clock::system().now()))
            }
            .boxed(),
        )
    }
}
