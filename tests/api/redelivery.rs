//! `POST /admin/v1/webhook-deliveries/{requestId}/redeliver` (operator contract section 3): a terminal
//! request's webhook is sent again at once, signed as usual, outside the rounds; it shows in the delivery
//! log, the metrics and the audit log; 409 while the request is `PROCESSING`, 404 for an unknown id, 403 for
//! support; a redelivery asked while a round is being sent waits for it; and an acknowledged redelivery
//! survives a kill -9.

use std::time::Duration;

use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::{
    create_vob, spawn_app, spawn_app_with, status_and_json, write_config, Api, BinaryServer,
    TestApp, TestConfig, ADMIN_TOKEN, SANDBOX_KEY,
};
use crate::receiver::{Receiver, Reply};

const LIMIT: Duration = Duration::from_secs(10);
/// Several dispatcher ticks: what has not arrived by then is not coming.
const QUIET: Duration = Duration::from_millis(500);

fn config() -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true)
        .set(
            "webhooks.inline_backoff_ms",
            toml::Value::Array(vec![toml::Value::Integer(50)]),
        );
    config
}

fn sandbox_to(url: &str) -> Value {
    json!({
        "schemaId": "vob-basic",
        "webhookUrl": url,
        "inputs": {
            "payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890",
            "sandboxScenario": "success"
        }
    })
}

fn redeliver_path(id: &str) -> String {
    format!("/admin/v1/webhook-deliveries/{id}/redeliver")
}

async fn deliveries(api: &Api, id: &str) -> Value {
    let (status, log) = api
        .send(
            Method::GET,
            &format!("/admin/v1/webhook-deliveries?requestId={id}"),
            ADMIN_TOKEN,
            None,
        )
        .await;
    assert_eq!(status, 200, "{log}");
    log
}

/// Polls the delivery log until `until` holds.
async fn wait_log(api: &Api, id: &str, until: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        let log = deliveries(api, id).await;
        if until(&log) {
            return log;
        }
        assert!(std::time::Instant::now() < deadline, "never: {log}");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn redeliver(api: &Api, id: &str) -> (u16, Value) {
    api.send(Method::POST, &redeliver_path(id), ADMIN_TOKEN, None)
        .await
}

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

async fn redeliveries_counted(app: &TestApp) -> u64 {
    let text = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("switchboard_webhook_redeliveries_total "))
        .unwrap_or_else(|| panic!("no redelivery counter in {text}"))
        .trim()
        .parse()
        .unwrap()
}

#[actix_web::test]
async fn a_delivered_webhook_is_sent_again_signed_as_usual_logged_counted_and_audited() {
    let receiver = Receiver::start().await;
    let app = spawn_app_with(&config()).await;
    let token = app.sandbox_token().await;
    let id = app
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;
    receiver.wait_for(1, LIMIT).await;
    wait_log(&app, &id, |log| log["status"] == "delivered").await;
    assert_eq!(redeliveries_counted(&app).await, 0);

    let (status, body) = redeliver(&app, &id).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body, json!({ "requestId": id, "status": "accepted" }));

    let got = receiver.wait_for(2, LIMIT).await;
    assert_eq!(got[1].body, got[0].body, "the same payload");
    assert_eq!(
        got[1].header("x-webhook-signature"),
        Some(hmac_hex(SANDBOX_KEY, &got[1].body).as_str()),
        "signed with the sandbox key, as the first delivery"
    );
    // The attempt is logged before it is sent, and its outcome once the receiver answered.
    let log = wait_log(&app, &id, |log| {
        log["deliveries"].as_array().is_some_and(|a| a.len() == 2)
            && !log["deliveries"][1]["statusCode"].is_null()
    })
    .await;
    assert_eq!(log["status"], "delivered", "{log}");
    let resent = &log["deliveries"][1];
    assert_eq!(resent["redelivery"], 1, "{log}");
    assert_eq!(resent["statusCode"], 200, "{log}");
    assert!(
        log["deliveries"][0].get("redelivery").is_none(),
        "a round's attempt carries no redelivery: {log}"
    );
    assert_eq!(redeliveries_counted(&app).await, 1);
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(receiver.received().len(), 2, "sent once per call");

    let (status, audit) = app
        .send(
            Method::GET,
            "/admin/v1/audit?action=webhook.redeliver",
            ADMIN_TOKEN,
            None,
        )
        .await;
    assert_eq!(status, 200, "{audit}");
    let events = audit["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{audit}");
    assert_eq!(
        events[0]["actor"],
        json!({ "kind": "operator", "id": "admin" })
    );
    assert_eq!(events[0]["target"], json!({ "kind": "request", "id": id }));
    assert_eq!(events[0]["outcome"], "ok");

    // Reading the delivery log (the webhook's URL is the request's data) is a read of the request.
    let deadline = std::time::Instant::now() + LIMIT;
    loop {
        let (status, reads) = app
            .send(
                Method::GET,
                &format!("/admin/v1/audit?action=request.read&targetId={id}&actor=admin"),
                ADMIN_TOKEN,
                None,
            )
            .await;
        assert_eq!(status, 200, "{reads}");
        let by_admin = reads["events"].as_array().unwrap();
        if !by_admin.is_empty() {
            assert_eq!(
                by_admin[0]["actor"],
                json!({ "kind": "operator", "id": "admin" })
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no read audited: {reads}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_web::test]
async fn a_rejected_delivery_sent_again_and_acknowledged_reads_delivered() {
    let receiver = Receiver::start().await;
    // A 404 rejects the delivery for good after one attempt.
    receiver.respond_with(vec![Reply::Status(404)]);
    let app = spawn_app_with(&config()).await;
    let token = app.sandbox_token().await;
    let id = app
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;
    wait_log(&app, &id, |log| log["status"] == "rejected").await;

    let (status, body) = redeliver(&app, &id).await;
    assert_eq!(status, 202, "{body}");
    let log = wait_log(&app, &id, |log| log["status"] == "delivered").await;
    assert_eq!(log["deliveries"].as_array().unwrap().len(), 2, "{log}");
    assert_eq!(receiver.wait_for(2, LIMIT).await.len(), 2);
}

#[actix_web::test]
async fn a_redelivery_asked_while_a_round_is_being_sent_waits_for_it_and_is_sent_after_it() {
    let receiver = Receiver::start().await;
    // The first round's attempt is held long enough for the redelivery to arrive in the middle of it.
    receiver.respond_with(vec![Reply::Delay(Duration::from_millis(800), 200)]);
    let app = spawn_app_with(&config()).await;
    let token = app.sandbox_token().await;
    let id = app
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;
    receiver.wait_for(1, LIMIT).await;

    let (status, body) = redeliver(&app, &id).await;
    assert_eq!(
        status, 202,
        "accepted, not refused while the round runs: {body}"
    );
    let got = receiver.wait_for(2, LIMIT).await;
    assert!(
        got[1].at >= got[0].at + Duration::from_millis(800),
        "sent after the round's attempt was answered"
    );
    let log = wait_log(&app, &id, |log| {
        log["deliveries"].as_array().is_some_and(|a| a.len() == 2)
    })
    .await;
    assert!(log["deliveries"][0].get("redelivery").is_none(), "{log}");
    assert_eq!(log["deliveries"][1]["redelivery"], 1, "{log}");
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(
        receiver.received().len(),
        2,
        "the round once, the redelivery once"
    );
}

#[actix_web::test]
async fn redelivery_answers_409_while_processing_404_for_an_unknown_id_and_403_to_support() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    // Dispatch is paused: the request stays PROCESSING.
    let id = create_vob(&app, &token).await;
    let (status, body) = app
        .send(Method::POST, &redeliver_path(&id), ADMIN_TOKEN, None)
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], "CONFLICT", "{body}");

    let unknown = "01890a5d-ac96-774b-bcce-b302099a8057";
    let (status, body) = app
        .send(Method::POST, &redeliver_path(unknown), ADMIN_TOKEN, None)
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"], "REQUEST_NOT_FOUND", "{body}");

    let (status, created) = status_and_json(
        app.admin(
            Method::POST,
            "/admin/v1/operators",
            Some(json!({ "name": "sam", "role": "support" })),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let support = created["token"].as_str().unwrap();
    let (status, body) = app
        .send(Method::POST, &redeliver_path(&id), support, None)
        .await;
    assert_eq!((status, body), (403, json!({ "error": "FORBIDDEN" })));
}

#[actix_web::test]
async fn a_purged_request_answers_404() {
    let receiver = Receiver::start().await;
    let app = spawn_app_with(&config()).await;
    let token = app.sandbox_token().await;
    let id = app
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;
    wait_log(&app, &id, |log| log["status"] == "delivered").await;
    let purged = app
        .admin(Method::DELETE, &format!("/admin/v1/requests/{id}"), None)
        .await;
    assert_eq!(purged.status(), 204);
    let (status, body) = app
        .send(Method::POST, &redeliver_path(&id), ADMIN_TOKEN, None)
        .await;
    assert_eq!(status, 404, "{body}");
}

#[actix_web::test]
async fn an_acknowledged_redelivery_is_sent_after_a_kill_9_and_only_once() {
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config_path = write_config(config_dir.path(), &config());
    let first = BinaryServer::start_ready(&config_path, data_dir.path()).await;
    let token = first.sandbox_token().await;
    let id = first
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;
    receiver.wait_for(1, LIMIT).await;
    wait_log(&first, &id, |log| log["status"] == "delivered").await;

    // The redelivery's attempt hangs at the receiver, so the server dies before it can record it.
    receiver.respond_with(vec![Reply::Delay(Duration::from_secs(30), 200)]);
    let (status, body) = redeliver(&first, &id).await;
    assert_eq!(status, 202, "{body}");
    // Killed once the attempt hangs at the receiver: a kill before it was sent would leave the scripted
    // hang to the attempt after the restart, which then times out and is retried.
    receiver.wait_for(2, LIMIT).await;
    first.kill_hard();
    // An attempt written to the socket just before the kill still reaches the receiver: count after it
    // had the time to land, or it would pass for a send after the restart.
    actix_web::rt::time::sleep(QUIET).await;
    let before = receiver.received().len();

    let second = BinaryServer::start_ready(&config_path, data_dir.path()).await;
    let log = wait_log(&second, &id, |log| {
        log["deliveries"].as_array().is_some_and(|a| {
            a.iter()
                .any(|d| d["redelivery"] == 1 && d["statusCode"] == 200)
        })
    })
    .await;
    assert_eq!(log["status"], "delivered", "{log}");
    let got = receiver.wait_for(before + 1, LIMIT).await;
    assert_eq!(got.last().unwrap().body, got[0].body);
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(
        receiver.received().len(),
        before + 1,
        "once after the restart, and not again"
    );
}

#[actix_web::test]
async fn a_terminal_request_without_a_webhook_url_answers_409() {
    let app = spawn_app_with(&config()).await;
    let token = app.sandbox_token().await;
    let mut item = sandbox_to("http://unused.invalid/hook");
    item.as_object_mut().unwrap().remove("webhookUrl");
    let id = app.create_request(&token, &item).await;
    app.wait_terminal(&token, &id).await;
    let (status, body) = app
        .send(Method::POST, &redeliver_path(&id), ADMIN_TOKEN, None)
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], "CONFLICT", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("no webhook"),
        "{body}"
    );
}

#[actix_web::test]
async fn a_webhook_sent_just_before_a_kill_9_shows_in_the_log_beside_its_second_delivery() {
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config_path = write_config(config_dir.path(), &config());
    let first = BinaryServer::start_ready(&config_path, data_dir.path()).await;
    let token = first.sandbox_token().await;
    // The first round's attempt reaches the receiver, which holds its answer until the server is gone.
    receiver.respond_with(vec![Reply::Delay(Duration::from_secs(30), 200)]);
    let id = first
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;
    receiver.wait_for(1, LIMIT).await;
    first.kill_hard();

    let second = BinaryServer::start_ready(&config_path, data_dir.path()).await;
    let log = wait_log(&second, &id, |log| log["status"] == "delivered").await;
    let attempts = log["deliveries"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "both deliveries are in the log: {log}");
    assert!(attempts[0]["statusCode"].is_null(), "{log}");
    assert!(
        attempts[0]["error"]
            .as_str()
            .is_some_and(|error| error.contains("no outcome recorded")),
        "{log}"
    );
    assert_eq!(attempts[1]["statusCode"], 200, "{log}");
    assert_eq!(
        receiver.received().len(),
        2,
        "delivered at least once: twice here"
    );
}
