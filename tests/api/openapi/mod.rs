//! The served OpenAPI document (`GET /openapi.json`), derived from the wire types and the route table:
//! it names the deployment's words and holds the client API only, every documented operation is routed
//! and answers as documented (HEAD beside GET, 405 with `Allow` otherwise),
//! real responses validate against the derived schemas (`conformance`), every example is accepted by a
//! demo server (`examples`), and a client of the hosted service works unchanged (`dropin`).

mod admin;
mod conformance;
mod dropin;
mod examples;

use std::collections::{BTreeMap, BTreeSet};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_app_with, TestApp, TestConfig};

/// The served document.
pub async fn fetch_document(app: &TestApp) -> Value {
    let response = app
        .client
        .get(app.url("/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    response.json().await.unwrap()
}

/// Validates JSON against the schemas of one OpenAPI document, strictly: an object may carry only the
/// keys its schema documents (the document itself lets responses gain keys).
pub struct Schemas {
    components: Value,
}

impl Schemas {
    pub fn of(document: &Value) -> Schemas {
        let mut components = document["components"].clone();
        forbid_undocumented_keys(&mut components["schemas"]);
        Schemas { components }
    }

    /// Every problem of `instance` against `schema` (inline or a `$ref` into the document).
    pub fn problems(&self, schema: &Value, instance: &Value) -> Vec<String> {
        let mut root = schema.clone();
        forbid_undocumented_keys(&mut root);
        root["components"] = self.components.clone();
        let validator = jsonschema::draft202012::new(&root)
            .unwrap_or_else(|e| panic!("schema {schema} does not compile: {e}"));
        validator
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }

    pub fn assert_valid(&self, schema: &Value, instance: &Value, what: &str) {
        let problems = self.problems(schema, instance);
        assert!(
            problems.is_empty(),
            "{what} does not match {schema}: {problems:#?}\n{instance:#}"
        );
    }
}

/// Adds `additionalProperties: false` to every object schema that lists properties and says nothing
/// about others.
fn forbid_undocumented_keys(node: &mut Value) {
    match node {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(forbid_undocumented_keys);
        }
        Value::Array(items) => items.iter_mut().for_each(forbid_undocumented_keys),
        _ => {}
    }
}

/// Follows a `$ref` to a component (response, parameter) of the document.
pub fn deref<'a>(document: &'a Value, node: &'a Value) -> &'a Value {
    match node["$ref"].as_str() {
        Some(reference) => document
            .pointer(reference.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{reference} resolves")),
        None => node,
    }
}

/// Every documented operation: (path, method, operation).
pub fn operations(document: &Value) -> Vec<(String, Method, Value)> {
    let mut out = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (name, operation) in item.as_object().unwrap() {
            let method = Method::from_bytes(name.to_uppercase().as_bytes()).unwrap();
            out.push((path.clone(), method, operation.clone()));
        }
    }
    out
}

/// The JSON schema documented for `status`, if the answer is JSON.
pub fn response_schema(document: &Value, operation: &Value, status: u16) -> Option<Value> {
    let responses = &operation["responses"];
    let response = responses
        .get(status.to_string())
        .unwrap_or_else(|| panic!("status {status} is documented: {responses}"));
    let schema = &deref(document, response)["content"]["application/json"]["schema"];
    (!schema.is_null()).then(|| schema.clone())
}

#[actix_web::test]
async fn the_document_names_the_deployment_words() {
    let app = spawn_app().await;
    let document = fetch_document(&app).await;
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1."));
    let schemes = &document["components"]["securitySchemes"];
    assert_eq!(schemes["bearerAuth"]["scheme"], "bearer");
    assert_eq!(schemes["apiKey"]["name"], "Switchboard-API-Key");
    assert_eq!(schemes["apiSecret"]["name"], "Switchboard-API-Secret");
    let source = &document["components"]["schemas"]["PayerLookupOut"]["properties"]
        ["phoneNumberSource"]["enum"];
    assert_eq!(source, &json!(["switchboard", "phoneBook", "input"]));
    let tags: Vec<&Value> = document["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["name"])
        .collect();
    for (path, _, operation) in operations(&document) {
        let tag = &operation["tags"][0];
        assert!(
            tags.contains(&tag),
            "{path} is grouped under a declared tag: {tag}"
        );
        if path.starts_with("/v1/calls") || path.starts_with("/v1/scripts") {
            assert_eq!(operation["deprecated"], true, "{path}");
            assert!(operation["responses"].get("410").is_some(), "{path}");
        }
    }
    let webhook = &document["webhooks"]["requestTerminal"]["post"];
    assert_eq!(webhook["parameters"][0]["name"], "X-Webhook-Signature");

    let mut config = TestConfig::default();
    config
        .set("server.product_word", "Acme")
        .set("server.auth_header_word", "Robodialer")
        .set("server.lookup_source_word", "SuperDial");
    let app = spawn_app_with(&config).await;
    let document = fetch_document(&app).await;
    let schemes = &document["components"]["securitySchemes"];
    assert_eq!(schemes["apiKey"]["name"], "Robodialer-API-Key");
    assert_eq!(schemes["apiSecret"]["name"], "Robodialer-API-Secret");
    assert!(schemes["apiKey"]["description"]
        .as_str()
        .unwrap()
        .contains("Robodialer-API-Key"));
    let challenge = &document["components"]["responses"]["Unauthorized"]["headers"]
        ["WWW-Authenticate"]["description"];
    assert!(
        challenge.as_str().unwrap().contains("realm=\"Acme\""),
        "{challenge}"
    );
    let source = &document["components"]["schemas"]["PayerLookupOut"]["properties"]
        ["phoneNumberSource"]["enum"];
    assert_eq!(source, &json!(["superdial", "phoneBook", "input"]));
    let text = document.to_string();
    assert!(
        !text.contains("Switchboard-API"),
        "no default header name is left"
    );
}

/// A documented path with a value in place of each parameter.
fn concrete(path: &str) -> String {
    [
        ("{schemaId}", "claim-status-basic"),
        ("{requestId}", "no-such-request"),
        ("{callId}", "call-0001"),
        ("{scriptId}", "claim-status"),
    ]
    .iter()
    .fold(path.to_owned(), |url, (name, value)| {
        url.replace(name, value)
    })
}

/// Whether an answer is the router's, not a handler's: no route, or a route without this method.
fn route_level_miss(status: u16, body: &Value) -> bool {
    (status == 404
        && body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("No route matches")))
        || status == 405
}

#[actix_web::test]
async fn every_documented_operation_is_routed_and_answers_as_documented() {
    let app = spawn_app().await;
    let document = fetch_document(&app).await;
    let schemas = Schemas::of(&document);
    let token = app.live_token().await;
    let operations = operations(&document);
    assert!(operations.len() >= 17, "{} operations", operations.len());
    for (path, method, operation) in operations {
        let url = concrete(&path);
        let mut request = app.client.request(method.clone(), app.url(&url));
        if operation["security"] == json!([{ "apiKey": [], "apiSecret": [] }]) {
            request = request
                .header("Switchboard-API-Key", crate::helpers::LIVE_KEY)
                .header("Switchboard-API-Secret", crate::helpers::LIVE_SECRET);
        } else {
            request = request.bearer_auth(&token);
        }
        if operation.get("requestBody").is_some() {
            request = request.json(&json!({}));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value =
            serde_json::from_str(&response.text().await.unwrap()).unwrap_or(Value::Null);
        let what = format!("{method} {path} (as {url})");
        assert!(
            !route_level_miss(status, &body),
            "{what} is documented but not routed: {status} {body}"
        );
        if let Some(schema) = response_schema(&document, &operation, status) {
            schemas.assert_valid(&schema, &body, &format!("{what} answering {status}"));
        }
    }
}

/// What the description promises of the router, on every documented path: a method the path does not
/// document answers 405 with `Allow` naming exactly the documented ones (HEAD beside GET), and HEAD
/// answers where GET does, with GET's status and no body. The retired paths answer 410 to any method.
#[actix_web::test]
async fn every_documented_path_allows_its_documented_methods_and_head_beside_get() {
    let app = spawn_app().await;
    let document = fetch_document(&app).await;
    let description = document["info"]["description"].as_str().unwrap();
    assert!(description.contains("`Allow` header"), "{description}");
    assert!(description.contains("also answers HEAD"), "{description}");
    let token = app.live_token().await;
    let mut documented: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, method, operation) in operations(&document) {
        if operation["deprecated"] != true {
            documented
                .entry(path)
                .or_default()
                .insert(method.to_string());
        }
    }
    assert!(documented.len() >= 10, "{} live paths", documented.len());
    for (path, methods) in documented {
        let url = app.url(&concrete(&path));
        let mut allowed = methods.clone();
        if methods.contains("GET") {
            allowed.insert("HEAD".into());
        }
        let response = app
            .client
            .request(Method::PATCH, &url)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 405, "PATCH {path}");
        let allow: BTreeSet<String> = response.headers()["allow"]
            .to_str()
            .unwrap()
            .split(',')
            .map(|m| m.trim().to_owned())
            .collect();
        assert_eq!(allow, allowed, "Allow of {path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"], "METHOD_NOT_ALLOWED", "PATCH {path}");
        if methods.contains("GET") {
            let get = app
                .client
                .get(&url)
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            let head = app
                .client
                .head(&url)
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            assert_eq!(head.status(), get.status(), "HEAD {path}");
            assert!(
                head.bytes().await.unwrap().is_empty(),
                "HEAD {path} has no body"
            );
        }
    }
}

/// The document is the client API's: the operator-facing routes the server also serves (voice platforms'
/// events, the agent callback, the admin API, the console, metrics, the document itself) are not in it.
#[actix_web::test]
async fn the_document_holds_nothing_outside_the_client_api() {
    let app = spawn_app().await;
    let document = fetch_document(&app).await;
    let paths: Vec<&String> = document["paths"].as_object().unwrap().keys().collect();
    for path in &paths {
        assert!(
            path.starts_with("/v1/") || ["/healthz", "/readyz"].contains(&path.as_str()),
            "{path} is client API"
        );
    }
    let outside = [
        (Method::POST, "/dialers/retell/events"),
        (Method::POST, "/dialers/vapi/events"),
        (Method::POST, "/agent/v1/calls/call-0001/outcome"),
        (Method::GET, "/admin/v1/payers"),
        (Method::GET, "/console/api/session"),
        (Method::GET, "/metrics"),
        (Method::GET, "/openapi.json"),
    ];
    for (method, path) in outside {
        // Each is really routed here, so its absence from the document is a choice, not an accident.
        let response = app
            .client
            .request(method.clone(), app.url(path))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body: Value =
            serde_json::from_str(&response.text().await.unwrap()).unwrap_or(Value::Null);
        assert!(
            !route_level_miss(status, &body),
            "{method} {path} is routed: {status} {body}"
        );
        let prefix = path.split('/').take(2).collect::<Vec<_>>().join("/");
        assert!(
            !paths.iter().any(|p| p.starts_with(&prefix)),
            "nothing under {prefix} is documented"
        );
    }
}

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

#[actix_web::test]
async fn the_document_states_the_interface_limits_the_server_enforces() {
    let app = spawn_app().await;
    let document = fetch_document(&app).await;
    let schemas = Schemas::of(&document);
    let parameter = |path: &str, name: &str| {
        document["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} has no {name}"))["schema"]
            .clone()
    };
    let component = |name: &str| json!({ "$ref": format!("#/components/schemas/{name}") });
    let property = |name: &str, field: &str| {
        document["components"]["schemas"][name]["properties"][field].clone()
    };
    // (schema, instance, valid?, what)
    let cases = [
        (
            parameter("/v1/schemas/{schemaId}", "schemaId"),
            json!(" "),
            false,
            "a blank schemaId",
        ),
        (
            parameter("/v1/schemas/{schemaId}", "schemaId"),
            json!("   "),
            false,
            "a blank schemaId",
        ),
        (
            parameter("/v1/schemas/{schemaId}", "schemaId"),
            json!("_x"),
            false,
            "a leading underscore",
        ),
        (
            parameter("/v1/schemas/{schemaId}", "schemaId"),
            json!("a/b"),
            false,
            "a slash",
        ),
        (
            parameter("/v1/schemas/{schemaId}", "schemaId"),
            json!(" vob"),
            true,
            "a leading space",
        ),
        (
            parameter("/v1/schemas/{schemaId}", "schemaId"),
            json!("vob-basic"),
            true,
            "an id",
        ),
        (
            parameter("/v1/requests", "pageSize"),
            json!(501),
            // The server accepts a larger page size and serves 500 (requests_read tests that), so the
            // document must not declare it invalid.
            true,
            "pageSize over 500, which is served as 500",
        ),
        (
            parameter("/v1/requests", "pageSize"),
            json!(0),
            false,
            "pageSize 0",
        ),
        (
            parameter("/v1/requests", "requestBatchId"),
            json!(""),
            false,
            "an empty requestBatchId",
        ),
        (
            parameter("/v1/requests", "requestBatchId"),
            json!("  "),
            false,
            "a blank requestBatchId",
        ),
        (
            parameter("/v1/requests", "requestBatchId"),
            json!("b-1"),
            true,
            "a batch id",
        ),
        (
            component("InputValueIn"),
            json!("v".repeat(1024)),
            true,
            "a value of 1024 bytes",
        ),
        (
            component("InputValueIn"),
            json!("v".repeat(1025)),
            false,
            "a value of 1025 bytes",
        ),
        (
            property("CreateRequestIn", "internalId"),
            json!("i".repeat(256)),
            true,
            "an internalId of 256 bytes",
        ),
        (
            property("CreateRequestIn", "internalId"),
            json!("i".repeat(257)),
            false,
            "an internalId of 257 bytes",
        ),
        (
            property("CreateRequestIn", "internalTag"),
            json!("t".repeat(257)),
            false,
            "an internalTag of 257 bytes",
        ),
        (
            property("CreateRequestIn", "inputs"),
            Value::Object((0..100).map(|n| (format!("k{n}"), json!("v"))).collect()),
            true,
            "100 inputs",
        ),
        (
            property("CreateRequestIn", "inputs"),
            Value::Object((0..101).map(|n| (format!("k{n}"), json!("v"))).collect()),
            false,
            "101 inputs",
        ),
        (
            property("CreateRequestIn", "inputs"),
            json!({ "k".repeat(129): "v" }),
            false,
            "an input key of 129 bytes",
        ),
        (
            property("CreateBatchIn", "requests"),
            json!(vec![json!({ "schemaId": "vob-basic", "inputs": {} }); 1001]),
            false,
            "a batch of 1001 entries",
        ),
        (component("InputValueIn"), json!(2), false, "the integer 2"),
        (component("InputValueIn"), json!(1), true, "the integer 1"),
        (
            component("InputValueIn"),
            json!(true),
            true,
            "a JSON boolean",
        ),
        (
            property("FailureOut", "errorCategory"),
            json!("OTHER"),
            false,
            "an unknown category",
        ),
        (
            property("FailureOut", "errorCategory"),
            json!("NOT_FOUND"),
            true,
            "NOT_FOUND",
        ),
        (
            property("CallStepErrorOut", "errorCategory"),
            json!("OTHER"),
            false,
            "an unknown category",
        ),
        (
            property("RequestOut", "dueDate"),
            Value::Null,
            true,
            "a null dueDate",
        ),
        (
            property("RequestOut", "resultSources"),
            json!({ "planActive": 0 }),
            false,
            "call 0",
        ),
        (
            property("RequestOut", "resultSources"),
            json!({ "planActive": 1 }),
            true,
            "call 1",
        ),
    ];
    // A body with `requests` is a batch whatever else it holds; the document says so where a client
    // reads the single shape.
    for name in ["CreateIn", "CreateRequestIn"] {
        let description = document["components"]["schemas"][name]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(
            description.contains("`requests` key") && description.contains("batch"),
            "{name}: {description}"
        );
    }
    for (schema, instance, valid, what) in cases {
        let problems = schemas.problems(&schema, &instance);
        assert_eq!(
            problems.is_empty(),
            valid,
            "{what}: {instance} against {schema}: {problems:?}"
        );
    }
}
