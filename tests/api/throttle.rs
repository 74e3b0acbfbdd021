//! Throttled sign-ins (operator contract section 12): failed `GET /v1/auth` exchanges per key and per
//! client address, admin and console calls with unknown tokens per address; 429 with `Retry-After`, a
//! correct secret or token included, until the window ends; one audit event per window with a `count`;
//! `switchboard_throttled_total`. Windows are shortened in the config where a test waits one out.

use std::time::{Duration, Instant};

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::helpers::{
    spawn_app, spawn_app_with, status_and_json, TestApp, TestConfig, ADMIN_TOKEN, LIVE_KEY,
    LIVE_SECRET, SANDBOX_KEY, SANDBOX_SECRET,
};
use crate::openapi::{fetch_document, response_schema, Schemas};

async fn exchange(app: &TestApp, key: &str, secret: &str, client: Option<&str>) -> Response {
    let mut request = app
        .client
        .get(app.url("/v1/auth"))
        .header("Switchboard-API-Key", key)
        .header("Switchboard-API-Secret", secret);
    if let Some(client) = client {
        request = request.header("X-Forwarded-For", client);
    }
    request.send().await.unwrap()
}

/// The `Retry-After` seconds of a 429, checked to be within the window.
fn retry_after(response: &Response, window_s: u64) -> u64 {
    let seconds: u64 = response
        .headers()
        .get("retry-after")
        .expect("a 429 names when to retry")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=window_s).contains(&seconds), "Retry-After {seconds}");
    seconds
}

async fn assert_auth_throttled(
    app: &TestApp,
    key: &str,
    secret: &str,
    client: Option<&str>,
    what: &str,
) {
    let response = exchange(app, key, secret, client).await;
    assert_eq!(response.status(), 429, "{what}");
    retry_after(&response, 60);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body, json!({ "error": "TOO_MANY_REQUESTS" }), "{what}");
    // The served document describes this answer.
    let document = fetch_document(app).await;
    let operation = &document["paths"]["/v1/auth"]["get"];
    let schema = response_schema(&document, operation, 429).expect("a documented 429");
    Schemas::of(&document).assert_valid(&schema, &body, what);
}

async fn admin_call(app: &TestApp, token: &str) -> Response {
    app.client
        .get(app.url("/admin/v1/operators"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

async fn metric(app: &TestApp, kind: &str) -> u64 {
    let text = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = format!("switchboard_throttled_total{{kind=\"{kind}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series} in /metrics"))
        .parse()
        .unwrap()
}

/// Every `action` event, once the log holds at least `at_least` of them (reads are written within a
/// second, and a window's event within a second of its end).
async fn events(app: &TestApp, action: &str, at_least: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut events = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let path = match &next {
                Some(token) => {
                    format!("/admin/v1/audit?action={action}&pageSize=500&pageToken={token}")
                }
                None => format!("/admin/v1/audit?action={action}&pageSize=500"),
            };
            let (status, page) = status_and_json(app.admin(Method::GET, &path, None).await).await;
            if status == 429 {
                // The reader shares the throttled address: wait for the window to end.
                actix_web::rt::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            assert_eq!(status, 200, "{page}");
            events.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["nextPageToken"].as_str() {
                Some(token) => next = Some(token.to_owned()),
                None => break,
            }
        }
        if events.len() >= at_least || Instant::now() > deadline {
            return events;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn ten_failed_exchanges_for_a_key_refuse_it_even_with_its_secret_but_not_other_keys() {
    let app = spawn_app().await;
    for n in 0..10 {
        let response = exchange(&app, LIVE_KEY, "wrong-secret", None).await;
        assert_eq!(response.status(), 401, "failure {n}");
    }
    assert_auth_throttled(&app, LIVE_KEY, LIVE_SECRET, None, "the right secret").await;
    assert_auth_throttled(&app, LIVE_KEY, "wrong-secret", None, "a wrong secret").await;
    // The address made 12 failures of its 50: another key still exchanges.
    let (status, body) = app.auth(SANDBOX_KEY, SANDBOX_SECRET).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(metric(&app, "auth_key").await, 2);
    assert_eq!(metric(&app, "auth_address").await, 0);
}

#[actix_web::test]
async fn fifty_failed_exchanges_from_an_address_refuse_every_key_from_it_and_no_other_address() {
    let mut config = TestConfig::default();
    // The test client is the peer; as a trusted proxy it names each call's client address.
    config.set("server.trusted_proxies", vec!["127.0.0.1"]);
    let app = spawn_app_with(&config).await;
    let attacker = Some("203.0.113.7");
    // Distinct unknown keys, so no key's own count is reached; one call without a key counts too.
    for n in 0..49 {
        let response = exchange(&app, &format!("sk_guess_{n}"), "x", attacker).await;
        assert_eq!(response.status(), 401, "failure {n}");
    }
    let response = app
        .client
        .get(app.url("/v1/auth"))
        .header("X-Forwarded-For", "203.0.113.7")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401, "no key at all");
    assert_auth_throttled(&app, LIVE_KEY, LIVE_SECRET, attacker, "a valid pair").await;
    let response = exchange(&app, LIVE_KEY, LIVE_SECRET, Some("203.0.113.8")).await;
    assert_eq!(response.status(), 200, "another address");
    assert_eq!(metric(&app, "auth_address").await, 1);
}

#[actix_web::test]
async fn a_throttled_key_exchanges_again_once_its_window_has_passed() {
    let mut config = TestConfig::default();
    config
        .set("throttle.window_s", 2)
        .set("throttle.auth_failures_per_key", 3);
    let app = spawn_app_with(&config).await;
    for _ in 0..3 {
        assert_eq!(exchange(&app, LIVE_KEY, "wrong", None).await.status(), 401);
    }
    let refused = exchange(&app, LIVE_KEY, LIVE_SECRET, None).await;
    assert_eq!(refused.status(), 429);
    let wait = retry_after(&refused, 2);
    actix_web::rt::time::sleep(Duration::from_secs(wait) + Duration::from_millis(100)).await;
    let (status, body) = app.auth(LIVE_KEY, LIVE_SECRET).await;
    assert_eq!(status, 200, "after Retry-After: {body}");
}

#[actix_web::test]
async fn twenty_admin_calls_with_unknown_tokens_refuse_the_address_the_admin_token_included() {
    let app = spawn_app().await;
    for n in 0..20 {
        let response = admin_call(&app, &format!("guess-{n}")).await;
        assert_eq!(response.status(), 401, "failure {n}");
    }
    let response = admin_call(&app, ADMIN_TOKEN).await;
    assert_eq!(response.status(), 429);
    retry_after(&response, 60);
    let (_, body) = status_and_json(response).await;
    assert_eq!(body["error"], "TOO_MANY_REQUESTS", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("retry after"),
        "{body}"
    );
    assert_eq!(
        body.as_object().unwrap().len(),
        2,
        "the standard envelope: {body}"
    );
    // The console takes the admin token: the same count refuses it.
    let response = app
        .client
        .get(app.url("/console/api/session"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(metric(&app, "admin_address").await, 2);
    // API calls with a valid bearer token are not the admin API's business.
    let token_status = app
        .client
        .get(app.url("/v1/schemas"))
        .bearer_auth(app.sandbox_token().await)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(token_status, 200);
}

#[actix_web::test]
async fn failed_console_sign_ins_count_towards_the_admin_throttle() {
    let mut config = TestConfig::default();
    config.set("throttle.admin_failures_per_address", 3);
    let app = spawn_app_with(&config).await;
    for n in 0..3 {
        let response = app
            .client
            .get(app.url("/console/api/session"))
            .bearer_auth(format!("not-a-token-{n}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "failure {n}");
    }
    assert_eq!(admin_call(&app, ADMIN_TOKEN).await.status(), 429);
}

#[actix_web::test]
async fn a_flood_of_bad_admin_calls_is_audited_as_its_failures_and_one_event_with_the_refused_count(
) {
    const CALLS: usize = 300;
    let mut config = TestConfig::default();
    config.set("throttle.window_s", 2);
    let app = spawn_app_with(&config).await;
    let started = Instant::now();
    for n in 0..CALLS {
        let status = admin_call(&app, "a-guessed-token").await.status();
        assert!(status == 401 || status == 429, "call {n}: {status}");
    }
    let one_window = started.elapsed() < Duration::from_millis(1900);
    // The reader of the log calls from the same address: let the last window end first, so that every
    // refusal counted is one of the flood's.
    actix_web::rt::time::sleep(Duration::from_millis(2100)).await;
    // A window's event is written within a second of its end: wait until every call is accounted for.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (single, aggregated, refused) = loop {
        let denied = events(&app, "admin.access", 0).await;
        let (aggregated, single): (Vec<Value>, Vec<Value>) = denied
            .into_iter()
            .partition(|event| event.get("count").is_some());
        let refused: u64 = aggregated
            .iter()
            .map(|event| event["count"].as_u64().unwrap())
            .sum();
        if refused as usize + single.len() >= CALLS || Instant::now() > deadline {
            break (single, aggregated, refused);
        }
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        refused as usize + single.len(),
        CALLS,
        "every call accounted for"
    );
    assert_eq!(refused, metric(&app, "admin_address").await);
    // At most 20 failures one by one and one event of refusals per window.
    assert!(
        single.len() <= 20 * aggregated.len().max(1),
        "{} single events",
        single.len()
    );
    let event = &aggregated[0];
    assert_eq!(event["outcome"], "denied", "{event}");
    assert_eq!(event["ip"], "127.0.0.1", "{event}");
    assert_eq!(
        event["actor"],
        json!({ "kind": "operator", "id": "unknown" }),
        "{event}"
    );
    assert!(
        event.get("target").is_none(),
        "an address names no route: {event}"
    );
    if one_window {
        assert_eq!(
            (single.len(), refused),
            (20, CALLS as u64 - 20),
            "one window"
        );
    }
}

#[actix_web::test]
async fn a_throttled_key_is_audited_as_one_event_with_its_count_naming_the_credential() {
    let mut config = TestConfig::default();
    config
        .set("throttle.window_s", 1)
        .set("throttle.auth_failures_per_key", 2);
    let app = spawn_app_with(&config).await;
    for _ in 0..2 {
        assert_eq!(exchange(&app, LIVE_KEY, "wrong", None).await.status(), 401);
    }
    for _ in 0..5 {
        assert_eq!(
            exchange(&app, LIVE_KEY, LIVE_SECRET, None).await.status(),
            429
        );
    }
    actix_web::rt::time::sleep(Duration::from_millis(1100)).await;
    let exchanges = events(&app, "auth.token", 3).await;
    let aggregated: Vec<&Value> = exchanges
        .iter()
        .filter(|event| event.get("count").is_some())
        .collect();
    assert_eq!(aggregated.len(), 1, "{exchanges:?}");
    let event = aggregated[0];
    assert_eq!(event["count"], 5, "{event}");
    assert_eq!(event["outcome"], "denied", "{event}");
    assert_eq!(event["target"]["kind"], "account", "{event}");
    assert_eq!(event["actor"]["kind"], "api_key", "{event}");
    assert_ne!(
        event["actor"]["id"], "unknown",
        "the credential is named: {event}"
    );
    // The count is part of what the chain hashes: the log still verifies.
    let (status, verified) =
        status_and_json(app.admin(Method::GET, "/admin/v1/audit/verify", None).await).await;
    assert_eq!(
        (status, verified["ok"].clone()),
        (200, json!(true)),
        "{verified}"
    );
}
