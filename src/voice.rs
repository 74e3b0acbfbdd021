//! Which dialers place production calls, built from `[dialer]`: `kind` for accounts that name none, and
//! each other kind an account may name (`[[accounts]] dialer`): the payer simulator, or the platform
//! driver over the adapter of the kind (`http`, `retell`, `vapi`). Real calls of every platform share
//! one set of limits. The event routes reach each platform's driver through [`VoiceDialers`].

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::Context;
use switchboard_actors::dialer::http::HttpAgent;
use switchboard_actors::dialer::platform::{PlatformAdapter, PlatformDialer, PlatformOptions};
use switchboard_actors::dialer::retell::{RetellAdapter, RetellConfig};
use switchboard_actors::dialer::simulated::SimulatedPayerDialer;
use switchboard_actors::dialer::vapi::{VapiAdapter, VapiConfig};
use switchboard_actors::orchestration::limits::CallLimits;
use switchboard_actors::orchestration::{ProductionDialer, ProductionDialers};
use switchboard_actors::Metrics;
use switchboard_storage::{CallingHoursRecord, Store};

use crate::configuration::{DialerSettings, Settings};

/// The production dialers' parts the HTTP layer needs.
#[derive(Clone, Default)]
pub struct VoiceDialers {
    /// The voice agent, when a dialer is `http`: its outcome callbacks are verified with its secret.
    pub agent: Option<HttpAgent>,
    /// The platform driver of `[dialer] kind`, for every kind but `simulated`.
    pub platform: Option<PlatformDialer>,
    /// Every platform driver in use, by kind (`http`, `retell`, `vapi`): each platform's events are
    /// delivered to its own.
    pub platforms: BTreeMap<&'static str, PlatformDialer>,
    /// The limits of real calls (slots, calling hours), read by the console.
    pub limits: Option<Arc<CallLimits>>,
}

/// The production dialers and their HTTP-facing parts.
pub fn production_dialers(
    settings: &Settings,
    store: &Store,
    metrics: &Arc<Metrics>,
) -> anyhow::Result<(ProductionDialers, VoiceDialers)> {
    let mut voice = VoiceDialers::default();
    let calls = &settings.calls;
    if settings
        .dialers
        .iter()
        .any(DialerSettings::places_real_calls)
    {
        voice.limits = Some(Arc::new(CallLimits::new(
            calls.max_concurrent_calls,
            CallingHoursRecord {
                start_minute: calls.calling_hours.0,
                end_minute: calls.calling_hours.1,
            },
            Arc::clone(metrics),
        )));
    }
    let mut dialers: Option<ProductionDialers> = None;
    for dialer_settings in &settings.dialers {
        let kind = dialer_settings.kind().as_str();
        let dialer = build(dialer_settings, settings, store, &mut voice)?;
        if dialer_settings.kind() == settings.dialer.kind() {
            voice.platform = voice.platforms.get(kind).cloned();
        }
        dialers = Some(match dialers {
            None => ProductionDialers::single(kind, dialer),
            Some(dialers) => dialers.with(kind, dialer),
        });
    }
    let dialers = dialers.expect("the default dialer is always among the dialers in use");
    Ok((dialers, voice))
}

/// One production dialer; a platform's driver is also recorded in `voice` for its event route.
fn build(
    dialer: &DialerSettings,
    settings: &Settings,
    store: &Store,
    voice: &mut VoiceDialers,
) -> anyhow::Result<ProductionDialer> {
    let adapter: Arc<dyn PlatformAdapter> = match dialer {
        DialerSettings::Simulated => {
            return Ok(ProductionDialer {
                dialer: Arc::new(SimulatedPayerDialer::new()),
                real_calls: false,
            })
        }
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
        },
    )
    .context("cannot build the platform HTTP client")?;
    voice
        .platforms
        .insert(dialer.kind().as_str(), platform.clone());
    Ok(ProductionDialer {
        dialer: Arc::new(platform),
        real_calls: true,
    })
}

/// `{server.public_url}/dialers/{platform}/events`.
pub fn event_url(settings: &Settings, platform: &str) -> String {
    format!(
        "{}/dialers/{platform}/events",
        settings.server.public_url.as_str().trim_end_matches('/')
    )
}
