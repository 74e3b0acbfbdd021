//! The served OpenAPI document (`GET /openapi.json`) stays honest: every documented operation exists on the
//! real server and answers with a documented status and body shape, every client route registered in
//! `src/routes/mod.rs` (and the legacy routes) is documented, and real reads of every sandbox scenario
//! conform to the documented schemas, with no undocumented keys. Also: the reference page is served.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use regex::Regex;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    spawn_app, spawn_app_with, status_and_json, TestApp, TestConfig, LIVE_KEY, LIVE_SECRET,
};

/// The routes are read from the source, so a route added there without documentation fails this test.
const ROUTES_MOD: &str = include_str!("../../src/routes/mod.rs");
const ROUTES_LEGACY: &str = include_str!("../../src/routes/legacy.rs");
/// The document as committed; the served one must be byte-identical.
const DOCUMENT: &str = include_str!("../../src/openapi/openapi.json");

/// Registered path prefixes the client-API document deliberately leaves out, each with its reason.
const UNDOCUMENTED: &[(&str, &str)] = &[
    (
        "/admin",
        "operator API: its own token, mounted only when an admin token is configured",
    ),
    (
        "/agent/",
        "voice-agent callback, authenticated by the dialer secret; not for API clients",
    ),
    (
        "/console",
        "the operator console's pages and their own session API, not the client API",
    ),
    (
        "/dialers/",
        "voice platforms' signed events (Retell, Vapi); not for API clients",
    ),
    (
        "/metrics",
        "Prometheus exposition for the operator's scraper, not the client API",
    ),
    ("/openapi.json", "the document itself"),
];

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

const SCHEMA: &str = "claim-status-basic";
const POLL_LIMIT: Duration = Duration::from_secs(20);
const POLL_STEP: Duration = Duration::from_millis(25);

// ---- helpers ------------------------------------------------------------------------------------------

async fn fetch_document(app: &TestApp) -> Value {
    let response = app
        .client
        .get(app.url("/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let text = response.text().await.unwrap();
    assert_eq!(text, DOCUMENT, "the served document is the committed file");
    serde_json::from_str(&text).expect("the document is JSON")
}

/// `resource("...")` (or `.route("...")`) paths of a routes source file, with `{name:regex}` as `{name}`.
fn registered_paths(source: &str, call: &str) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    let mut rest = source;
    while let Some(at) = rest.find(call) {
        rest = &rest[at + call.len()..];
        let Some(literal) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(end) = literal.find('"') {
            paths.insert(normalize(&literal[..end]));
        }
    }
    paths
}

/// `/v1/schemas/{schemaId:[^/]*}` -> `/v1/schemas/{schemaId}`.
fn normalize(path: &str) -> String {
    let mut out = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        if c != '{' {
            out.push(c);
            continue;
        }
        let (mut depth, mut inner) = (1, String::new());
        for c in chars.by_ref() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            inner.push(c);
        }
        let name = inner.split(':').next().unwrap_or_default();
        out.push_str(&format!("{{{name}}}"));
    }
    out
}

fn excluded(path: &str) -> Option<&'static str> {
    UNDOCUMENTED
        .iter()
        .find(|(prefix, _)| path.starts_with(prefix))
        .map(|(_, reason)| *reason)
}

/// Every documented operation: (path, method, operation, path item).
fn operations(doc: &Value) -> Vec<(String, &'static str, &Value, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((path.clone(), method, op, item));
            }
        }
    }
    out
}

/// `/v1/requests/{requestId}` with each `{name}` replaced by `values[name]` (or a plausible default).
fn fill(path: &str, values: &BTreeMap<&str, String>) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').unwrap() + open;
        let name = &rest[open + 1..close];
        out.push_str(values.get(name).map_or("plausible-id", String::as_str));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Whether an answer is the router's, not a handler's: no route, or a route without this method.
fn route_level_miss(status: u16, body: &Value) -> bool {
    let no_route = status == 404
        && body["error"] == "NOT_FOUND"
        && body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("No route matches"));
    no_route || status == 405 || body["error"] == "METHOD_NOT_ALLOWED"
}

/// Follows `$ref`s of a non-schema object (response, parameter).
fn deref<'a>(doc: &'a Value, mut node: &'a Value) -> &'a Value {
    while let Some(reference) = node.get("$ref").and_then(Value::as_str) {
        node = pointer(doc, reference);
    }
    node
}

fn pointer<'a>(doc: &'a Value, reference: &str) -> &'a Value {
    let target = reference
        .strip_prefix('#')
        .unwrap_or_else(|| panic!("only local references are used: {reference}"));
    doc.pointer(target)
        .unwrap_or_else(|| panic!("dangling reference {reference}"))
}

/// The documented JSON schema of `status` for an operation, or why there is none.
fn documented_schema<'a>(
    doc: &'a Value,
    op: &'a Value,
    status: u16,
) -> Result<Option<&'a Value>, String> {
    let responses = &op["responses"];
    let response = responses
        .get(status.to_string())
        .or_else(|| responses.get(format!("{}XX", status / 100)))
        .or_else(|| responses.get("default"))
        .ok_or_else(|| format!("status {status} is not documented"))?;
    Ok(deref(doc, response)
        .get("content")
        .and_then(|c| c.get("application/json"))
        .and_then(|m| m.get("schema")))
}

// ---- a small JSON Schema checker: enough of 2020-12 for this document, strict about undocumented keys ---

struct Checker<'a> {
    doc: &'a Value,
}

impl Checker<'_> {
    /// Every problem of `value` against `schema`; an object may carry only documented keys.
    fn check(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        self.keywords(schema, value, at, errors);
        let Some(object) = value.as_object() else {
            return;
        };
        let (names, additional) = self.object_view(schema);
        if names.is_empty() && additional.is_none() {
            return;
        }
        for (key, item) in object {
            if names.contains(key.as_str()) {
                continue;
            }
            match additional {
                None | Some(Value::Bool(false)) => {
                    errors.push(format!("{at}.{key}: undocumented key"));
                }
                Some(Value::Bool(true)) => {}
                Some(extra) => self.check(extra, item, &format!("{at}.{key}"), errors),
            }
        }
    }

    /// Property names and `additionalProperties` of a schema through `$ref` and `allOf`.
    fn object_view<'s>(&'s self, schema: &'s Value) -> (BTreeSet<&'s str>, Option<&'s Value>) {
        let mut names: BTreeSet<&str> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut additional = schema.get("additionalProperties");
        let mut parts: Vec<&Value> = Vec::new();
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            parts.push(pointer(self.doc, reference));
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            parts.extend(all);
        }
        for part in parts {
            let (more, extra) = self.object_view(part);
            names.extend(more);
            additional = additional.or(extra);
        }
        (names, additional)
    }

    /// The keywords of one schema, without the undocumented-key rule (applied once on the merged view).
    fn keywords(&self, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            self.keywords(pointer(self.doc, reference), value, at, errors);
        }
        for part in schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.keywords(part, value, at, errors);
        }
        for (keyword, exactly_one) in [("oneOf", true), ("anyOf", false)] {
            if let Some(branches) = schema.get(keyword).and_then(Value::as_array) {
                let passing = branches
                    .iter()
                    .filter(|branch| {
                        let mut branch_errors = Vec::new();
                        self.check(branch, value, at, &mut branch_errors);
                        branch_errors.is_empty()
                    })
                    .count();
                if passing == 0 || (exactly_one && passing > 1) {
                    errors.push(format!(
                        "{at}: {passing} branches of {keyword} match {value}"
                    ));
                }
            }
        }
        if let Some(not) = schema.get("not") {
            let mut not_errors = Vec::new();
            self.check(not, value, at, &mut not_errors);
            if not_errors.is_empty() {
                errors.push(format!("{at}: matches a `not` schema"));
            }
        }
        if let Some(types) = schema.get("type") {
            let allowed: Vec<&str> = match types {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => vec![],
            };
            let fits = allowed.iter().any(|t| match *t {
                "null" => value.is_null(),
                "boolean" => value.is_boolean(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "string" => value.is_string(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => false,
            });
            if !fits {
                errors.push(format!("{at}: {value} is not of type {types}"));
                return;
            }
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.contains(value) {
                errors.push(format!("{at}: {value} is not one of {options:?}"));
            }
        }
        if let Some(constant) = schema.get("const") {
            if constant != value {
                errors.push(format!("{at}: {value} is not {constant}"));
            }
        }
        if let (Some(pattern), Some(text)) = (
            schema.get("pattern").and_then(Value::as_str),
            value.as_str(),
        ) {
            if !Regex::new(pattern).unwrap().is_match(text) {
                errors.push(format!("{at}: {text:?} does not match {pattern}"));
            }
        }
        if let Some(number) = value.as_f64() {
            if schema["minimum"].as_f64().is_some_and(|min| number < min)
                || schema["maximum"].as_f64().is_some_and(|max| number > max)
            {
                errors.push(format!("{at}: {number} is out of range"));
            }
        }
        if let Some(items) = value.as_array() {
            if schema["minItems"]
                .as_u64()
                .is_some_and(|min| (items.len() as u64) < min)
                || schema["maxItems"]
                    .as_u64()
                    .is_some_and(|max| (items.len() as u64) > max)
            {
                errors.push(format!("{at}: {} items is out of range", items.len()));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    self.check(item_schema, item, &format!("{at}[{i}]"), errors);
                }
            }
        }
        if let Some(object) = value.as_object() {
            for key in schema["required"].as_array().into_iter().flatten() {
                let key = key.as_str().unwrap();
                if !object.contains_key(key) {
                    errors.push(format!("{at}: required key {key} is missing"));
                }
            }
            for (key, property) in schema["properties"].as_object().into_iter().flatten() {
                if let Some(item) = object.get(key) {
                    self.check(property, item, &format!("{at}.{key}"), errors);
                }
            }
        }
    }
}

/// Asserts `body` conforms to the schema documented for `status` of `op`.
fn assert_conforms(doc: &Value, op: &Value, what: &str, status: u16, body: &Value) {
    let schema =
        documented_schema(doc, op, status).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
    let Some(schema) = schema else {
        return;
    };
    let mut errors = Vec::new();
    Checker { doc }.check(schema, body, "$", &mut errors);
    assert!(
        errors.is_empty(),
        "{what} answered {status} with a body the document does not describe:\n  {}\nbody: {body}",
        errors.join("\n  ")
    );
}

fn operation<'a>(doc: &'a Value, path: &str, method: &str) -> &'a Value {
    doc["paths"][path]
        .get(method)
        .unwrap_or_else(|| panic!("{method} {path} is documented"))
}

/// Calls an operation; the status and JSON body (`null` when the body is not JSON).
async fn call(
    app: &TestApp,
    method: &str,
    path: &str,
    token: &str,
    api_key: bool,
    body: Option<&Value>,
) -> (u16, Value) {
    let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
    let mut request = app.client.request(method, app.url(path));
    request = if api_key {
        request
            .header("Switchboard-API-Key", LIVE_KEY)
            .header("Switchboard-API-Secret", LIVE_SECRET)
    } else {
        request.bearer_auth(token)
    };
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Valid `claim-status-basic` inputs for the demo account (lookup dials UnitedHealthcare's number).
fn claim_inputs(n: usize) -> Value {
    json!({
        "payerName": "UHC",
        "groupNumber": "GRP20417",
        "memberId": format!("W{:09}", 123_456_000 + n),
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "1980-04-12",
        "dateOfService": "2026-10-01",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
    })
}

// ---- the document -------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_document_is_served_as_openapi_3_1_json_and_every_reference_resolves() {
    let app = spawn_app().await;
    let doc = fetch_document(&app).await;
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1."),
        "{}",
        doc["openapi"]
    );
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());

    fn walk<'a>(node: &'a Value, refs: &mut Vec<&'a str>) {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    refs.push(r);
                }
                map.values().for_each(|v| walk(v, refs));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, refs)),
            _ => {}
        }
    }
    let mut refs = Vec::new();
    walk(&doc, &mut refs);
    assert!(refs.len() > 50, "the document reuses its components");
    for reference in refs {
        pointer(&doc, reference);
    }

    // The three error shapes (7.1), the auth schemes, and the webhook with its signature header.
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ErrorEnvelope"]["required"],
        json!(["error", "message"])
    );
    assert_eq!(
        schemas["TokenError"]["required"],
        json!(["code", "message"])
    );
    assert_eq!(schemas["AuthError"]["required"], json!(["error"]));
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["bearerAuth"]["scheme"], "bearer");
    assert_eq!(schemes["apiKey"]["name"], "Switchboard-API-Key");
    assert_eq!(schemes["apiSecret"]["name"], "Switchboard-API-Secret");
    let webhook = &doc["webhooks"]["requestTerminal"]["post"];
    assert_eq!(webhook["parameters"][0]["name"], "X-Webhook-Signature");
    assert_eq!(
        webhook["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/WebhookPayload"
    );

    // Every field of RequestResponse (2.4), payerLookup (2.5) and the tracing trio (2.6).
    let request_fields: BTreeSet<&str> = schemas["RequestResponse"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for field in [
        "requestId",
        "requestBatchId",
        "schemaId",
        "requestType",
        "state",
        "inputs",
        "results",
        "missingFields",
        "dateCreated",
        "completedAt",
        "dueDate",
        "internalId",
        "internalTag",
        "modality",
        "data_completeness",
        "error",
        "payerLookup",
        "to",
        "transcript",
        "transcriptPostCall",
        "recordingDownloadUrl",
        "callDuration",
        "callSummary",
        "callAuditSummary",
        "callFromNumber",
        "scriptVersion",
        "attemptDetails",
        "resultSummary",
        "callSteps",
        "contributingCalls",
        "resultSources",
    ] {
        assert!(
            request_fields.contains(field),
            "RequestResponse documents {field}"
        );
    }
    assert_eq!(
        schemas["PayerLookup"]["required"].as_array().unwrap().len(),
        6
    );

    // The legacy interface is documented as deprecated and gone.
    for (path, method, op, _) in operations(&doc) {
        if path.starts_with("/v1/calls") || path.starts_with("/v1/scripts") {
            assert_eq!(op["deprecated"], true, "{method} {path}");
            assert!(op["responses"].get("410").is_some(), "{method} {path}");
        }
    }
}

#[actix_web::test]
async fn every_client_route_registered_is_documented_and_nothing_else_is() {
    let app = spawn_app().await;
    let doc = fetch_document(&app).await;
    let documented: BTreeSet<String> = doc["paths"].as_object().unwrap().keys().cloned().collect();

    let mut registered = registered_paths(ROUTES_MOD, "resource(");
    registered.extend(registered_paths(ROUTES_LEGACY, ".route("));
    // The parser must actually see the routes, or this test proves nothing.
    for known in [
        "/healthz",
        "/v1/auth",
        "/v1/schemas/{schemaId}/required-payer-inputs",
        "/v1/requests/{requestId}",
        "/v1/calls/{callId}",
        "/openapi.json",
    ] {
        assert!(
            registered.contains(known),
            "the parser finds {known}: {registered:?}"
        );
    }

    let client_routes: BTreeSet<String> = registered
        .iter()
        .filter(|path| excluded(path).is_none())
        .cloned()
        .collect();
    let undocumented: Vec<&String> = client_routes.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "registered client routes missing from the document: {undocumented:?}"
    );
    let phantom: Vec<&String> = documented.difference(&client_routes).collect();
    assert!(
        phantom.is_empty(),
        "documented paths that are not registered (or are excluded): {phantom:?}"
    );
}

#[actix_web::test]
async fn every_documented_operation_exists_and_answers_a_documented_status_and_shape() {
    let app = spawn_app().await;
    let doc = fetch_document(&app).await;
    let token = app.live_token().await;
    // A real request, so the single read answers 200 and its full shape is checked.
    let (status, created) = call(
        &app,
        "post",
        "/v1/requests",
        &token,
        false,
        Some(&json!({ "schemaId": SCHEMA, "inputs": claim_inputs(1), "internalId": "openapi-1" })),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let values = BTreeMap::from([
        ("schemaId", SCHEMA.to_owned()),
        (
            "requestId",
            created["requestId"].as_str().unwrap().to_owned(),
        ),
        ("callId", "call-0001".to_owned()),
        ("scriptId", "claim-status".to_owned()),
    ]);

    let ops = operations(&doc);
    assert!(ops.len() >= 15, "{} operations", ops.len());
    for (path, method, op, _) in ops {
        let security = op.get("security").unwrap_or(&doc["security"]);
        let api_key = security
            .as_array()
            .unwrap()
            .iter()
            .any(|requirement| requirement.get("apiKey").is_some());
        let body = op.get("requestBody").map(|_| json!({}));
        let url = fill(&path, &values);
        let (status, answer) = call(&app, method, &url, &token, api_key, body.as_ref()).await;
        let what = format!("{} {path} (as {url})", method.to_uppercase());
        assert!(
            !route_level_miss(status, &answer),
            "{what} is documented but not routed: {status} {answer}"
        );
        assert_conforms(&doc, op, &what, status, &answer);
    }
}

#[actix_web::test]
async fn real_requests_of_every_scenario_conform_to_the_documented_shapes() {
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    let doc = fetch_document(&app).await;
    let token = app.sandbox_token().await;
    let scenarios = [
        "success",
        "redial",
        "follow_up",
        "partial",
        "failure:MEMBER_NOT_FOUND",
        "failure:SOMETHING_UNKNOWN",
        "cannot_answer",
        "digital",
        "digital_plus_phone",
        "stuck",
    ];
    let items: Vec<Value> = scenarios
        .iter()
        .enumerate()
        .map(|(n, scenario)| {
            let mut inputs = claim_inputs(n);
            inputs["sandboxScenario"] = json!(scenario);
            json!({ "schemaId": SCHEMA, "inputs": inputs, "internalId": format!("scenario-{n}"),
                    "internalTag": "openapi" })
        })
        .collect();
    let create = operation(&doc, "/v1/requests", "post");
    let (status, created) = call(
        &app,
        "post",
        "/v1/requests",
        &token,
        false,
        Some(&json!({ "requests": items })),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_conforms(&doc, create, "batch create", status, &created);

    // A batch with one good and one bad entry (207), and a single create that fails validation (400).
    let mut bad = claim_inputs(90);
    bad["memberId"] = json!("");
    let mixed = json!({ "requests": [
        { "schemaId": SCHEMA, "inputs": claim_inputs(91) },
        { "schemaId": SCHEMA, "inputs": bad.clone() },
    ] });
    let (status, answer) = call(&app, "post", "/v1/requests", &token, false, Some(&mixed)).await;
    assert_eq!(status, 207, "{answer}");
    assert_conforms(&doc, create, "mixed batch create", status, &answer);
    let single = json!({ "schemaId": SCHEMA, "inputs": bad });
    let (status, answer) = call(&app, "post", "/v1/requests", &token, false, Some(&single)).await;
    assert_eq!(
        (status, &answer["error"]),
        (400, &json!("INVALID_INPUTS")),
        "{answer}"
    );
    assert_conforms(&doc, create, "invalid single create", status, &answer);

    let read = operation(&doc, "/v1/requests/{requestId}", "get");
    let entries = created["requests"].as_array().unwrap();
    let deadline = Instant::now() + POLL_LIMIT;
    for (scenario, entry) in scenarios.iter().zip(entries) {
        let id = entry["requestId"].as_str().unwrap();
        let body = loop {
            let (status, body) = call(
                &app,
                "get",
                &format!("/v1/requests/{id}"),
                &token,
                false,
                None,
            )
            .await;
            assert_eq!(status, 200, "{body}");
            if body["state"] != "PROCESSING" || *scenario == "stuck" || Instant::now() > deadline {
                break body;
            }
            actix_web::rt::time::sleep(POLL_STEP).await;
        };
        assert!(
            *scenario == "stuck" || body["state"] != "PROCESSING",
            "{scenario} did not finish: {body}"
        );
        assert_conforms(&doc, read, &format!("read of {scenario}"), 200, &body);
    }

    let list = operation(&doc, "/v1/requests", "get");
    let batch = entries[0]["requestBatchId"].as_str().unwrap();
    let (status, body) = call(
        &app,
        "get",
        &format!("/v1/requests?requestBatchId={batch}&pageSize=3"),
        &token,
        false,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["nextPageToken"].is_string(), "{body}");
    assert_conforms(&doc, list, "list page", status, &body);

    // The other error shapes: bearer 401 and /v1/auth 401.
    let (status, body) = call(&app, "get", "/v1/requests", "not-a-jwt", false, None).await;
    assert_eq!(status, 401);
    assert_conforms(&doc, list, "list with a bad token", status, &body);
    let response = app.auth_with(&[("Switchboard-API-Key", LIVE_KEY)]).await;
    let (status, body) = status_and_json(response).await;
    assert_eq!(
        (status, &body),
        (401, &json!({ "error": "MISSING_API_SECRET" }))
    );
    assert_conforms(
        &doc,
        operation(&doc, "/v1/auth", "get"),
        "auth without secret",
        status,
        &body,
    );
}

// ---- the reference page -------------------------------------------------------------------------------

#[actix_web::test]
async fn the_reference_page_is_self_contained_html_that_loads_the_document() {
    let app = spawn_app().await;
    let response = app
        .client
        .get(app.url("/console/reference"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let html = response.text().await.unwrap();
    assert!(
        html.contains("fetch(\"/openapi.json\""),
        "the page renders the served document"
    );
    for external in [
        "src=\"http",
        "href=\"http",
        "@import",
        "<link",
        "<script src",
    ] {
        assert!(
            !html.contains(external),
            "no external assets: found {external}"
        );
    }
}
