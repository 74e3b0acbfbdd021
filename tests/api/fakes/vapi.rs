//! A fake Vapi for tests: a real HTTP server on a random loopback port speaking the shapes of Vapi's server
//! SDK. `POST /call` checks the Bearer key and the `CreateCallDto` (unknown members, the number in E.164,
//! the assistant and number it holds, the structured-data plan, the per-call `server` with its
//! `x-vapi-secret` header) and answers the `Call`; the call then rings, talks and ends on its own
//! schedule, and the fake posts `status-update` and `end-of-call-report` server messages to the call's
//! `server.url` with the call's own headers. `GET /call/{id}` and `GET /call` (assistant, number and
//! creation-time filters, newest first) answer for polling (a call names its number only by
//! `phoneNumberId`, as Vapi's do; `GET /phone-number/{id}` gives the number), and the call's recording is
//! served.
//!
//! An ended call carries `cost` (dollars) and `costBreakdown` (per component, by the minute), on the call
//! and on the end-of-call report, unless its scenario prices it otherwise ([`Pricing`]).
//!
//! The payer simulator decides each call (see `outcomes.rs`); a test may force the next calls'
//! [`Scenario`]s: an outcome, events withheld (only polling learns the end), a longer call, a price.

mod outcomes;

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};
use switchboard_storage::SchemaDefinition;

pub use outcomes::Outcome;

pub const API_KEY: &str = "vapi-private-key-test";
pub const ASSISTANT_ID: &str = "5b0a4a08-133c-4146-9315-0984f8c6be80";
pub const PHONE_NUMBER_ID: &str = "c86b5177-5cd8-447f-9013-99e307a8a7bb";
pub const FROM_NUMBER: &str = "+14155550100";
pub const SERVER_SECRET: &str = "vapi-server-secret-test";

/// Members `CreateCallDto` has; Vapi refuses others ("property X should not exist").
const CREATE_MEMBERS: [&str; 17] = [
    "customers",
    "name",
    "schedulePlan",
    "transport",
    "assistantId",
    "assistant",
    "assistantOverrides",
    "squadId",
    "squad",
    "squadOverrides",
    "workflowId",
    "workflow",
    "workflowOverrides",
    "phoneNumberId",
    "phoneNumber",
    "customerId",
    "customer",
];

/// How the next call goes.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub outcome: Outcome,
    /// No server messages: only `GET /call/{id}` tells the call ended.
    pub withhold_events: bool,
    /// From creation to the end of the call.
    pub length: Duration,
    /// How long `POST /call` takes to answer once the call exists (a create whose answer is slow or lost).
    pub answer_after: Duration,
    /// What the ended call's `cost` (dollars) and `costBreakdown` say.
    pub pricing: Pricing,
}

/// How the fake prices an ended call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pricing {
    /// By the minute per component, as Vapi's dashboard lists them; `cost` is their total.
    ByComponents,
    /// `cost` is this many dollars, spread over the components.
    Total(f64),
    /// No `cost` and no `costBreakdown` (both optional in the SDK's `Call`).
    Unreported,
}

/// Dollars per minute of each `costBreakdown` component: telephony, transcriber, model, voice, Vapi.
const COMPONENTS: [(&str, f64); 5] = [
    ("transport", 0.0085),
    ("stt", 0.01),
    ("llm", 0.006),
    ("tts", 0.036),
    ("vapi", 0.05),
];

impl Scenario {
    pub fn of(outcome: Outcome) -> Scenario {
        Scenario {
            outcome,
            withhold_events: false,
            length: Duration::from_millis(150),
            answer_after: Duration::ZERO,
            pricing: Pricing::ByComponents,
        }
    }
    pub fn priced(mut self, pricing: Pricing) -> Scenario {
        self.pricing = pricing;
        self
    }
    pub fn withheld(mut self) -> Scenario {
        self.withhold_events = true;
        self
    }
    pub fn lasting(mut self, length: Duration) -> Scenario {
        self.length = length;
        self
    }
    pub fn answering_after(mut self, wait: Duration) -> Scenario {
        self.answer_after = wait;
        self
    }
}

/// One server message the fake posted, and how Switchboard answered (`None`: no answer at all).
#[derive(Clone, Debug)]
pub struct Delivery {
    pub call_id: String,
    pub kind: String,
    pub status: Option<u16>,
    pub body: Value,
    pub headers: Vec<(String, String)>,
}

struct Inner {
    address: String,
    schemas: Vec<SchemaDefinition>,
    seed: u64,
    calls: Vec<Value>,
    creates: Vec<Value>,
    rejected: Vec<(u16, Value)>,
    script: VecDeque<Scenario>,
    default: Scenario,
    deliveries: Vec<Delivery>,
    reads: usize,
    lists: usize,
}

type Shared = Arc<Mutex<Inner>>;

/// A running fake; stopped when dropped.
pub struct FakeVapi {
    address: String,
    inner: Shared,
    handle: ServerHandle,
}

impl FakeVapi {
    /// Starts on the current actix System. `schemas` are the ones Switchboard may call with (the fake
    /// recognizes a call's schema by its structured-data properties); `seed` feeds the payer simulator.
    pub async fn start(schemas: Vec<SchemaDefinition>, seed: u64) -> FakeVapi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let inner = Arc::new(Mutex::new(Inner {
            address: address.clone(),
            schemas,
            seed,
            calls: Vec::new(),
            creates: Vec::new(),
            rejected: Vec::new(),
            script: VecDeque::new(),
            default: Scenario::of(Outcome::Simulated),
            deliveries: Vec::new(),
            reads: 0,
            lists: 0,
        }));
        let data = web::Data::new(inner.clone());
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .route("/call", web::post().to(create_call))
                .route("/call", web::get().to(list_calls))
                .route("/call/{id}", web::get().to(get_call))
                .route("/phone-number/{id}", web::get().to(get_phone_number))
                .route("/recordings/{id}.wav", web::get().to(recording))
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(0)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        FakeVapi {
            address,
            inner,
            handle,
        }
    }

    /// The base URL (`[dialer.vapi] base_url`).
    pub fn base_url(&self) -> String {
        self.address.clone()
    }

    /// The next calls go as scripted, in order; then as the default.
    pub fn script(&self, scenarios: Vec<Scenario>) {
        self.inner.lock().unwrap().script.extend(scenarios);
    }

    /// How calls go once the script is used up (at first: the simulator decides, 150 ms calls).
    pub fn always(&self, scenario: Scenario) {
        self.inner.lock().unwrap().default = scenario;
    }

    /// Accepted create bodies, in order.
    pub fn creates(&self) -> Vec<Value> {
        self.inner.lock().unwrap().creates.clone()
    }

    /// Refused create bodies with the status they got.
    pub fn rejected(&self) -> Vec<(u16, Value)> {
        self.inner.lock().unwrap().rejected.clone()
    }

    /// The calls as `GET /call/{id}` would show them, in creation order.
    pub fn calls(&self) -> Vec<Value> {
        self.inner.lock().unwrap().calls.clone()
    }

    /// Server messages posted so far.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.inner.lock().unwrap().deliveries.clone()
    }

    /// `GET /call/{id}` requests answered.
    pub fn reads(&self) -> usize {
        self.inner.lock().unwrap().reads
    }

    /// `GET /call` (list) requests answered.
    pub fn lists(&self) -> usize {
        self.inner.lock().unwrap().lists
    }

    /// Posts a delivered message again, exactly as before (a platform retry).
    pub async fn redeliver(&self, delivery: &Delivery) -> Option<u16> {
        post(
            &self.inner,
            &delivery.call_id,
            delivery.body.clone(),
            &delivery.headers,
        )
        .await
    }

    /// Waits (every 20 ms) until `done` holds of the fake, or panics after `timeout`.
    pub async fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        done: impl Fn(&FakeVapi) -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        while !done(self) {
            assert!(
                Instant::now() < deadline,
                "fake Vapi: {what} did not happen within {timeout:?}"
            );
            actix_web::rt::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for FakeVapi {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn authorized(request: &HttpRequest) -> bool {
    request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {API_KEY}"))
}

fn error(status: u16, message: Value) -> HttpResponse {
    let code = actix_web::http::StatusCode::from_u16(status).unwrap();
    let name = code.canonical_reason().unwrap_or_default();
    HttpResponse::build(code).json(json!({"message": message, "error": name, "statusCode": status}))
}

/// What is wrong with a create body, as Vapi's validation messages say it.
fn problems(body: &Value, schemas: &[SchemaDefinition]) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(members) = body.as_object() else {
        return vec!["body must be an object".into()];
    };
    for name in members
        .keys()
        .filter(|k| !CREATE_MEMBERS.contains(&k.as_str()))
    {
        problems.push(format!("property {name} should not exist"));
    }
    if body["assistantId"] != ASSISTANT_ID {
        problems
            .push("Couldn't Get Assistant. assistantId must be an assistant of this org".into());
    }
    if body["phoneNumberId"] != PHONE_NUMBER_ID {
        problems
            .push("Couldn't Get Phone Number. phoneNumberId must be a number of this org".into());
    }
    // `maxLength: 40` in Vapi's OpenAPI document (CreateCallDTO.name, CreateCustomerDTO.name).
    for (value, path) in [
        (&body["name"], "name"),
        (&body["customer"]["name"], "customer.name"),
    ] {
        if value.as_str().is_some_and(|s| s.chars().count() > 40) {
            problems.push(format!(
                "{path} must be shorter than or equal to 40 characters"
            ));
        }
    }
    let number = body["customer"]["number"].as_str().unwrap_or_default();
    let e164 = number.len() == 12
        && number.starts_with("+1")
        && number[2..].chars().all(|c| c.is_ascii_digit());
    if !e164 {
        problems.push("customer.number must be a valid phone number in the E.164 format".into());
    }
    let overrides = &body["assistantOverrides"];
    if !overrides["variableValues"].is_object() {
        problems.push("assistantOverrides.variableValues must be an object".into());
    }
    let plan = &overrides["analysisPlan"]["structuredDataPlan"];
    if plan["enabled"] != true {
        problems
            .push("assistantOverrides.analysisPlan.structuredDataPlan.enabled must be true".into());
    }
    let schema = &plan["schema"];
    let types = ["string", "number", "integer", "boolean", "array", "object"];
    let typed = |s: &Value| s["type"].as_str().is_some_and(|t| types.contains(&t));
    if !typed(schema) || schema["type"] != "object" {
        problems.push("structuredDataPlan.schema.type must be object".into());
    }
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if properties.values().any(|p| !typed(p)) {
        problems
            .push("structuredDataPlan.schema.properties.*.type must be a JsonSchema type".into());
    }
    let bad_pattern = |p: &Value| {
        p.get("pattern").is_some_and(|pattern| {
            let compiles = pattern
                .as_str()
                .is_some_and(|r| regex::Regex::new(r).is_ok());
            p["type"] != "string" || !compiles
        })
    };
    if properties.values().any(bad_pattern) {
        problems.push(
            "structuredDataPlan.schema.properties.*.pattern must be a regex on a string".into(),
        );
    }
    for control in [
        "callOutcome",
        "failureCode",
        "referralPhoneNumber",
        "followUpNeeded",
    ] {
        if !properties.contains_key(control) {
            problems.push(format!(
                "structuredDataPlan.schema lacks the control field {control}"
            ));
        }
    }
    if schema_of(&properties, schemas).is_none() {
        problems.push("structuredDataPlan.schema matches no schema Switchboard serves".into());
    }
    let server = &overrides["server"];
    if !server["url"]
        .as_str()
        .is_some_and(|u| u.starts_with("http"))
    {
        problems.push("assistantOverrides.server.url must be a URL address".into());
    }
    if !server["headers"]["x-vapi-secret"].is_string() {
        problems.push("assistantOverrides.server.headers lacks x-vapi-secret".into());
    }
    if !overrides["metadata"]["switchboard_call_id"].is_string() {
        problems.push("assistantOverrides.metadata.switchboard_call_id is missing".into());
    }
    let known = [
        "conversation-update",
        "end-of-call-report",
        "function-call",
        "hang",
        "speech-update",
        "status-update",
        "tool-calls",
        "transfer-destination-request",
        "user-interrupted",
        "assistant.started",
        "transcript",
        "model-output",
    ];
    if let Some(wanted) = overrides.get("serverMessages") {
        let valid = wanted.as_array().is_some_and(|w| {
            w.iter()
                .all(|m| m.as_str().is_some_and(|m| known.contains(&m)))
        });
        if !valid {
            problems.push("assistantOverrides.serverMessages must be server message types".into());
        }
    }
    problems
}

/// The schema whose field names, plus the control fields, are exactly `properties`.
fn schema_of(
    properties: &serde_json::Map<String, Value>,
    schemas: &[SchemaDefinition],
) -> Option<SchemaDefinition> {
    let control = [
        "callOutcome",
        "failureCode",
        "referralPhoneNumber",
        "followUpNeeded",
    ];
    let mut names: Vec<&str> = properties
        .keys()
        .map(String::as_str)
        .filter(|k| !control.contains(k))
        .collect();
    names.sort_unstable();
    schemas
        .iter()
        .find(|s| {
            let mut fields: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
            fields.sort_unstable();
            fields == names
        })
        .cloned()
}

async fn create_call(
    request: HttpRequest,
    body: web::Bytes,
    inner: web::Data<Shared>,
) -> HttpResponse {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !authorized(&request) {
        inner.lock().unwrap().rejected.push((401, body));
        return error(401, json!("Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa."));
    }
    let (call, scenario, schema, seed) = {
        let mut state = inner.lock().unwrap();
        let problems = problems(&body, &state.schemas);
        if !problems.is_empty() {
            state.rejected.push((400, body));
            return error(400, json!(problems));
        }
        let properties = body["assistantOverrides"]["analysisPlan"]["structuredDataPlan"]["schema"]
            ["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let schema = schema_of(&properties, &state.schemas).expect("validated");
        let scenario = match state.script.pop_front() {
            Some(s) => s,
            None => state.default.clone(),
        };
        let at = now();
        let call = json!({
            "id": uuid::Uuid::new_v4().to_string(),
            "orgId": "8f6c1b8e-0d5e-4c53-9c7e-1a2b3c4d5e6f",
            "type": "outboundPhoneCall",
            "status": "queued",
            "createdAt": at,
            "updatedAt": at,
            "assistantId": body["assistantId"],
            "assistantOverrides": body["assistantOverrides"],
            "phoneNumberId": body["phoneNumberId"],
            "customer": body["customer"],
            "name": body["name"],
            "phoneCallProvider": "twilio",
            "phoneCallTransport": "pstn",
        });
        state.creates.push(body.clone());
        state.calls.push(call.clone());
        (call, scenario, schema, state.seed)
    };
    let ending = outcomes::ending(&scenario.outcome, &body, &schema, seed);
    let answer_after = scenario.answer_after;
    actix_web::rt::spawn(run_call(
        inner.get_ref().clone(),
        call.clone(),
        scenario,
        ending,
    ));
    if !answer_after.is_zero() {
        actix_web::rt::time::sleep(answer_after).await;
    }
    HttpResponse::Created().json(call)
}

/// The life of one call: in progress at once, ended after the scenario's length.
async fn run_call(inner: Shared, call: Value, scenario: Scenario, ending: outcomes::Ending) {
    let id = call["id"].as_str().unwrap().to_string();
    let headers: Vec<(String, String)> = call["assistantOverrides"]["server"]["headers"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    let started: DateTime<Utc> = Utc::now();
    let in_progress = update(&inner, &id, |c| {
        c["status"] = json!("in-progress");
        c["startedAt"] = json!(started.to_rfc3339_opts(SecondsFormat::Millis, true));
    });
    let wanted = |kind: &str| {
        !scenario.withhold_events
            && call["assistantOverrides"]["serverMessages"]
                .as_array()
                .is_none_or(|w| w.iter().any(|m| m == kind))
    };
    if wanted("status-update") {
        let message = status_update(&in_progress, "in-progress", None);
        post(&inner, &id, message, &headers).await;
    }
    actix_web::rt::time::sleep(scenario.length).await;
    let ended_at = started + chrono::Duration::seconds(i64::from(ending.duration_seconds));
    let recording = format!("{}/recordings/{id}.wav", inner.lock().unwrap().address);
    let artifact = json!({
        "transcript": ending.transcript,
        "recordingUrl": recording,
        "recording": {"mono": {"combinedUrl": recording}},
        "messages": [],
    });
    let analysis = json!({"summary": ending.summary, "structuredData": ending.structured_data});
    let (cost, breakdown) = price(scenario.pricing, ending.duration_seconds);
    let ended = update(&inner, &id, |c| {
        c["status"] = json!("ended");
        c["endedReason"] = json!(ending.ended_reason);
        c["endedAt"] = json!(ended_at.to_rfc3339_opts(SecondsFormat::Millis, true));
        if let (Some(cost), Some(breakdown)) = (cost, &breakdown) {
            c["cost"] = json!(cost);
            c["costBreakdown"] = breakdown.clone();
        }
        c["artifact"] = artifact.clone();
        c["analysis"] = analysis.clone();
    });
    if wanted("status-update") {
        let message = status_update(&ended, "ended", Some(ending.ended_reason));
        post(&inner, &id, message, &headers).await;
    }
    if !wanted("end-of-call-report") {
        return;
    }
    let mut report = json!({"message": {
        "type": "end-of-call-report",
        "timestamp": Utc::now().timestamp_millis(),
        "endedReason": ending.ended_reason,
        "artifact": artifact,
        "analysis": analysis,
        "startedAt": ended["startedAt"],
        "endedAt": ended["endedAt"],
        "phoneNumber": {"id": PHONE_NUMBER_ID, "provider": "twilio", "number": FROM_NUMBER},
        "customer": ended["customer"],
        "call": ended,
    }});
    // `ServerMessageEndOfCallReport.cost`: "This can also be found at `call.cost`".
    if let Some(cost) = cost {
        report["message"]["cost"] = json!(cost);
    }
    post(&inner, &id, report, &headers).await;
}

/// The `cost` (dollars) and `costBreakdown` of a call of `seconds`, as `pricing` says.
fn price(pricing: Pricing, seconds: u32) -> (Option<f64>, Option<Value>) {
    let minutes = f64::from(seconds) / 60.0;
    let listed: Vec<f64> = COMPONENTS.iter().map(|(_, rate)| rate * minutes).collect();
    let sum: f64 = listed.iter().sum();
    let (total, parts) = match pricing {
        Pricing::Unreported => return (None, None),
        Pricing::ByComponents => (sum, listed),
        Pricing::Total(total) => (
            total,
            listed
                .iter()
                .map(|part| match sum {
                    0.0 => total / COMPONENTS.len() as f64,
                    _ => total * part / sum,
                })
                .collect(),
        ),
    };
    let mut breakdown = serde_json::Map::new();
    for ((name, _), part) in COMPONENTS.iter().zip(parts) {
        breakdown.insert((*name).to_owned(), json!(part));
    }
    breakdown.insert("total".to_owned(), json!(total));
    (Some(total), Some(Value::Object(breakdown)))
}

fn status_update(call: &Value, status: &str, ended_reason: Option<&str>) -> Value {
    let mut message = json!({
        "type": "status-update",
        "timestamp": Utc::now().timestamp_millis(),
        "status": status,
        "call": call,
        "customer": call["customer"],
        "phoneNumber": {"id": PHONE_NUMBER_ID, "provider": "twilio", "number": FROM_NUMBER},
    });
    if let Some(reason) = ended_reason {
        message["endedReason"] = json!(reason);
    }
    json!({"message": message})
}

fn update(inner: &Shared, id: &str, change: impl FnOnce(&mut Value)) -> Value {
    let mut state = inner.lock().unwrap();
    let call = state
        .calls
        .iter_mut()
        .find(|c| c["id"] == id)
        .expect("known call");
    change(call);
    call["updatedAt"] = json!(now());
    call.clone()
}

/// Posts one server message to the call's server URL with the call's headers; Vapi does not retry
/// (`server.backoffPlan` is unset).
async fn post(
    inner: &Shared,
    call_id: &str,
    body: Value,
    headers: &[(String, String)],
) -> Option<u16> {
    let url = {
        let state = inner.lock().unwrap();
        let call = state.calls.iter().find(|c| c["id"] == call_id)?;
        call["assistantOverrides"]["server"]["url"]
            .as_str()?
            .to_string()
    };
    let mut request = crate::helpers::client()
        .post(url)
        .timeout(Duration::from_secs(20))
        .json(&body);
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let status = request.send().await.ok().map(|r| r.status().as_u16());
    inner.lock().unwrap().deliveries.push(Delivery {
        call_id: call_id.to_string(),
        kind: body["message"]["type"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        status,
        body,
        headers: headers.to_vec(),
    });
    status
}

async fn get_call(
    request: HttpRequest,
    path: web::Path<String>,
    inner: web::Data<Shared>,
) -> HttpResponse {
    if !authorized(&request) {
        return error(401, json!("Invalid Key."));
    }
    let mut state = inner.lock().unwrap();
    state.reads += 1;
    match state.calls.iter().find(|c| c["id"] == path.as_str()) {
        Some(call) => HttpResponse::Ok().json(call),
        None => error(404, json!("Not Found")),
    }
}

/// `GET /phone-number/{id}`: the org's one Twilio number.
async fn get_phone_number(request: HttpRequest, path: web::Path<String>) -> HttpResponse {
    if !authorized(&request) {
        return error(401, json!("Invalid Key."));
    }
    if path.as_str() != PHONE_NUMBER_ID {
        return error(404, json!("Not Found"));
    }
    HttpResponse::Ok().json(json!({
        "provider": "twilio", "id": PHONE_NUMBER_ID, "orgId": "8f6c1b8e-0d5e-4c53-9c7e-1a2b3c4d5e6f",
        "number": FROM_NUMBER, "twilioAccountSid": "AC0123456789abcdef0123456789abcdef",
        "createdAt": "2026-01-05T10:00:00.000Z", "updatedAt": "2026-01-05T10:00:00.000Z",
    }))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    assistant_id: Option<String>,
    phone_number_id: Option<String>,
    created_at_gt: Option<DateTime<Utc>>,
    created_at_ge: Option<DateTime<Utc>>,
    created_at_lt: Option<DateTime<Utc>>,
    created_at_le: Option<DateTime<Utc>>,
    limit: Option<usize>,
}

async fn list_calls(
    request: HttpRequest,
    query: web::Query<ListQuery>,
    inner: web::Data<Shared>,
) -> HttpResponse {
    if !authorized(&request) {
        return error(401, json!("Invalid Key."));
    }
    let mut state = inner.lock().unwrap();
    state.lists += 1;
    let created = |c: &Value| {
        c["createdAt"]
            .as_str()
            .and_then(|s| s.parse::<DateTime<Utc>>().ok())
    };
    let mut page: Vec<Value> = state
        .calls
        .iter()
        .rev()
        .filter(|c| {
            query
                .assistant_id
                .as_ref()
                .is_none_or(|a| c["assistantId"] == a.as_str())
                && query
                    .phone_number_id
                    .as_ref()
                    .is_none_or(|p| c["phoneNumberId"] == p.as_str())
                && query
                    .created_at_ge
                    .is_none_or(|t| created(c).is_some_and(|at| at >= t))
                && query
                    .created_at_lt
                    .is_none_or(|t| created(c).is_some_and(|at| at < t))
                && query
                    .created_at_le
                    .is_none_or(|t| created(c).is_some_and(|at| at <= t))
                && query
                    .created_at_gt
                    .is_none_or(|t| created(c).is_some_and(|at| at > t))
        })
        .cloned()
        .collect();
    page.truncate(query.limit.unwrap_or(100).min(1000));
    HttpResponse::Ok().json(page)
}

/// A short silent WAV: what `artifact.recordingUrl` points to.
async fn recording(path: web::Path<String>, inner: web::Data<Shared>) -> HttpResponse {
    if !inner
        .lock()
        .unwrap()
        .calls
        .iter()
        .any(|c| c["id"] == path.as_str())
    {
        return HttpResponse::NotFound().finish();
    }
    let samples = 8000u32; // one second of 8 kHz mono 16-bit silence
    let mut wav = Vec::with_capacity(44 + samples as usize * 2);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples * 2).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&16000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples * 2).to_le_bytes());
    wav.resize(44 + samples as usize * 2, 0);
    HttpResponse::Ok().content_type("audio/wav").body(wav)
}

/// The schema definitions a Switchboard started with `config_toml` serves: what the fake recognizes.
pub fn schemas_of(config_toml: &str) -> Vec<SchemaDefinition> {
    let settings = switchboard::configuration::from_toml_str(
        config_toml,
        "fake Vapi",
        &switchboard::configuration::Overrides::default(),
    )
    .expect("a valid test config");
    settings
        .schemas
        .iter()
        .map(switchboard::provisioning::schema_definition)
        .collect()
}
