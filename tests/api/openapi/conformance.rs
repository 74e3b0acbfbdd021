//! Real answers of every sandbox scenario, the create outcomes (200, 207, 400), the error shapes and a
//! delivered webhook validate against the schemas the served document derives from the wire types.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use super::{fetch_document, response_schema, Schemas};
use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig, LIVE_KEY};
use crate::receiver::Receiver;

const SCHEMA: &str = "claim-status-basic";

/// Valid `claim-status-basic` inputs for the demo account (lookup dials UnitedHealthcare's number).
pub fn claim_inputs(n: usize) -> Value {
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

fn operation<'a>(document: &'a Value, path: &str, method: &str) -> &'a Value {
    let operation = &document["paths"][path][method];
    assert!(operation.is_object(), "{method} {path} is documented");
    operation
}

/// Calls with a bearer token; the status and JSON body.
async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = app.client.request(method, app.url(path)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(body);
    }
    status_and_json(request.send().await.unwrap()).await
}

struct Checker {
    document: Value,
    schemas: Schemas,
}

impl Checker {
    fn answer(&self, path: &str, method: &str, status: u16, body: &Value, what: &str) {
        let operation = operation(&self.document, path, method);
        let schema = response_schema(&self.document, operation, status)
            .unwrap_or_else(|| panic!("{what}: {status} of {method} {path} has a JSON schema"));
        self.schemas.assert_valid(&schema, body, what);
    }
}

#[actix_web::test]
async fn real_answers_of_every_scenario_validate_against_the_derived_schemas() {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    let app = spawn_app_with(&config).await;
    let receiver = Receiver::start().await;
    let document = fetch_document(&app).await;
    let check = Checker {
        schemas: Schemas::of(&document),
        document,
    };
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
                    "internalTag": "openapi", "webhookUrl": receiver.url("/hook") })
        })
        .collect();
    let batch = json!({ "requests": items });
    let (status, created) = call(&app, Method::POST, "/v1/requests", &token, Some(&batch)).await;
    assert_eq!(status, 200, "{created}");
    check.answer("/v1/requests", "post", status, &created, "batch create");

    // A batch with one good and one bad entry (207), and a single create that fails validation (400).
    let mut bad = claim_inputs(90);
    bad["memberId"] = json!("");
    let mixed = json!({ "requests": [
        { "schemaId": SCHEMA, "inputs": claim_inputs(91) },
        { "schemaId": SCHEMA, "inputs": bad.clone() },
    ] });
    let (status, answer) = call(&app, Method::POST, "/v1/requests", &token, Some(&mixed)).await;
    assert_eq!(status, 207, "{answer}");
    check.answer(
        "/v1/requests",
        "post",
        status,
        &answer,
        "mixed batch create",
    );
    let failed = json!({ "requests": [{ "schemaId": SCHEMA, "inputs": bad.clone() }] });
    let (status, answer) = call(&app, Method::POST, "/v1/requests", &token, Some(&failed)).await;
    assert_eq!(status, 400, "{answer}");
    check.answer(
        "/v1/requests",
        "post",
        status,
        &answer,
        "batch whose every entry failed",
    );
    let single = json!({ "schemaId": SCHEMA, "inputs": bad });
    let (status, answer) = call(&app, Method::POST, "/v1/requests", &token, Some(&single)).await;
    assert_eq!(
        (status, &answer["error"]),
        (400, &json!("INVALID_INPUTS")),
        "{answer}"
    );
    check.answer(
        "/v1/requests",
        "post",
        status,
        &answer,
        "invalid single create",
    );

    let entries = created["requests"].as_array().unwrap();
    for (scenario, entry) in scenarios.iter().zip(entries) {
        let id = entry["requestId"].as_str().unwrap();
        let body = match *scenario {
            "stuck" => {
                call(
                    &app,
                    Method::GET,
                    &format!("/v1/requests/{id}"),
                    &token,
                    None,
                )
                .await
                .1
            }
            _ => app.wait_terminal(&token, id).await,
        };
        check.answer(
            "/v1/requests/{requestId}",
            "get",
            200,
            &body,
            &format!("read of {scenario}"),
        );
    }

    let batch = entries[0]["requestBatchId"].as_str().unwrap();
    let path = format!("/v1/requests?requestBatchId={batch}&pageSize=3");
    let (status, body) = call(&app, Method::GET, &path, &token, None).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["nextPageToken"].is_string(), "{body}");
    check.answer("/v1/requests", "get", status, &body, "list page");

    // The other error shapes: bearer 401 and /v1/auth 401.
    let (status, body) = call(&app, Method::GET, "/v1/requests", "not-a-jwt", None).await;
    assert_eq!(status, 401);
    check.answer(
        "/v1/requests",
        "get",
        status,
        &body,
        "list with a bad token",
    );
    let response = app.auth_with(&[("Switchboard-API-Key", LIVE_KEY)]).await;
    let (status, body) = status_and_json(response).await;
    assert_eq!(
        (status, &body),
        (401, &json!({ "error": "MISSING_API_SECRET" }))
    );
    check.answer("/v1/auth", "get", status, &body, "auth without secret");

    // Every finished request's webhook, as delivered.
    let webhook = json!({ "$ref": "#/components/schemas/WebhookPayloadOut" });
    let delivered = receiver
        .wait_for(scenarios.len() - 1, Duration::from_secs(20))
        .await;
    assert!(
        delivered.len() >= scenarios.len() - 1,
        "{} webhooks",
        delivered.len()
    );
    for received in delivered {
        check
            .schemas
            .assert_valid(&webhook, &received.json(), "a delivered webhook");
    }
}
