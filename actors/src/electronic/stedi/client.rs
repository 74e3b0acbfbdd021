//! Stedi's HTTP API: one POST per inquiry with the API key in `Authorization`, answers read as the
//! OpenAPI declares them. Throttling (429) and server errors (5xx) and dropped connections are retried
//! after the configured backoff, within that bound; a timeout ends the attempt and the channel for the
//! request; other 4xx answers are final. The API key and the inquiry's contents never reach the logs.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::bodies::ExceptionBody;

/// How long one attempt may take and how long to wait before each retry.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Whole-attempt timeout.
    pub attempt_timeout: Duration,
    /// Waits before the second, third, ... attempt; its length bounds the retries.
    pub backoff: Vec<Duration>,
}

/// Why an inquiry brought no answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StediError {
    /// An attempt outlasted the timeout.
    #[error("timed out")]
    Timeout,
    /// 429 or 5xx (or no connection) on every attempt.
    #[error("unavailable after {attempts} attempts (last: {last})")]
    Unavailable {
        /// Attempts made.
        attempts: usize,
        /// The last status or transport failure.
        last: String,
    },
    /// A final 4xx: validation, authorization, unknown payer.
    #[error("refused with {status}: {code}")]
    Refused {
        /// HTTP status.
        status: u16,
        /// Stedi's error `code`, else its message.
        code: String,
    },
    /// A 2xx whose body is not the documented shape.
    #[error("unreadable answer")]
    Unreadable,
}

impl StediError {
    /// What went wrong, without Stedi's words: a refusal's message can quote the inquiry's values.
    pub fn kind(&self) -> &'static str {
        match self {
            StediError::Timeout => "timed out",
            StediError::Unavailable { .. } => "unavailable",
            StediError::Refused { .. } => "refused by the clearinghouse",
            StediError::Unreadable => "unreadable answer",
        }
    }
}

/// Stedi's API at one base URL with one key.
#[derive(Clone)]
pub struct StediClient {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
    policy: RetryPolicy,
}

impl std::fmt::Debug for StediClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StediClient")
            .field("base_url", &self.base_url)
            .field("api_key", &"***")
            .finish()
    }
}

impl StediClient {
    /// A client of `base_url` (e.g. `https://healthcare.us.stedi.com/2024-04-01`).
    pub fn new(
        base_url: &str,
        api_key: &str,
        policy: RetryPolicy,
    ) -> Result<StediClient, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(policy.attempt_timeout)
            .build()?;
        Ok(StediClient {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.to_owned(),
            policy,
        })
    }

    /// POSTs `body` to `path` and reads the answer as `T`. A 4xx that carries the payer's rejection (an
    /// eligibility check's AAA `errors`, a claim status `errorResponse`) is an answer too: the rejection
    /// is the mapping's to read.
    pub async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T, StediError> {
        let url = format!("{}{path}", self.base_url);
        let attempts = self.policy.backoff.len() + 1;
        let mut last = String::new();
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(self.policy.backoff[attempt - 1]).await;
            }
            let sent = self
                .http
                .post(&url)
                .header(reqwest::header::AUTHORIZATION, &self.api_key)
                .json(body)
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                Err(e) if e.is_timeout() => return Err(StediError::Timeout),
                Err(e) => {
                    tracing::warn!(attempt, error = %e, "clearinghouse unreachable");
                    last = "no connection".to_owned();
                    continue;
                }
            };
            let status = response.status();
            let text = match response.text().await {
                Ok(text) => text,
                Err(e) if e.is_timeout() => return Err(StediError::Timeout),
                Err(_) => {
                    last = format!("{} with an unreadable body", status.as_u16());
                    continue;
                }
            };
            if status.is_success() {
                return serde_json::from_str(&text).map_err(|_| StediError::Unreadable);
            }
            if status.as_u16() == 429 || status.is_server_error() {
                tracing::warn!(
                    attempt,
                    status = status.as_u16(),
                    "clearinghouse busy or failing"
                );
                last = status.as_u16().to_string();
                continue;
            }
            if carries_rejection(&text) {
                return serde_json::from_str(&text).map_err(|_| StediError::Unreadable);
            }
            let exception: ExceptionBody = serde_json::from_str(&text).unwrap_or_default();
            tracing::warn!(
                status = status.as_u16(),
                code = exception.code.as_deref().unwrap_or_default(),
                "clearinghouse refused the inquiry"
            );
            return Err(StediError::Refused {
                status: status.as_u16(),
                code: exception.code.unwrap_or(exception.message),
            });
        }
        Err(StediError::Unavailable { attempts, last })
    }
}

/// Whether a 4xx body is the payer's answer (AAA rejections) rather than Stedi's exception body.
fn carries_rejection(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| {
        v.get("errors").is_some_and(serde_json::Value::is_array) || v.get("errorResponse").is_some()
    })
}
