//! Vapi's REST API as Switchboard uses it: `POST /call` to place a call, `GET /call/{id}` to read one, and
//! `GET /call` to find a call by Switchboard's own call id after a crash. Bearer auth with the API key.
//!
//! Vapi's list endpoint filters by `assistantId`, `phoneNumberId` and creation time, not by metadata. A
//! call that may have been created before Switchboard stopped is therefore searched among the calls of
//! the configured assistant and number created since the attempt began (newest first, page by page,
//! bounded), and matched on `assistantOverrides.metadata.switchboardCallId`.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::extraction::{structured_data_plan, variable_values};
use super::types::{
    AnalysisPlan, AssistantOverrides, Call, CreateCallDto, CreateCustomerDto, Server,
    CALL_ID_METADATA_KEY, SECRET_HEADER,
};
use crate::dialer::CallJob;

/// Calls per page of `GET /call` (Vapi's default and largest documented page).
const PAGE_SIZE: usize = 100;
/// Pages searched before giving up on finding a call: 1,000 calls created within one attempt's window.
const MAX_PAGES: usize = 10;

/// The `[dialer.vapi]` values the client needs.
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
    /// Sent as `x-vapi-secret` on every server message; events must carry it.
    pub server_secret: String,
    /// `{server.public_url}/dialers/vapi/events`.
    pub events_url: String,
}

/// What went wrong talking to Vapi.
#[derive(Debug, thiserror::Error)]
pub enum VapiError {
    /// No answer, or a broken connection.
    #[error("Vapi request failed: {0}")]
    Transport(#[from] reqwest::Error),
    /// Vapi answered with an error status.
    #[error("Vapi answered {status}")]
    Status {
        /// The HTTP status.
        status: u16,
    },
    /// Vapi's answer was not the documented shape.
    #[error("Vapi's answer did not decode: {0}")]
    Decode(#[from] serde_json::Error),
}

impl VapiError {
    /// Whether trying again later may succeed (transport failures, 429 and 5xx).
    pub fn is_transient(&self) -> bool {
        match self {
            VapiError::Transport(_) => true,
            VapiError::Status { status } => *status == 429 || *status >= 500,
            VapiError::Decode(_) => false,
        }
    }
}

/// A client of one Vapi account.
#[derive(Clone, Debug)]
pub struct VapiClient {
    http: reqwest::Client,
    config: VapiConfig,
}

impl VapiClient {
    /// A client for `config`.
    pub fn new(config: VapiConfig) -> Result<VapiClient, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(VapiClient { http, config })
    }

    /// The configuration.
    pub fn config(&self) -> &VapiConfig {
        &self.config
    }

    /// The `POST /call` body for one attempt.
    pub fn create_body(&self, job: &CallJob) -> CreateCallDto {
        let config = &self.config;
        let schema = &job.schema.definition;
        // The call id finds the call again after a crash; request and attempt help an operator reading
        // Vapi's dashboard.
        let metadata = BTreeMap::from([
            (
                CALL_ID_METADATA_KEY.to_string(),
                Value::String(job.call_id.clone()),
            ),
            (
                "switchboardRequestId".to_string(),
                Value::String(job.request_id.clone()),
            ),
            ("switchboardAttempt".to_string(), Value::from(job.attempt)),
        ]);
        CreateCallDto {
            assistant_id: config.assistant_id.clone(),
            phone_number_id: config.phone_number_id.clone(),
            customer: CreateCustomerDto {
                number: Some(e164(&job.number)),
                name: job.inputs.get("payerName").cloned(),
            },
            assistant_overrides: AssistantOverrides {
                variable_values: variable_values(schema, &job.inputs),
                analysis_plan: Some(AnalysisPlan {
                    structured_data_plan: Some(structured_data_plan(schema)),
                }),
                server: Some(Server {
                    url: config.events_url.clone(),
                    headers: BTreeMap::from([(
                        SECRET_HEADER.to_string(),
                        config.server_secret.clone(),
                    )]),
                }),
                server_messages: vec![
                    "status-update".to_string(),
                    "end-of-call-report".to_string(),
                ],
                metadata,
            },
            name: Some(format!("switchboard {}", job.call_id)),
        }
    }

    /// `POST /call`: places the call.
    pub async fn create_call(&self, body: &CreateCallDto) -> Result<Call, VapiError> {
        let response = self
            .http
            .post(self.url("/call"))
            .bearer_auth(&self.config.api_key)
            .json(body)
            .send()
            .await?;
        decode(response).await
    }

    /// `GET /call/{id}`; `None` when Vapi does not know the id.
    pub async fn get_call(&self, id: &str) -> Result<Option<Call>, VapiError> {
        let response = self
            .http
            .get(self.url(&format!("/call/{id}")))
            .bearer_auth(&self.config.api_key)
            .send()
            .await?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        decode(response).await.map(Some)
    }

    /// The call tagged with `call_id`, searched among the calls of the configured assistant and number
    /// (created at or after `since`, when given), newest first.
    pub async fn find_call(
        &self,
        call_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<Option<Call>, VapiError> {
        let since = since.map(|s| s.to_rfc3339_opts(SecondsFormat::Millis, true));
        let mut before: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut query = vec![
                ("assistantId", self.config.assistant_id.clone()),
                ("phoneNumberId", self.config.phone_number_id.clone()),
                ("limit", PAGE_SIZE.to_string()),
            ];
            if let Some(since) = &since {
                query.push(("createdAtGe", since.clone()));
            }
            if let Some(before) = &before {
                query.push(("createdAtLt", before.clone()));
            }
            let response = self
                .http
                .get(self.url("/call"))
                .bearer_auth(&self.config.api_key)
                .query(&query)
                .send()
                .await?;
            let page: Vec<Call> = decode(response).await?;
            if let Some(found) = page
                .iter()
                .find(|c| c.switchboard_call_id() == Some(call_id))
            {
                return Ok(Some(found.clone()));
            }
            if page.len() < PAGE_SIZE {
                return Ok(None);
            }
            // ISO 8601 instants in one format order as text: the oldest of the page bounds the next.
            before = page.iter().filter_map(|c| c.created_at.clone()).min();
            if before.is_none() {
                return Ok(None);
            }
        }
        Ok(None)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base_url.trim_end_matches('/'))
    }
}

/// A ten-digit US number in E.164; a number already in E.164 stays as it is.
pub fn e164(number: &str) -> String {
    match number.starts_with('+') {
        true => number.to_string(),
        false => format!("+1{number}"),
    }
}

async fn decode<T: DeserializeOwned>(response: reqwest::Response) -> Result<T, VapiError> {
    let status = response.status();
    if !status.is_success() {
        return Err(VapiError::Status {
            status: status.as_u16(),
        });
    }
    let bytes = response.bytes().await?;
    Ok(serde_json::from_slice(&bytes)?)
}
