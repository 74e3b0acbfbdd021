//! The hand-off from booking to orchestration: a request runs when its business day comes, not before.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig};

fn sandbox_item(scenario: &str) -> Value {
    json!({
        "schemaId": "vob-basic",
        "inputs": {
            "sandboxScenario": scenario, "payerName": "Aetna", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890"
        }
    })
}

async fn state_of(app: &TestApp, token: &str, id: &str) -> String {
    let (_, body) = status_and_json(app.get(&format!("/v1/requests/{id}"), token).await).await;
    body["state"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_request_runs_on_its_booked_day_and_not_before() {
    let mut config = TestConfig::default();
    config.dispatching();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1.into());
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let body = json!({ "requests": [sandbox_item("success"), sandbox_item("success")] });
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (status, created) = status_and_json(response).await;
    assert_eq!(status, 200, "{created}");
    let today = created["requests"][0]["requestId"]
        .as_str()
        .unwrap()
        .to_owned();
    let tomorrow = created["requests"][1]["requestId"]
        .as_str()
        .unwrap()
        .to_owned();

    assert_eq!(app.wait_terminal(&token, &today).await["state"], "SUCCESS");
    actix_web::rt::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        state_of(&app, &token, &tomorrow).await,
        "PROCESSING",
        "booked on Tuesday: not dialed on Monday"
    );
    let (_, waiting) =
        status_and_json(app.get(&format!("/v1/requests/{tomorrow}"), &token).await).await;
    assert_eq!(waiting["modality"], Value::Null, "nothing dispatched yet");

    app.advance_clock(86_400).await;
    let token = app.sandbox_token().await;
    assert_eq!(
        app.wait_terminal(&token, &tomorrow).await["state"],
        "SUCCESS"
    );
}

#[actix_web::test]
async fn a_paused_dialer_books_requests_without_running_them() {
    let app = spawn_app_with(&TestConfig::default()).await;
    let token = app.sandbox_token().await;
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&sandbox_item("success"))
        .send()
        .await
        .unwrap();
    let (_, created) = status_and_json(response).await;
    let id = created["requestId"].as_str().unwrap();
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(state_of(&app, &token, id).await, "PROCESSING");
}

async fn run_to_end(app: &TestApp, token: &str) -> Value {
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(token)
        .json(&sandbox_item("success"))
        .send()
        .await
        .unwrap();
    let (_, created) = status_and_json(response).await;
    let id = created["requestId"].as_str().unwrap().to_owned();
    assert_eq!(app.wait_terminal(token, &id).await["state"], "SUCCESS");
    status_and_json(app.get(&format!("/v1/requests/{id}"), token).await)
        .await
        .1
}

#[actix_web::test]
async fn a_request_stays_pinned_to_the_schema_version_it_ran_on() {
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let before = run_to_end(&app, &token).await;
    assert_eq!(before["scriptVersion"], "vob-basic@v1");

    let v2 = json!({
        "name": "Verification of benefits", "request_type": "vob",
        "required_inputs": ["payerName", "memberId", "patientFirstName", "patientLastName", "patientDateOfBirth", "billingProviderNpi"],
        "fields": [{ "name": "networkTier", "label": "Network tier", "description": "Which network tier applies?", "type": "alphanumeric", "required": true }]
    });
    let response = app
        .admin(
            reqwest::Method::PUT,
            "/admin/v1/schemas/vob-basic",
            Some(v2),
        )
        .await;
    assert_eq!(response.status(), 200);

    let id = before["requestId"].as_str().unwrap();
    let (_, again) = status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(
        again["results"], before["results"],
        "a finished request keeps the answers of its version"
    );
    assert_eq!(again["scriptVersion"], "vob-basic@v1");
    assert!(again["results"].get("networkTier").is_none());
    let (_, detail) = status_and_json(app.get("/v1/schemas/vob-basic", &token).await).await;
    let names: Vec<&str> = detail["resultsFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["networkTier"],
        "the schema endpoint describes the latest version"
    );

    let after = run_to_end(&app, &token).await;
    assert_eq!(after["scriptVersion"], "vob-basic@v2");
    assert!(
        after["results"].get("networkTier").is_some(),
        "{}",
        after["results"]
    );
}
