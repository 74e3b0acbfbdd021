//! Supervision of the singleton actors (capacity scheduler, webhook dispatcher, orchestrator): a panic inside
//! one, injected through the admin faults API, restarts it, is counted in `/metrics`, and the service keeps
//! creating, running and delivering.

use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig};
use crate::receiver::Receiver;

fn config() -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    config
}

fn sandbox_item(url: &str, internal_id: &str) -> Value {
    json!({
        "schemaId": "vob-basic",
        "internalId": internal_id,
        "webhookUrl": url,
        "inputs": {
            "payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890",
            "sandboxScenario": "success"
        }
    })
}

async fn create(app: &TestApp, token: &str, item: &Value) -> String {
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(token)
        .json(item)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body["requestId"].as_str().unwrap().to_owned()
}

async fn restarts(app: &TestApp, actor: &str) -> u64 {
    let text = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = format!("switchboard_singleton_restarts_total{{actor=\"{actor}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        .parse()
        .unwrap()
}

async fn inject(app: &TestApp, actor: &str) {
    let response = app
        .admin(
            Method::POST,
            &format!("/admin/v1/faults/actor-panic/{actor}"),
            None,
        )
        .await;
    assert_eq!(response.status(), 204);
}

/// After a panic in `actor` (path name) counted under `label`, a new request is created, runs to its end
/// and its webhook arrives; a replay of an earlier internal id still returns the earlier request.
async fn the_service_survives_a_panic_in(actor: &str, label: &str) {
    let receiver = Receiver::start().await;
    let app = spawn_app_with(&config()).await;
    let token = app.sandbox_token().await;
    let url = receiver.url("/hook");
    let before = create(&app, &token, &sandbox_item(&url, "before")).await;
    app.wait_terminal(&token, &before).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(restarts(&app, label).await, 0);

    inject(&app, actor).await;
    assert_eq!(restarts(&app, label).await, 1);

    let after = create(&app, &token, &sandbox_item(&url, "after")).await;
    let read = app.wait_terminal(&token, &after).await;
    assert_eq!(read["state"], "SUCCESS", "{read}");
    let received = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert!(
        received
            .iter()
            .any(|r| r.json()["requestId"] == after.as_str()),
        "no webhook for {after}"
    );
    assert_eq!(
        create(&app, &token, &sandbox_item(&url, "before")).await,
        before,
        "a replay still returns the earlier request"
    );
    // A second fault is counted too: the supervisor keeps restarting.
    inject(&app, actor).await;
    assert_eq!(restarts(&app, label).await, 2);
}

#[actix_web::test]
async fn a_panic_inside_the_capacity_scheduler_restarts_it_and_creation_goes_on() {
    the_service_survives_a_panic_in("capacity-scheduler", "capacity_scheduler").await;
}

#[actix_web::test]
async fn a_panic_inside_the_webhook_dispatcher_restarts_it_and_webhooks_go_on() {
    the_service_survives_a_panic_in("webhook-dispatcher", "webhook_dispatcher").await;
}

#[actix_web::test]
async fn a_panic_inside_the_orchestrator_restarts_it_and_requests_still_run() {
    the_service_survives_a_panic_in("orchestrator", "orchestrator").await;
}

#[actix_web::test]
async fn an_unknown_actor_is_a_404_envelope() {
    let app = spawn_app_with(&config()).await;
    let response = app
        .admin(Method::POST, "/admin/v1/faults/actor-panic/nobody", None)
        .await;
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "NOT_FOUND", "{body}");
}
