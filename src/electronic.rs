//! The production electronic channel chosen by `[electronic] kind`. Sandbox requests always use the
//! sandbox generator's channel, whatever is configured here.

use std::sync::Arc;

use anyhow::Context;
use switchboard_actors::electronic::simulated::SimulatedElectronic;
use switchboard_actors::electronic::stedi::{RetryPolicy, StediChannel, StediClient};
use switchboard_actors::electronic::{ElectronicChannel, NoElectronicChannel};

use crate::configuration::{ElectronicSettings, Settings};

/// The channel production requests try before a call.
pub fn channel(settings: &Settings) -> anyhow::Result<Arc<dyn ElectronicChannel>> {
    Ok(match &settings.electronic {
        ElectronicSettings::Simulated => Arc::new(SimulatedElectronic),
        ElectronicSettings::None => Arc::new(NoElectronicChannel),
        ElectronicSettings::Stedi(stedi) => {
            let client = StediClient::new(
                stedi.base_url.as_str(),
                stedi.api_key.expose(),
                RetryPolicy {
                    attempt_timeout: stedi.timeout,
                    backoff: stedi.retry_backoff.clone(),
                },
            )
            .context("cannot build the clearinghouse HTTP client")?;
            Arc::new(StediChannel::new(client))
        }
    })
}
