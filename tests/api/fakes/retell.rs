//! A local Retell AI, faithful to the shapes of Retell's SDK, for black-box tests.
//!
//! Endpoints (bearer `api_key`, else 401 `{"error_message": ...}`):
//! - `POST /v2/create-phone-call` `{from_number, to_number, override_agent_id, metadata,
//!   retell_llm_dynamic_variables, agent_override: {agent: {webhook_url, post_call_analysis_data}}}` →
//!   201 with the call object (`call_id`, `call_status: "registered"`, `agent_id`, `metadata`, ...).
//! - `GET /v2/get-call/{call_id}` → the call object as it stands (404 for an unknown id).
//! - `POST /v3/list-calls` `{filter_criteria: {metadata: [{key, op: "eq", type: "string", value}]}}` →
//!   `{items: [...], has_more: false}`.
//! - `GET /recordings/{call_id}.wav` → the call's recording (the `recording_url` of an ended call).
//!
//! Each created call then lives on its own: `ongoing` with a `call_started` event, then (unless held by
//! [`FakeRetell::hold_calls`]) `ended` with `call_ended` (no `call_analysis`) and `call_analyzed` (with it),
//! both carrying the SDK's `call_cost` (cents: `product_costs` per product and their `combined_cost`, or
//! what [`FakeRetell::price_calls`] says),
//! each POSTed to the call's `webhook_url` as `{event, call}` signed like Retell: `x-retell-signature:
//! v={ms},d={hex HMAC-SHA256(api_key, body + ms)}`. What happens on a call is a forced [`Scenario`] if a
//! test queued one, else what Switchboard's seeded payer simulator decides for a call with these questions
//! and inputs.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use switchboard_actors::dialer::simulated::SimulatedPayerDialer;
use switchboard_actors::dialer::{CallJob, Dialer};
use switchboard_storage::{
    Disposition, FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord,
};
use tokio::sync::Notify;

pub const API_KEY: &str = "key_test_retell_0123456789";
pub const AGENT_ID: &str = "agent_payer_calls";
pub const FROM_NUMBER: &str = "+14155550100";
/// Bytes of every fake recording.
pub const RECORDING: &[u8] = b"RIFF\x24\x00\x00\x00WAVEfmt fake-retell-recording";

/// How the fake prices ended calls in `call_cost`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Pricing {
    /// Per product, by the second, as Retell's dashboard lists them; `combined_cost` is their sum.
    #[default]
    ByProducts,
    /// `combined_cost` is this many cents (fractions allowed), spread over the products.
    Combined(f64),
    /// No `call_cost` at all (the SDK's member is optional).
    Unreported,
}

/// The products and their unit prices in cents per second: Retell's voice engine, the LLM and Retell's
/// telephony.
const PRODUCTS: [(&str, f64); 3] = [
    ("elevenlabs_tts", 0.1166667),
    ("gpt_4o_mini", 0.01),
    ("retell_telephony", 0.025),
];

/// What happens on a call, when a test decides instead of the simulator.
#[derive(Clone, Debug)]
pub enum Scenario {
    /// A representative answers every question.
    Answered,
    /// Answered, but the analysis gives this value for this field, if the field's item type can hold it
    /// (a `boolean` item only a JSON boolean, a `number` item only a number, an `enum` item only one of
    /// its choices); otherwise the field is left out, as Retell's analysis would.
    AnsweredWith(&'static str, &'static str),
    /// Answered, and the call surfaced a matter for a follow-up leg.
    AnsweredWithFollowUp,
    /// Voicemail answers.
    Voicemail,
    /// The line is busy (the call never connects).
    Busy,
    /// The representative gives another number.
    Referred(&'static str),
    /// The payer cannot find the member (the given code).
    NotFound(&'static str),
    /// The maximum call duration is reached on hold.
    MaxDuration,
    /// Any other failure: the agent's `callOutcome` and `failureCode`.
    Failed(&'static str, String),
}

#[derive(Default)]
struct State {
    calls: HashMap<String, Value>,
    creates: Vec<Value>,
    forced: VecDeque<Scenario>,
    /// Status codes Switchboard answered to each event, in order: (call_id, event, status).
    deliveries: Vec<(String, String, u16)>,
}

/// The fake. Clone it freely; all clones share one server.
#[derive(Clone)]
pub struct FakeRetell {
    pub base_url: String,
    state: Arc<Mutex<State>>,
    /// Where events go instead of the `webhook_url`'s own host (a test server's port is known late).
    target: Arc<Mutex<Option<String>>>,
    withhold_events: Arc<AtomicBool>,
    duplicate_events: Arc<AtomicBool>,
    hold: Arc<AtomicBool>,
    release: Arc<Notify>,
    ids: Arc<AtomicU64>,
    /// How long a connected call lasts before it ends (wall time).
    call_length: Arc<Mutex<Duration>>,
    /// How long create-phone-call waits before answering (the call exists from the start).
    answer_delay: Arc<Mutex<Duration>>,
    /// `base_url`, for the server's own clones (made before the port was known).
    base: Arc<std::sync::OnceLock<String>>,
    /// How ended calls are priced.
    pricing: Arc<Mutex<Pricing>>,
}

impl FakeRetell {
    pub async fn start() -> FakeRetell {
        let fake = FakeRetell {
            base_url: String::new(),
            state: Arc::default(),
            target: Arc::default(),
            withhold_events: Arc::default(),
            duplicate_events: Arc::default(),
            hold: Arc::default(),
            release: Arc::new(Notify::new()),
            ids: Arc::default(),
            base: Arc::default(),
            answer_delay: Arc::default(),
            call_length: Arc::default(),
            pricing: Arc::default(),
        };
        let shared = fake.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(web::Data::new(shared.clone()))
                .route("/v2/create-phone-call", web::post().to(create_phone_call))
                .route("/v2/get-call/{call_id}", web::get().to(get_call))
                .route("/v3/list-calls", web::post().to(list_calls))
                .route("/recordings/{file}", web::get().to(recording))
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
        let base_url = format!("http://{}", server.addrs()[0]);
        fake.base.set(base_url.clone()).unwrap();
        actix_web::rt::spawn(server.run());
        FakeRetell { base_url, ..fake }
    }

    /// Events go to `base` (scheme, host and port) with the `webhook_url`'s path.
    pub fn deliver_to(&self, base: &str) {
        *self.target.lock().unwrap() = Some(base.trim_end_matches('/').to_owned());
    }

    /// The next calls follow these scenarios, in order.
    pub fn force(&self, scenarios: &[Scenario]) {
        self.state
            .lock()
            .unwrap()
            .forced
            .extend(scenarios.iter().cloned());
    }

    /// Events are not sent (calls still end; get-call shows it).
    pub fn withhold_events(&self, on: bool) {
        self.withhold_events.store(on, Ordering::SeqCst);
    }

    /// Every event is sent twice.
    pub fn duplicate_events(&self, on: bool) {
        self.duplicate_events.store(on, Ordering::SeqCst);
    }

    /// Calls stay `ongoing` until [`FakeRetell::release_calls`].
    pub fn hold_calls(&self, on: bool) {
        self.hold.store(on, Ordering::SeqCst);
    }

    /// Lets held calls end.
    pub fn release_calls(&self) {
        self.hold.store(false, Ordering::SeqCst);
        self.release.notify_waiters();
    }

    /// Connected calls last `length` before they end.
    pub fn set_call_length(&self, length: Duration) {
        *self.call_length.lock().unwrap() = length;
    }

    /// Create-phone-call answers come `delay` after the call was created (a lost answer, with a kill).
    pub fn delay_create_answers(&self, delay: Duration) {
        *self.answer_delay.lock().unwrap() = delay;
    }

    /// Calls that end from now on carry `call_cost` as `pricing` says.
    pub fn price_calls(&self, pricing: Pricing) {
        *self.pricing.lock().unwrap() = pricing;
    }

    /// Create-phone-call bodies received, in order.
    pub fn creates(&self) -> Vec<Value> {
        self.state.lock().unwrap().creates.clone()
    }

    /// The call as get-call shows it.
    pub fn call(&self, call_id: &str) -> Value {
        self.state.lock().unwrap().calls[call_id].clone()
    }

    /// The call created for Switchboard's `call_id` (from its metadata), as get-call shows it.
    pub fn call_for(&self, switchboard_call_id: &str) -> Option<Value> {
        let state = self.state.lock().unwrap();
        state
            .calls
            .values()
            .find(|c| c["metadata"]["switchboard_call_id"] == switchboard_call_id)
            .cloned()
    }

    /// (call_id, event, Switchboard's status) of every event sent.
    pub fn deliveries(&self) -> Vec<(String, String, u16)> {
        self.state.lock().unwrap().deliveries.clone()
    }

    /// Waits until `count` creates arrived (10 s at most).
    pub async fn wait_creates(&self, count: usize) -> Vec<Value> {
        for _ in 0..400 {
            let creates = self.creates();
            if creates.len() >= count {
                return creates;
            }
            actix_web::rt::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("fewer than {count} create-phone-call requests reached the fake");
    }

    /// Signs `body` as Retell does, at `timestamp_ms`.
    pub fn sign(body: &str, timestamp_ms: i64) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(API_KEY.as_bytes()).unwrap();
        mac.update(format!("{body}{timestamp_ms}").as_bytes());
        format!(
            "v={timestamp_ms},d={}",
            hex::encode(mac.finalize().into_bytes())
        )
    }

    /// POSTs `{event, call}` to the call's webhook URL, signed; answers Switchboard's status and body.
    pub async fn send_event(&self, event: &str, call: &Value) -> (u16, Value) {
        let body = json!({ "event": event, "call": call }).to_string();
        let signature = FakeRetell::sign(&body, chrono::Utc::now().timestamp_millis());
        self.post_event(call, body, &signature).await
    }

    /// POSTs a raw event body with the given signature header; answers Switchboard's status and body.
    pub async fn post_event(&self, call: &Value, body: String, signature: &str) -> (u16, Value) {
        let webhook = self.webhook_url(call);
        let answer = match crate::helpers::client()
            .post(&webhook)
            .header("Content-Type", "application/json")
            .header("x-retell-signature", signature)
            .body(body.clone())
            .send()
            .await
        {
            Ok(response) => {
                let status = response.status().as_u16();
                (
                    status,
                    response.json::<Value>().await.unwrap_or(Value::Null),
                )
            }
            Err(_) => (0, Value::Null),
        };
        let status = answer.0;
        let event = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["event"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let call_id = call["call_id"].as_str().unwrap_or_default().to_owned();
        self.state
            .lock()
            .unwrap()
            .deliveries
            .push((call_id, event, status));
        answer
    }

    fn webhook_url(&self, call: &Value) -> String {
        let created = self
            .state
            .lock()
            .unwrap()
            .creates
            .iter()
            .find(|c| c["metadata"] == call["metadata"])
            .map(|c| {
                c["agent_override"]["agent"]["webhook_url"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .unwrap_or_default();
        match &*self.target.lock().unwrap() {
            Some(base) => {
                let path = created.splitn(4, '/').nth(3).unwrap_or_default().to_owned();
                format!("{base}/{path}")
            }
            None => created,
        }
    }

    async fn live(self, call_id: String, scenario: Option<Scenario>, request: Value) {
        actix_web::rt::time::sleep(Duration::from_millis(30)).await;
        let scenario = match scenario {
            Some(s) => s,
            None => simulate(&request).await,
        };
        let connects = !matches!(scenario, Scenario::Busy);
        if connects {
            let call = self.update(&call_id, |c| c["call_status"] = json!("ongoing"));
            self.emit("call_started", &call).await;
        }
        let length = *self.call_length.lock().unwrap();
        if connects && !length.is_zero() {
            actix_web::rt::time::sleep(length).await;
        }
        while self.hold.load(Ordering::SeqCst) {
            let released = self.release.notified();
            if !self.hold.load(Ordering::SeqCst) {
                break;
            }
            let _ = tokio::time::timeout(Duration::from_millis(200), released).await;
        }
        let fields = request["agent_override"]["agent"]["post_call_analysis_data"].clone();
        let base = self.base.get().cloned().unwrap_or_default();
        let pricing = *self.pricing.lock().unwrap();
        let ended = self.update(&call_id, |c| {
            end_call(c, &scenario, &fields, &base);
            price(c, pricing);
        });
        let mut without_analysis = ended.clone();
        without_analysis
            .as_object_mut()
            .unwrap()
            .remove("call_analysis");
        self.emit("call_ended", &without_analysis).await;
        if connects {
            self.emit("call_analyzed", &ended).await;
        }
    }

    async fn emit(&self, event: &str, call: &Value) {
        if self.withhold_events.load(Ordering::SeqCst) {
            return;
        }
        self.send_event(event, call).await;
        if self.duplicate_events.load(Ordering::SeqCst) {
            self.send_event(event, call).await;
        }
    }

    fn update(&self, call_id: &str, change: impl FnOnce(&mut Value)) -> Value {
        let mut state = self.state.lock().unwrap();
        let call = state.calls.get_mut(call_id).unwrap();
        change(call);
        call.clone()
    }
}

fn authorized(req: &HttpRequest) -> bool {
    req.headers()
        .get("Authorization")
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {API_KEY}"))
}

fn unauthorized() -> HttpResponse {
    HttpResponse::Unauthorized().json(json!({ "error_message": "Invalid API key" }))
}

async fn create_phone_call(
    req: HttpRequest,
    fake: web::Data<FakeRetell>,
    body: web::Json<Value>,
) -> HttpResponse {
    if !authorized(&req) {
        return unauthorized();
    }
    let body = body.into_inner();
    for required in ["from_number", "to_number"] {
        if !body[required].is_string() {
            return HttpResponse::BadRequest()
                .json(json!({ "error_message": format!("{required} is required") }));
        }
    }
    let items = &body["agent_override"]["agent"]["post_call_analysis_data"];
    if let Some(problem) = items
        .as_array()
        .into_iter()
        .flatten()
        .find_map(item_problem)
    {
        return HttpResponse::BadRequest().json(json!({ "error_message": problem }));
    }
    let call_id = format!(
        "call_{:032x}",
        fake.ids.fetch_add(1, Ordering::SeqCst) + 0xa11ce
    );
    let call = json!({
        "call_id": call_id, "call_type": "phone_call", "call_status": "registered", "direction": "outbound",
        "agent_id": body["override_agent_id"].as_str().unwrap_or("agent_default"), "agent_version": 1,
        "from_number": body["from_number"], "to_number": body["to_number"], "metadata": body["metadata"],
        "retell_llm_dynamic_variables": body["retell_llm_dynamic_variables"],
    });
    let scenario = {
        let mut state = fake.state.lock().unwrap();
        state.calls.insert(call_id.clone(), call.clone());
        state.creates.push(body.clone());
        state.forced.pop_front()
    };
    let runner = fake.get_ref().clone();
    actix_web::rt::spawn(runner.live(call_id, scenario, body));
    let delay = *fake.answer_delay.lock().unwrap();
    if !delay.is_zero() {
        actix_web::rt::time::sleep(delay).await;
    }
    HttpResponse::Created().json(call)
}

async fn get_call(
    req: HttpRequest,
    fake: web::Data<FakeRetell>,
    id: web::Path<String>,
) -> HttpResponse {
    if !authorized(&req) {
        return unauthorized();
    }
    match fake.state.lock().unwrap().calls.get(id.as_str()) {
        Some(call) => HttpResponse::Ok().json(call),
        None => HttpResponse::NotFound().json(json!({ "error_message": "Call not found" })),
    }
}

async fn list_calls(
    req: HttpRequest,
    fake: web::Data<FakeRetell>,
    body: web::Json<Value>,
) -> HttpResponse {
    if !authorized(&req) {
        return unauthorized();
    }
    let filters = body["filter_criteria"]["metadata"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let state = fake.state.lock().unwrap();
    let items: Vec<&Value> = state
        .calls
        .values()
        .filter(|call| {
            filters.iter().all(|f| {
                f["op"] == "eq"
                    && f["type"] == "string"
                    && call["metadata"][f["key"].as_str().unwrap_or_default()] == f["value"]
            })
        })
        .collect();
    HttpResponse::Ok().json(json!({ "items": items, "has_more": false }))
}

async fn recording(file: web::Path<String>) -> HttpResponse {
    if file.ends_with(".wav") {
        HttpResponse::Ok().content_type("audio/wav").body(RECORDING)
    } else {
        HttpResponse::NotFound().finish()
    }
}

/// What is wrong with a `post_call_analysis_data` item, by the SDK's four item shapes (`string` with
/// optional `examples`, `enum` with non-empty `choices`, `boolean`, `number`).
fn item_problem(item: &Value) -> Option<String> {
    if !item["name"].is_string() || !item["description"].is_string() {
        return Some("post_call_analysis_data items need a name and a description".into());
    }
    let kind = item["type"].as_str().unwrap_or_default();
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    let fits = match kind {
        "string" => item.get("examples").is_none_or(strings),
        "enum" => {
            strings(&item["choices"]) && item["choices"].as_array().is_some_and(|c| !c.is_empty())
        }
        "boolean" | "number" => true,
        _ => false,
    };
    let stray = (kind != "string" && item.get("examples").is_some())
        || (kind != "enum" && item.get("choices").is_some());
    (!fits || stray).then(|| {
        format!(
            "post_call_analysis_data item {} is not a valid {kind} item",
            item["name"]
        )
    })
}

/// The schema type an analysis item stands for. A `string` item that teaches its typed answers by
/// `examples` (besides `CANNOT ANSWER - ...`) is read as a model would read it: `true`/`false` a
/// boolean, amounts a dollar field, other values a choice.
fn field_type(item: &Value) -> (FieldType, Option<Vec<String>>) {
    let texts = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|e| !e.starts_with("CANNOT ANSWER - "))
            .map(str::to_owned)
            .collect()
    };
    match item["type"].as_str() {
        Some("boolean") => (FieldType::Boolean, None),
        Some("number") => (FieldType::Dollar, None),
        Some("enum") => (FieldType::Multiple, Some(texts(&item["choices"]))),
        _ => {
            let examples = texts(&item["examples"]);
            if examples.is_empty() {
                (FieldType::Alphanumeric, None)
            } else if examples == ["true", "false"] {
                (FieldType::Boolean, None)
            } else if examples.iter().all(|e| e.parse::<f64>().is_ok()) {
                (FieldType::Dollar, None)
            } else {
                (FieldType::Multiple, Some(examples))
            }
        }
    }
}

/// `value` as an item of this type holds it, if it can.
fn held(item: &Value, value: &str) -> Option<Value> {
    match item["type"].as_str() {
        Some("boolean") => value.parse::<bool>().ok().map(Value::Bool),
        Some("number") => value.parse::<f64>().ok().map(|n| json!(n)),
        Some("enum") => item["choices"]
            .as_array()?
            .iter()
            .find(|c| *c == value)
            .cloned(),
        _ => Some(json!(value)),
    }
}

/// The call's end under `scenario`: status, reason, duration, transcript, recording and analysis.
fn end_call(call: &mut Value, scenario: &Scenario, fields: &Value, base: &str) {
    let id = call["call_id"].as_str().unwrap().to_owned();
    let answers = |follow_up: bool| {
        let mut data = serde_json::Map::new();
        for field in fields.as_array().into_iter().flatten() {
            let name = field["name"].as_str().unwrap();
            let value = match field["type"].as_str().unwrap() {
                "boolean" => {
                    json!(follow_up || name != "followUpNeeded")
                }
                "number" => json!(250.5),
                "enum" if name == "callOutcome" => json!("answered"),
                "enum" => field["choices"][0].clone(),
                _ if name == "failureCode" || name == "referralPhoneNumber" => continue,
                // A string item standing for a typed field: answered as text, as Retell's model does.
                _ => match field_type(field) {
                    (FieldType::Boolean, _) => json!("true"),
                    (FieldType::Dollar, _) => json!("250.5"),
                    (FieldType::Multiple, Some(choices)) => json!(choices[0]),
                    _ if name.to_lowercase().contains("date") => json!("2026-01-01"),
                    _ => json!("ABC123"),
                },
            };
            data.insert(name.to_owned(), value);
        }
        if let Scenario::AnsweredWith(name, value) = scenario {
            let item = fields
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["name"] == *name);
            match item.and_then(|item| held(item, value)) {
                Some(value) => data.insert((*name).to_owned(), value),
                None => data.remove(*name),
            };
        }
        Value::Object(data)
    };
    let (status, reason, analysis) = match scenario {
        Scenario::Answered | Scenario::AnsweredWith(..) => {
            ("ended", "agent_hangup", Some(answers(false)))
        }
        Scenario::AnsweredWithFollowUp => ("ended", "agent_hangup", Some(answers(true))),
        Scenario::Voicemail => ("ended", "voicemail_reached", Some(json!({}))),
        Scenario::Busy => ("not_connected", "dial_busy", None),
        Scenario::MaxDuration => ("ended", "max_duration_reached", Some(json!({}))),
        Scenario::Referred(number) => (
            "ended",
            "agent_hangup",
            Some(
                json!({ "callOutcome": "referred", "referralPhoneNumber": number, "followUpNeeded": false }),
            ),
        ),
        Scenario::NotFound(code) => (
            "ended",
            "agent_hangup",
            Some(
                json!({ "callOutcome": "not_found", "failureCode": code, "followUpNeeded": false }),
            ),
        ),
        Scenario::Failed(outcome, code) => (
            "ended",
            "agent_hangup",
            Some(json!({ "callOutcome": outcome, "failureCode": code, "followUpNeeded": false })),
        ),
    };
    call["call_status"] = json!(status);
    call["disconnection_reason"] = json!(reason);
    call["end_timestamp"] = json!(chrono::Utc::now().timestamp_millis());
    if let Some(data) = analysis {
        call["duration_ms"] = json!(421_000);
        call["start_timestamp"] = json!(chrono::Utc::now().timestamp_millis() - 421_000);
        call["transcript"] =
            json!("Agent: Hi, I'm calling to verify benefits.\nUser: Sure, go ahead.");
        call["recording_url"] = json!(format!("{base}/recordings/{id}.wav"));
        call["call_analysis"] = json!({
            "call_summary": "The agent reached the payer.", "in_voicemail": reason == "voicemail_reached",
            "call_successful": reason == "agent_hangup", "user_sentiment": "Neutral", "custom_analysis_data": data,
        });
    }
}

/// The ended call's `call_cost` (the SDK's `CallCost`, every amount in cents) as `pricing` says.
fn price(call: &mut Value, pricing: Pricing) {
    let seconds = call["duration_ms"].as_u64().unwrap_or(0) as f64 / 1000.0;
    let by_products: Vec<f64> = PRODUCTS.iter().map(|(_, unit)| unit * seconds).collect();
    let listed: f64 = by_products.iter().sum();
    let costs = match pricing {
        Pricing::Unreported => return,
        Pricing::ByProducts => by_products,
        // The products keep their shares of the total asked for.
        Pricing::Combined(total) => by_products
            .iter()
            .map(|cost| match listed {
                0.0 => total / PRODUCTS.len() as f64,
                _ => total * cost / listed,
            })
            .collect(),
    };
    let product_costs: Vec<Value> = PRODUCTS
        .iter()
        .zip(&costs)
        .map(|((product, unit), cost)| json!({ "product": product, "unit_price": unit, "cost": cost }))
        .collect();
    let combined = match pricing {
        Pricing::Combined(total) => total,
        _ => costs.iter().sum(),
    };
    call["call_cost"] = json!({
        "product_costs": product_costs,
        "total_duration_seconds": seconds,
        "total_duration_unit_price": PRODUCTS.iter().map(|(_, unit)| unit).sum::<f64>(),
        "combined_cost": combined,
    });
}

/// What the seeded payer simulator does on a call with these questions and inputs.
async fn simulate(request: &Value) -> Scenario {
    let items = request["agent_override"]["agent"]["post_call_analysis_data"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fields: Vec<FieldRecord> = items
        .iter()
        .filter(|i| {
            !matches!(
                i["name"].as_str(),
                Some("callOutcome" | "failureCode" | "referralPhoneNumber" | "followUpNeeded")
            )
        })
        .map(|i| FieldRecord {
            name: i["name"].as_str().unwrap().to_owned(),
            label: i["name"].as_str().unwrap().to_owned(),
            description: i["description"].as_str().unwrap_or_default().to_owned(),
            field_type: field_type(i).0,
            allowed_values: field_type(i).1,
            required: true,
            when: None,
        })
        .collect();
    let mut inputs: BTreeMap<String, String> =
        serde_json::from_value(request["retell_llm_dynamic_variables"].clone()).unwrap_or_default();
    inputs.remove("questions");
    let job = CallJob {
        call_id: request["metadata"]["switchboard_call_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
            .into(),
        request_id: request["metadata"]["switchboard_request_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
            .into(),
        seq: 1,
        attempt: request["metadata"]["switchboard_attempt"]
            .as_u64()
            .unwrap_or(1) as u32,
        step_key: "primary".into(),
        step_index: 0,
        schema: Arc::new(SchemaVersionRecord {
            id: "fake".into(),
            version: 1,
            published_at: chrono::DateTime::UNIX_EPOCH,
            definition: SchemaDefinition {
                name: None,
                request_type: "vob".into(),
                required_inputs: vec![],
                optional_inputs: vec![],
                follow_up: None,
                fields,
                electronic: Default::default(),
            },
        }),
        inputs,
        number: request["to_number"]
            .as_str()
            .unwrap_or_default()
            .trim_start_matches("+1")
            .to_owned(),
        placed_at: chrono::DateTime::UNIX_EPOCH,
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        known: BTreeMap::new(),
        restarts: 0,
        seed: 7,
        time_scale: 1_000_000.0,
        ai_only: false,
        onshore_only: false,
    };
    let report = SimulatedPayerDialer::new().place(job).await;
    match report.disposition {
        Disposition::Completed if report.follow_up_requested => Scenario::AnsweredWithFollowUp,
        Disposition::Completed => Scenario::Answered,
        Disposition::Voicemail => Scenario::Voicemail,
        Disposition::HoldTimeout => Scenario::MaxDuration,
        Disposition::Referred => Scenario::Referred("+1 888 555 0111"),
        Disposition::Failed => {
            let code = report
                .failure
                .map(|f| f.code.to_string())
                .unwrap_or_else(|| "OTHER".into());
            let outcome = match code.as_str() {
                "IVR_FAILURE" => "ivr_failure",
                "PAYER_REFUSAL" => "refused",
                c if c.ends_with("_NOT_FOUND") => "not_found",
                c if c.ends_with("_MISSING") => "missing_input",
                _ => "other",
            };
            Scenario::Failed(outcome, code)
        }
    }
}
