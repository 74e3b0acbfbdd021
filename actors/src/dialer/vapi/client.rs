//! Vapi's REST API as Switchboard uses it: `POST /call` to place a call, `GET /call/{id}` to read one, and
//! `GET /call` to find a call by Switchboard's own call id after a crash. Bearer auth with the API key.
//!
//! Vapi's list endpoint filters by `assistantId`, `phoneNumberId` and creation time, not by metadata. A
//! call that may have been created before Switchboard stopped is therefore searched among the calls of
//! the configured assistant and number created in the last [`SEARCH_WINDOW_HOURS`] (newest first, page by
//! page, bounded), and matched on `assistantOverrides.metadata.switchboard_call_id`.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::extraction::structured_data_plan;
use super::types::{
    AnalysisPlan, AssistantOverrides, Call, CreateCallDto, CreateCustomerDto, PhoneNumber, Server,
    ATTEMPT_KEY, CALL_ID_KEY, REQUEST_ID_KEY, SECRET_HEADER,
};
use super::VapiConfig;
use crate::dialer::platform::rest::send_json;
use crate::dialer::platform::{PlatformCallRequest, PlatformError};

/// Calls per page of `GET /call` (Vapi's default page).
const PAGE_SIZE: usize = 100;
/// Pages searched before giving up on finding a call: 2,000 calls in the window.
const MAX_PAGES: usize = 20;
/// How far back the search for an attempt's call looks. The driver searches only for an attempt whose
/// create may have happened just before a crash; a day covers any outage worth resuming from.
pub const SEARCH_WINDOW_HOURS: i64 = 24;
/// Template variable with the schema's request type, next to the inputs and `questions`.
pub const REQUEST_TYPE_VARIABLE: &str = "requestType";
/// Server messages a call asks for: Vapi's default list also has transcripts, speech and tool messages.
pub const SERVER_MESSAGES: [&str; 2] = ["status-update", "end-of-call-report"];

/// A client of one Vapi account.
#[derive(Clone, Debug)]
pub struct VapiClient {
    http: reqwest::Client,
    base_url: String,
    api_key: String,
}

impl VapiClient {
    /// A client of the API at `base_url` with the Bearer `api_key`.
    pub fn new(base_url: &str, api_key: &str) -> Result<VapiClient, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(VapiClient {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            api_key: api_key.to_owned(),
        })
    }

    /// `POST /call`: places the call.
    pub async fn create_call(&self, body: &CreateCallDto) -> Result<Call, PlatformError> {
        self.send(self.http.post(self.url("/call")).json(body))
            .await
    }

    /// `GET /call/{id}`.
    pub async fn get_call(&self, id: &str) -> Result<Call, PlatformError> {
        self.send(self.http.get(self.url(&format!("/call/{id}"))))
            .await
    }

    /// `GET /phone-number/{id}`.
    pub async fn get_phone_number(&self, id: &str) -> Result<PhoneNumber, PlatformError> {
        self.send(self.http.get(self.url(&format!("/phone-number/{id}"))))
            .await
    }

    /// The call tagged with `call_id` among the calls of `assistant_id` from `phone_number_id` created at
    /// or after `since`. Pages move through creation time from the page's far edge, inclusive (calls of
    /// one millisecond may straddle pages), in whichever direction Vapi sorts; calls already seen are
    /// skipped, and a page with nothing new ends the search.
    pub async fn find_call(
        &self,
        assistant_id: &str,
        phone_number_id: &str,
        call_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Option<Call>, PlatformError> {
        let mut window = vec![(
            "createdAtGe",
            since.to_rfc3339_opts(SecondsFormat::Millis, true),
        )];
        let mut seen: HashSet<String> = HashSet::new();
        for _ in 0..MAX_PAGES {
            let mut query = vec![
                ("assistantId", assistant_id.to_owned()),
                ("phoneNumberId", phone_number_id.to_owned()),
                ("limit", PAGE_SIZE.to_string()),
            ];
            query.extend(window.iter().cloned());
            let page: Vec<Call> = self
                .send(self.http.get(self.url("/call")).query(&query))
                .await?;
            // Match here whatever the server filtered: a call must carry exactly our id.
            if let Some(found) = page
                .iter()
                .find(|c| c.metadata_str(CALL_ID_KEY) == Some(call_id))
            {
                return Ok(Some(found.clone()));
            }
            let fresh = page.iter().filter(|c| seen.insert(c.id.clone())).count();
            if page.len() < PAGE_SIZE || fresh == 0 {
                return Ok(None);
            }
            // ISO 8601 instants in one format order as text.
            let times: Vec<&String> = page.iter().filter_map(|c| c.created_at.as_ref()).collect();
            let (Some(first), Some(last)) = (times.first(), times.last()) else {
                return Ok(None);
            };
            let edge = match first >= last {
                // Newest first: go on below the oldest.
                true => ("createdAtLe", (*last).clone()),
                // Oldest first: go on above the newest.
                false => ("createdAtGe", (*last).clone()),
            };
            window.retain(|(k, _)| *k != edge.0);
            window.push(edge);
        }
        Ok(None)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    async fn send<T: DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, PlatformError> {
        send_json("Vapi", request.bearer_auth(&self.api_key)).await
    }
}

/// The `POST /call` body for one attempt.
pub fn create_body(config: &VapiConfig, request: &PlatformCallRequest) -> CreateCallDto {
    let job = &request.job;
    let mut variables: BTreeMap<String, Value> = request
        .variables
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    variables.insert(
        REQUEST_TYPE_VARIABLE.to_owned(),
        Value::String(job.schema.definition.request_type.clone()),
    );
    // The call id finds the call again after a crash and names it in events; request and attempt help an
    // operator reading Vapi's dashboard.
    let metadata = BTreeMap::from([
        (CALL_ID_KEY.to_owned(), Value::from(job.call_id.as_str())),
        (
            REQUEST_ID_KEY.to_owned(),
            Value::from(job.request_id.as_str()),
        ),
        (ATTEMPT_KEY.to_owned(), Value::from(job.attempt)),
    ]);
    CreateCallDto {
        assistant_id: config.assistant_id.clone(),
        phone_number_id: config.phone_number_id.clone(),
        customer: CreateCustomerDto {
            number: Some(e164(&job.number)),
            name: job.inputs.get("payerName").map(|name| within_limit(name)),
        },
        assistant_overrides: AssistantOverrides {
            variable_values: variables,
            analysis_plan: Some(AnalysisPlan {
                structured_data_plan: Some(structured_data_plan(&request.extraction)),
            }),
            server: Some(Server {
                url: config.server_url.clone(),
                headers: BTreeMap::from([(SECRET_HEADER.to_owned(), config.server_secret.clone())]),
            }),
            server_messages: SERVER_MESSAGES.iter().map(|s| (*s).to_owned()).collect(),
            metadata,
        },
        // `sb ` and a 36-character call id: 39, within the limit.
        name: Some(format!("sb {}", job.call_id)),
    }
}

/// Vapi refuses a call whose `name` or `customer.name` is longer than 40 characters (`maxLength: 40` in
/// its OpenAPI document); the customer's name is only a label for its dashboard, so a longer one is cut.
const NAME_LIMIT: usize = 40;

fn within_limit(name: &str) -> String {
    name.chars().take(NAME_LIMIT).collect()
}

/// A ten-digit US number in E.164; a number already in E.164 stays as it is.
pub fn e164(number: &str) -> String {
    match number.starts_with('+') {
        true => number.to_owned(),
        false => format!("+1{number}"),
    }
}
