//! Which dialer places production calls, built from `[dialer]`: the payer simulator, or the platform
//! driver over the adapter of `kind` (`http`, `retell`, `vapi`), with the limits of real calls. The event
//! routes reach the same driver through [`VoiceDialers`].

use std::sync::Arc;

use anyhow::Context;
use switchboard_actors::dialer::http::HttpAgent;
use switchboard_actors::dialer::platform::{PlatformAdapter, PlatformDialer, PlatformOptions};
use switchboard_actors::dialer::retell::{RetellAdapter, RetellConfig};
use switchboard_actors::dialer::simulated::SimulatedPayerDialer;
use switchboard_actors::dialer::vapi::{VapiAdapter, VapiConfig};
use switchboard_actors::dialer::Dialer;
use switchboard_actors::orchestration::limits::CallLimits;
use switchboard_actors::Metrics;
use switchboard_storage::{CallingHoursRecord, Store};

use crate::configuration::{DialerSettings, Settings};

/// The production dialer's parts the HTTP layer needs.
#[derive(Clone, Default)]
pub struct VoiceDialers {
    /// The voice agent, when `kind = "http"`: its outcome callbacks are verified with its secret.
    pub agent: Option<HttpAgent>,
    /// The platform driver, for every kind but `simulated`: events are delivered to it.
    pub platform: Option<PlatformDialer>,
    /// The limits of real calls (slots, calling hours), read by the console.
    pub limits: Option<Arc<CallLimits>>,
}

/// The production dialer and its HTTP-facing parts.
pub fn production_dialer(
    settings: &Settings,
    store: &Store,
    metrics: &Arc<Metrics>,
) -> anyhow::Result<(Arc<dyn Dialer>, VoiceDialers)> {
    let mut voice = VoiceDialers::default();
    let adapter: Arc<dyn PlatformAdapter> = match &settings.dialer {
        DialerSettings::Simulated => return Ok((Arc::new(SimulatedPayerDialer::new()), voice)),
        DialerSettings::Http { url, secret, .. } => {
            let agent = HttpAgent::new(url.as_str(), secret.expose())
                .context("cannot build the voice-agent HTTP client")?;
            voice.agent = Some(agent.clone());
            Arc::new(agent)
        }
        DialerSettings::Retell(retell) => Arc::new(
            RetellAdapter::new(&RetellConfig {
                api_key: retell.api_key.expose().to_owned(),
                base_url: retell.base_url.to_string(),
                agent_id: retell.agent_id.clone(),
                from_number: retell.from_number.clone(),
                webhook_url: event_url(settings, "retell"),
            })
            .context("cannot build the Retell HTTP client")?,
        ),
        DialerSettings::Vapi(vapi) => Arc::new(
            VapiAdapter::new(&VapiConfig {
                api_key: vapi.api_key.expose().to_owned(),
                base_url: vapi.base_url.to_string(),
                assistant_id: vapi.assistant_id.clone(),
                phone_number_id: vapi.phone_number_id.clone(),
                server_secret: vapi.server_secret.expose().to_owned(),
                server_url: event_url(settings, "vapi"),
            })
            .context("cannot build the Vapi HTTP client")?,
        ),
    };
    let calls = &settings.calls;
    let platform = PlatformDialer::new(
        adapter,
        store.clone(),
        PlatformOptions {
            poll_interval: calls.poll_interval,
            call_timeout: calls.call_timeout,
            recordings_dir: recordings_dir(settings),
        },
    )
    .context("cannot build the platform HTTP client")?;
    voice.platform = Some(platform.clone());
    voice.limits = Some(Arc::new(CallLimits::new(
        calls.max_concurrent_calls,
        CallingHoursRecord {
            start_minute: calls.calling_hours.0,
            end_minute: calls.calling_hours.1,
        },
        Arc::clone(metrics),
    )));
    Ok((Arc::new(platform), voice))
}

/// `{server.public_url}/dialers/{platform}/events`.
pub fn event_url(settings: &Settings, platform: &str) -> String {
    format!(
        "{}/dialers/{platform}/events",
        settings.server.public_url.as_str().trim_end_matches('/')
    )
}

/// Where downloaded recordings are kept: `{data_dir}/recordings`.
pub fn recordings_dir(settings: &Settings) -> std::path::PathBuf {
    settings.server.data_dir.join("recordings")
}
