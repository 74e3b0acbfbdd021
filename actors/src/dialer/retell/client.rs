//! Retell's REST API as Switchboard uses it, to the shapes of Retell's SDK: `POST /v2/create-phone-call`,
//! `GET /v2/get-call/{call_id}` and `POST /v3/list-calls` (filtered by our metadata), bearer-authenticated
//! with the API key. Only the fields Switchboard reads are declared; Retell sends many more.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::dialer::platform::rest::send_json;
use crate::dialer::platform::PlatformError;

/// The metadata key carrying Switchboard's call id.
pub const CALL_ID_KEY: &str = "switchboard_call_id";
/// The metadata key carrying Switchboard's request id.
pub const REQUEST_ID_KEY: &str = "switchboard_request_id";

/// A call as Retell returns it (`PhoneCallResponse`) and sends it in webhooks.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct RetellCall {
    /// Retell's id of the call.
    pub call_id: String,
    /// `registered`, `not_connected`, `ongoing`, `ended`, `error`.
    #[serde(default)]
    pub call_status: Option<String>,
    /// Why the call ended (`dial_busy`, `voicemail_reached`, `max_duration_reached`, ...).
    #[serde(default)]
    pub disconnection_reason: Option<String>,
    /// Length of the call in milliseconds, after it ended.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// When the call ended, in milliseconds since the epoch.
    #[serde(default)]
    pub end_timestamp: Option<i64>,
    /// What we sent as `metadata`.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// The caller number.
    #[serde(default)]
    pub from_number: Option<String>,
    /// The callee number.
    #[serde(default)]
    pub to_number: Option<String>,
    /// The conversation, after the call.
    #[serde(default)]
    pub transcript: Option<String>,
    /// The recording, after the call.
    #[serde(default)]
    pub recording_url: Option<String>,
    /// The post-call analysis, once `call_analyzed` has happened.
    #[serde(default)]
    pub call_analysis: Option<CallAnalysis>,
    /// What Retell charged for the call, once it ended.
    #[serde(default)]
    pub call_cost: Option<CallCost>,
}

/// `call_cost` of a call (the SDK's `CallCost`): every amount in cents. Only the total is read; the
/// per-product lines (`product_costs`) are Retell's breakdown of it.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct CallCost {
    /// "Combined cost of all individual costs in cents" (a fraction of a cent is possible).
    #[serde(default)]
    pub combined_cost: Option<f64>,
    /// The seconds billed.
    #[serde(default)]
    pub total_duration_seconds: Option<f64>,
}

impl CallCost {
    /// The combined cost in whole cents, half a cent rounded up; `None` when Retell gave no usable amount.
    pub fn cents(&self) -> Option<u64> {
        let dollars = self.combined_cost? / 100.0;
        crate::cost::usd_micros(dollars).map(crate::cost::cents_of_micros)
    }
}

/// `call_analysis` of a call.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct CallAnalysis {
    /// A summary of the call.
    #[serde(default)]
    pub call_summary: Option<String>,
    /// Whether the call reached voicemail.
    #[serde(default)]
    pub in_voicemail: Option<bool>,
    /// Whether the agent finished its task.
    #[serde(default)]
    pub call_successful: Option<bool>,
    /// The answers to `post_call_analysis_data`, by name.
    #[serde(default)]
    pub custom_analysis_data: Option<BTreeMap<String, Value>>,
}

impl RetellCall {
    /// The metadata value under `key`, when it is a string.
    pub fn metadata_str(&self, key: &str) -> Option<&str> {
        self.metadata.as_ref()?.get(key)?.as_str()
    }
}

/// Retell over HTTP.
#[derive(Clone)]
pub struct RetellClient {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
}

impl RetellClient {
    /// A client of the API at `base_url`.
    pub fn new(base_url: &str, api_key: &str) -> Result<RetellClient, reqwest::Error> {
        Ok(RetellClient {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(30))
                .build()?,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.to_owned(),
        })
    }

    /// `POST /v2/create-phone-call`; answers the created call.
    pub async fn create_phone_call(&self, body: &Value) -> Result<RetellCall, PlatformError> {
        let request = self.http.post(self.url("/v2/create-phone-call")).json(body);
        self.send(request).await
    }

    /// `GET /v2/get-call/{call_id}`.
    pub async fn get_call(&self, call_id: &str) -> Result<RetellCall, PlatformError> {
        let request = self.http.get(self.url(&format!("/v2/get-call/{call_id}")));
        self.send(request).await
    }

    /// `POST /v3/list-calls` filtered on our call id in the metadata; the first match.
    pub async fn find_by_call_id(
        &self,
        call_id: &str,
    ) -> Result<Option<RetellCall>, PlatformError> {
        let body = json!({
            "filter_criteria": {
                "metadata": [{ "key": CALL_ID_KEY, "op": "eq", "type": "string", "value": call_id }],
            },
            "limit": 10,
        });
        let request = self.http.post(self.url("/v3/list-calls")).json(&body);
        let page: ListCallsResponse = self.send(request).await?;
        // Filter again here: a call must carry exactly our id, whatever the server's filter did.
        Ok(page
            .items
            .into_iter()
            .find(|c| c.metadata_str(CALL_ID_KEY) == Some(call_id)))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, PlatformError> {
        send_json("Retell", request.bearer_auth(&self.api_key)).await
    }
}

/// `POST /v3/list-calls` answer.
#[derive(Deserialize)]
struct ListCallsResponse {
    #[serde(default)]
    items: Vec<RetellCall>,
}
