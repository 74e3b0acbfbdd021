//! Outbound webhooks, black-box against a real local receiver (service-interface 6, 8; operator contract
//! `[webhooks]` and `/admin/v1/webhook-deliveries`): the sorted minimal payload, once per request and only
//! after the request reads as terminal; the signing secret of each environment; destination precedence;
//! the inline retry ladder, terminal 400/404, retried 401/403, delayed rounds on the manual clock and
//! exhaustion; timeouts and refused connections; per-destination isolation (also under a backlog larger
//! than the dispatcher's batch); private-target refusal at creation; and a pending delivery that survives
//! a restart.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::{
    spawn_app_with, status_and_json, write_config, Api, BinaryServer, TestConfig, ADMIN_TOKEN,
    LIVE_KEY, SANDBOX_KEY, TERMINAL,
};
use crate::receiver::{Receiver, Reply};

// ---- helpers ----------------------------------------------------------------------------------------

/// The short inline ladder most tests use, in milliseconds.
const BACKOFF_MS: [u64; 3] = [50, 100, 200];
/// The default delayed rounds, in seconds after the terminal state.
const ROUNDS_S: [i64; 3] = [900, 7_200, 86_400];
/// An account-level webhook secret.
const WEBHOOK_SECRET: &str = "whsec_webhook_tests_5Jd8";
/// How long anything awaited may take, and how often it is polled meanwhile.
const LIMIT: Duration = Duration::from_secs(10);
const STEP: Duration = Duration::from_millis(20);
/// Long enough for several dispatcher ticks (100 ms): what has not arrived by then is not coming.
const QUIET: Duration = Duration::from_millis(400);

/// Dispatching, loopback targets allowed (the receiver is on 127.0.0.1), the short inline ladder.
fn config() -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true)
        .set(
            "webhooks.inline_backoff_ms",
            toml::Value::Array(
                BACKOFF_MS
                    .iter()
                    .map(|&ms| toml::Value::Integer(ms as i64))
                    .collect(),
            ),
        );
    config
}

/// A `vob-basic` request item; `scenario` makes it a sandbox scenario (production requests take none).
fn item(scenario: Option<&str>, webhook_url: Option<&str>) -> Value {
    let mut item = json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890"
        }
    });
    if let Some(scenario) = scenario {
        item["inputs"]["sandboxScenario"] = json!(scenario);
    }
    if let Some(url) = webhook_url {
        item["webhookUrl"] = json!(url);
    }
    item
}

/// A sandbox `success` request item sending its webhook to `url`.
fn sandbox_to(url: &str) -> Value {
    item(Some("success"), Some(url))
}

/// A sandbox request of `api` whose webhook goes to `url`: its id.
async fn created_to(api: &Api, url: &str) -> String {
    api.create_request(&api.sandbox_token().await, &sandbox_to(url))
        .await
}

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn instant(value: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(
        value
            .as_str()
            .unwrap_or_else(|| panic!("{value} is a timestamp")),
    )
    .unwrap()
    .with_timezone(&Utc)
}

fn attempts(log: &Value) -> &Vec<Value> {
    log["deliveries"]
        .as_array()
        .unwrap_or_else(|| panic!("{log}"))
}

fn gap(later: Instant, earlier: Instant) -> Duration {
    later.duration_since(earlier)
}

/// The delivery log of `/admin/v1/webhook-deliveries`, read and awaited through the test client.
trait Deliveries {
    /// `GET /admin/v1/webhook-deliveries?requestId=id`.
    async fn deliveries(&self, id: &str) -> Value;

    /// Polls the delivery log until `until` holds.
    async fn wait_delivery(&self, id: &str, what: &str, until: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + LIMIT;
        loop {
            let log = self.deliveries(id).await;
            if until(&log) {
                return log;
            }
            assert!(Instant::now() < deadline, "never {what}: {log}");
            actix_web::rt::time::sleep(STEP).await;
        }
    }

    /// Waits until a round has finished and the delivery is pending for round `next`.
    async fn wait_pending_for(&self, id: &str, next: u64) -> Value {
        self.wait_delivery(id, &format!("pending for round {next}"), |log| {
            log["status"] == "pending" && log["nextRound"] == next
        })
        .await
    }

    async fn wait_status(&self, id: &str, status: &str) -> Value {
        self.wait_delivery(id, status, |log| log["status"] == status)
            .await
    }
}

impl Deliveries for Api {
    async fn deliveries(&self, id: &str) -> Value {
        let (status, body) = self
            .get_json(
                &format!("/admin/v1/webhook-deliveries?requestId={id}"),
                ADMIN_TOKEN,
            )
            .await;
        assert_eq!(status, 200, "deliveries of {id}: {body}");
        body
    }
}

// ---- 1. payload -------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_payload_is_the_sorted_minimal_body_sent_once_after_the_request_is_terminal() {
    let receiver = Receiver::start().await;
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let url = receiver.url("/hook");
    let mut tagged = sandbox_to(&url);
    tagged["internalId"] = json!("claim-0042");
    tagged["internalTag"] = json!("east-team");
    let mut id_only = sandbox_to(&url);
    id_only["internalId"] = json!("claim-0043");
    let mut tag_only = sandbox_to(&url);
    tag_only["internalTag"] = json!("west-team");
    let plain = sandbox_to(&url);
    let (status, created) = api
        .post_requests(
            &token,
            &json!({ "requests": [tagged, id_only, tag_only, plain] }),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    let ids: Vec<String> = created["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["requestId"].as_str().unwrap().to_owned())
        .collect();
    let batch = created["requests"][0]["requestBatchId"].as_str().unwrap();

    let got = receiver.wait_for(4, LIMIT).await;
    for webhook in &got {
        let id = webhook.json()["requestId"].as_str().unwrap().to_owned();
        // Read at once: the request must already be terminal when its webhook arrives.
        let request = api.read_request(&token, &id).await;
        assert_eq!(
            request["state"], "SUCCESS",
            "terminal before its webhook: {request}"
        );
        let which = ids.iter().position(|i| *i == id).expect("a known request");
        let extra = match which {
            0 => r#""internalId":"claim-0042","internalTag":"east-team","#,
            1 => r#""internalId":"claim-0043","#,
            2 => r#""internalTag":"west-team","#,
            _ => "",
        };
        let expected = format!(
            r#"{{{extra}"requestBatchId":"{batch}","requestId":"{id}","state":"SUCCESS"}}"#
        );
        assert_eq!(webhook.text(), expected, "exact bytes, keys sorted");
        assert_eq!(webhook.method, "POST");
        assert_eq!(webhook.path, "/hook");
        assert_eq!(webhook.header("content-type"), Some("application/json"));

        // The server learns of the answer only once the receiver gives it, and records it after.
        let log = api
            .wait_delivery(&id, "delivered", |log| log["status"] != "pending")
            .await;
        assert_eq!(log["status"], "delivered", "{log}");
        assert_eq!(attempts(&log).len(), 1, "{log}");
        let attempt = &attempts(&log)[0];
        assert!(
            instant(&attempt["at"]) >= instant(&request["completedAt"]),
            "sent no earlier than completion: {attempt} vs {request}"
        );
    }

    actix_web::rt::time::sleep(QUIET).await;
    let got = receiver.received();
    assert_eq!(got.len(), 4, "one webhook per request");
    let mut seen: Vec<String> = got
        .iter()
        .map(|w| w.json()["requestId"].as_str().unwrap().to_owned())
        .collect();
    seen.sort();
    let mut expected_ids = ids.clone();
    expected_ids.sort();
    assert_eq!(seen, expected_ids);
}

// ---- 2. signature -----------------------------------------------------------------------------------

/// Asserts the webhook's signature is the HMAC under `secret` (and under none of `not`).
fn assert_signed(webhook: &crate::receiver::Received, secret: &str, not: &[&str]) {
    let signature = webhook
        .header("x-webhook-signature")
        .expect("X-Webhook-Signature is sent");
    assert_eq!(signature.len(), 64, "{signature}");
    assert!(
        signature
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "bare lowercase hex: {signature}"
    );
    assert_eq!(
        signature,
        hmac_hex(secret, &webhook.body),
        "signed with {secret}"
    );
    for other in not {
        assert_ne!(
            signature,
            hmac_hex(other, &webhook.body),
            "not with {other}"
        );
    }
}

#[actix_web::test]
async fn partial_and_failure_requests_get_their_state_in_the_webhook() {
    let receiver = Receiver::start().await;
    let mut config = config();
    // A partial ending needs a follow-up leg: claim-status-basic on an account with follow_up_calls.
    config.features(&["follow_up_calls"]);
    let app = spawn_app_with(&config).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let claim = |scenario: &str, n: u32| {
        json!({
            "schemaId": "claim-status-basic",
            "webhookUrl": receiver.url("/hook"),
            "inputs": {
                "payerName": "Aetna", "phoneNumber": "8005550123",
                "memberId": format!("W{:09}", 223_456_000 + n),
                "patientFirstName": "Jane", "patientLastName": "Doe",
                "patientDateOfBirth": "1980-04-12", "dateOfService": "2026-10-01",
                "billingProviderNpi": "1234567890", "billingProviderTaxId": "12-3456789",
                "sandboxScenario": scenario
            }
        })
    };
    let (status, created) = api
        .post_requests(
            &token,
            &json!({ "requests": [claim("partial", 1), claim("failure:MEMBER_NOT_FOUND", 2)] }),
        )
        .await;
    assert_eq!(status, 200, "{created}");

    let got = receiver.wait_for(2, LIMIT).await;
    for webhook in &got {
        let body = webhook.json();
        let id = body["requestId"].as_str().unwrap();
        let request = api.read_request(&token, id).await;
        assert_eq!(body["state"], request["state"], "{body} vs {request}");
    }
    let mut states: Vec<String> = got
        .iter()
        .map(|w| w.json()["state"].as_str().unwrap().to_owned())
        .collect();
    states.sort();
    assert_eq!(states, ["FAILURE", "PARTIAL"]);
}

#[actix_web::test]
async fn sandbox_webhooks_are_signed_with_the_sandbox_key_and_production_ones_with_the_webhook_secret(
) {
    let receiver = Receiver::start().await;
    let mut config = config();
    config
        .demo_account()
        .insert("webhook_secret".into(), WEBHOOK_SECRET.into());
    let app = spawn_app_with(&config).await;
    let api = app.api.clone();
    let url = receiver.url("/signed");
    let sandbox_token = api.sandbox_token().await;
    let live_token = api.live_token().await;
    let sandbox = api.create_request(&sandbox_token, &sandbox_to(&url)).await;
    let production = api
        .create_request(&live_token, &item(None, Some(&url)))
        .await;

    let got = receiver.wait_for(2, LIMIT).await;
    for webhook in &got {
        let body = webhook.json();
        if body["requestId"] == sandbox.as_str() {
            assert_signed(webhook, SANDBOX_KEY, &[WEBHOOK_SECRET, LIVE_KEY]);
        } else {
            assert_eq!(body["requestId"], production.as_str());
            let request = api.read_request(&live_token, &production).await;
            assert_eq!(body["state"], request["state"], "any terminal state");
            assert_signed(webhook, WEBHOOK_SECRET, &[LIVE_KEY, SANDBOX_KEY]);
        }
    }
}

#[actix_web::test]
async fn without_a_webhook_secret_production_webhooks_are_signed_with_the_production_key() {
    let receiver = Receiver::start().await;
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let url = receiver.url("/signed");
    let sandbox = api
        .create_request(&api.sandbox_token().await, &sandbox_to(&url))
        .await;
    let production = api
        .create_request(&api.live_token().await, &item(None, Some(&url)))
        .await;

    let got = receiver.wait_for(2, LIMIT).await;
    for webhook in &got {
        if webhook.json()["requestId"] == sandbox.as_str() {
            assert_signed(webhook, SANDBOX_KEY, &[LIVE_KEY]);
        } else {
            assert_eq!(webhook.json()["requestId"], production.as_str());
            assert_signed(webhook, LIVE_KEY, &[SANDBOX_KEY]);
        }
    }
}

// ---- 3. destination ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_per_request_webhook_url_wins_over_the_account_url_which_serves_requests_without_one() {
    let own = Receiver::start().await;
    let account = Receiver::start().await;
    let mut config = config();
    config
        .demo_account()
        .insert("webhook_url".into(), account.url("/account").into());
    let app = spawn_app_with(&config).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let with_url = api
        .create_request(&token, &sandbox_to(&own.url("/own")))
        .await;
    let without = api
        .create_request(&token, &item(Some("success"), None))
        .await;

    own.wait_for(1, LIMIT).await;
    account.wait_for(1, LIMIT).await;
    actix_web::rt::time::sleep(QUIET).await;
    let (own_got, account_got) = (own.received(), account.received());
    assert_eq!(own_got.len(), 1);
    assert_eq!(account_got.len(), 1);
    assert_eq!(own_got[0].json()["requestId"], with_url.as_str());
    assert_eq!(own_got[0].path, "/own");
    assert_eq!(account_got[0].json()["requestId"], without.as_str());
    assert_eq!(account_got[0].path, "/account");
    assert_eq!(
        api.deliveries(&with_url).await["url"],
        own.url("/own").as_str()
    );
    assert_eq!(
        api.deliveries(&without).await["url"],
        account.url("/account").as_str()
    );
}

#[actix_web::test]
async fn without_any_webhook_url_nothing_is_sent_and_no_error_is_raised() {
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let id = api
        .create_request(&token, &item(Some("success"), None))
        .await;
    let request = api.wait_terminal_within(&token, &id, LIMIT).await;
    assert_eq!(request["state"], "SUCCESS", "{request}");
    actix_web::rt::time::sleep(QUIET).await;
    let log = api.deliveries(&id).await;
    assert_eq!(log["status"], Value::Null, "{log}");
    assert_eq!(log["url"], Value::Null, "{log}");
    assert!(attempts(&log).is_empty(), "{log}");
    assert_eq!(api.read_request(&token, &id).await["state"], "SUCCESS");
}

// ---- 4. inline ladder -------------------------------------------------------------------------------

#[actix_web::test]
async fn a_5xx_is_retried_inline_after_each_configured_backoff_until_acknowledged() {
    let receiver = Receiver::start().await;
    receiver.respond_with(vec![Reply::Status(503), Reply::Status(500)]);
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let id = created_to(&api, &receiver.url("/hook")).await;

    let got = receiver.wait_for(3, LIMIT).await;
    for (i, backoff) in BACKOFF_MS[..2].iter().enumerate() {
        let waited = gap(got[i + 1].at, got[i].at);
        let backoff = Duration::from_millis(*backoff);
        assert!(
            waited >= backoff && waited < backoff + Duration::from_secs(1),
            "retry {} after {waited:?}, backoff {backoff:?}",
            i + 1
        );
    }
    let log = api.wait_status(&id, "delivered").await;
    let codes: Vec<(u64, u64, u64)> = attempts(&log)
        .iter()
        .map(|a| {
            (
                a["round"].as_u64().unwrap(),
                a["attempt"].as_u64().unwrap(),
                a["statusCode"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(codes, [(0, 1, 503), (0, 2, 500), (0, 3, 200)], "{log}");
    assert_eq!(log["nextRound"], Value::Null);
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(receiver.received().len(), 3, "nothing after the 200");
}

#[actix_web::test]
async fn four_5xx_answers_end_round_zero_pending_the_first_delayed_round() {
    let receiver = Receiver::start().await;
    receiver.always(Reply::Status(503));
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let id = api
        .create_request(&token, &sandbox_to(&receiver.url("/hook")))
        .await;

    receiver.wait_for(4, LIMIT).await;
    let log = api.wait_pending_for(&id, 1).await;
    let completed = instant(&api.read_request(&token, &id).await["completedAt"]);
    assert_eq!(
        instant(&log["nextAttemptAt"]),
        completed + chrono::Duration::seconds(ROUNDS_S[0]),
        "{log}"
    );
    assert_eq!(attempts(&log).len(), 4, "{log}");
    for (n, attempt) in attempts(&log).iter().enumerate() {
        assert_eq!(attempt["round"], 0, "{attempt}");
        assert_eq!(attempt["attempt"], n as u64 + 1, "{attempt}");
        assert_eq!(attempt["statusCode"], 503, "{attempt}");
    }
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(
        receiver.received().len(),
        4,
        "no fifth attempt until the clock reaches round 1"
    );
}

#[actix_web::test]
async fn the_default_inline_ladder_waits_half_a_second_then_one_then_two() {
    let receiver = Receiver::start().await;
    receiver.always(Reply::Status(502));
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    let app = spawn_app_with(&config).await;
    let api = app.api.clone();
    let id = created_to(&api, &receiver.url("/hook")).await;

    let got = receiver.wait_for(4, LIMIT).await;
    for (i, backoff) in [500, 1_000, 2_000].into_iter().enumerate() {
        let waited = gap(got[i + 1].at, got[i].at);
        let backoff = Duration::from_millis(backoff);
        assert!(
            waited >= backoff && waited < backoff + Duration::from_secs(1),
            "retry {} after {waited:?}, spec backoff {backoff:?}",
            i + 1
        );
    }
    let log = api.wait_pending_for(&id, 1).await;
    assert_eq!(attempts(&log).len(), 4, "4 attempts in all: {log}");
}

// ---- 5. terminal 400 / 404 --------------------------------------------------------------------------

#[actix_web::test]
async fn a_400_or_a_404_rejects_the_delivery_for_good_after_one_attempt() {
    let bad_request = Receiver::start().await;
    bad_request.always(Reply::Status(400));
    let not_found = Receiver::start().await;
    not_found.always(Reply::Status(404));
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let rejected_400 = api
        .create_request(&token, &sandbox_to(&bad_request.url("/hook")))
        .await;
    let rejected_404 = api
        .create_request(&token, &sandbox_to(&not_found.url("/hook")))
        .await;

    for (id, code) in [(&rejected_400, 400), (&rejected_404, 404)] {
        let log = api.wait_status(id, "rejected").await;
        assert_eq!(attempts(&log).len(), 1, "{log}");
        assert_eq!(attempts(&log)[0]["statusCode"], code, "{log}");
        assert_eq!(log["nextRound"], Value::Null, "{log}");
        assert_eq!(log["nextAttemptAt"], Value::Null, "{log}");
    }
    // Past every round, and then some.
    api.advance_clock(ROUNDS_S[0]).await;
    api.advance_clock(ROUNDS_S[1] - ROUNDS_S[0]).await;
    api.advance_clock(ROUNDS_S[2] - ROUNDS_S[1]).await;
    api.advance_clock(7 * 86_400).await;
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(bad_request.received().len(), 1, "a 400 is never retried");
    assert_eq!(not_found.received().len(), 1, "a 404 is never retried");
    for id in [&rejected_400, &rejected_404] {
        let log = api.deliveries(id).await;
        assert_eq!(log["status"], "rejected", "{log}");
        assert_eq!(attempts(&log).len(), 1, "{log}");
    }
}

// ---- 6. retried 401 / 403 ---------------------------------------------------------------------------

#[actix_web::test]
async fn a_401_or_403_ends_the_round_without_inline_retries_and_the_next_round_retries() {
    let receiver = Receiver::start().await;
    receiver.respond_with(vec![Reply::Status(401), Reply::Status(403)]);
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let id = created_to(&api, &receiver.url("/hook")).await;

    receiver.wait_for(1, LIMIT).await;
    api.wait_pending_for(&id, 1).await;
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(receiver.received().len(), 1, "no inline retry after a 401");

    api.advance_clock(ROUNDS_S[0]).await;
    receiver.wait_for(2, LIMIT).await;
    api.wait_pending_for(&id, 2).await;
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(receiver.received().len(), 2, "no inline retry after a 403");

    api.advance_clock(ROUNDS_S[1] - ROUNDS_S[0]).await;
    receiver.wait_for(3, LIMIT).await;
    let log = api.wait_status(&id, "delivered").await;
    let rounds: Vec<(u64, u64, u64)> = attempts(&log)
        .iter()
        .map(|a| {
            (
                a["round"].as_u64().unwrap(),
                a["attempt"].as_u64().unwrap(),
                a["statusCode"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rounds, [(0, 1, 401), (1, 1, 403), (2, 1, 200)], "{log}");
}

#[actix_web::test]
async fn a_redirect_is_not_followed_and_the_delivery_waits_for_its_next_round() {
    let receiver = Receiver::start().await;
    receiver.respond_with(vec![Reply::Redirect("/elsewhere")]);
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let id = created_to(&api, &receiver.url("/hook")).await;

    receiver.wait_for(1, LIMIT).await;
    let log = api.wait_pending_for(&id, 1).await;
    actix_web::rt::time::sleep(QUIET).await;
    let paths: Vec<String> = receiver.received().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/hook"], "the Location is never requested");
    assert_eq!(attempts(&log)[0]["statusCode"], 307, "{log}");
}

// ---- 7. delayed rounds and exhaustion ---------------------------------------------------------------

#[actix_web::test]
async fn an_endpoint_that_always_fails_gets_round_zero_and_three_delayed_rounds_then_is_exhausted()
{
    let receiver = Receiver::start().await;
    receiver.always(Reply::Status(503));
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let url = receiver.url("/hook");
    let id = api.create_request(&token, &sandbox_to(&url)).await;
    let completed = instant(&api.wait_terminal_within(&token, &id, LIMIT).await["completedAt"]);

    receiver.wait_for(4, LIMIT).await;
    api.wait_pending_for(&id, 1).await;
    let mut now = 0;
    for (round, delay) in ROUNDS_S.iter().enumerate() {
        actix_web::rt::time::sleep(QUIET).await;
        assert_eq!(
            receiver.received().len(),
            4 * (round + 1),
            "round {} waits for its time",
            round + 1
        );
        api.advance_clock(delay - now).await;
        now = *delay;
        receiver.wait_for(4 * (round + 2), LIMIT).await;
        if round + 1 < ROUNDS_S.len() {
            let log = api.wait_pending_for(&id, round as u64 + 2).await;
            assert_eq!(
                instant(&log["nextAttemptAt"]),
                completed + chrono::Duration::seconds(ROUNDS_S[round + 1]),
                "{log}"
            );
        }
    }
    let log = api.wait_status(&id, "exhausted").await;
    assert_eq!(log["nextRound"], Value::Null, "{log}");
    assert_eq!(log["nextAttemptAt"], Value::Null, "{log}");
    let offsets = [0, ROUNDS_S[0], ROUNDS_S[1], ROUNDS_S[2]];
    assert_eq!(attempts(&log).len(), 16, "{log}");
    for (n, attempt) in attempts(&log).iter().enumerate() {
        let round = n / 4;
        assert_eq!(attempt["url"], url.as_str(), "{attempt}");
        assert_eq!(attempt["round"], round as u64, "{attempt}");
        assert_eq!(attempt["attempt"], (n % 4) as u64 + 1, "{attempt}");
        assert_eq!(attempt["statusCode"], 503, "{attempt}");
        assert_eq!(attempt["error"], Value::Null, "{attempt}");
        assert!(attempt["latencyMs"].is_u64(), "{attempt}");
        assert_eq!(
            instant(&attempt["at"]),
            completed + chrono::Duration::seconds(offsets[round]),
            "round {round} runs at its delay from the terminal state: {attempt}"
        );
    }

    api.advance_clock(7 * 86_400).await;
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(receiver.received().len(), 16, "nothing after exhaustion");
}

// ---- 8, 9. timeouts and refused connections ---------------------------------------------------------

#[actix_web::test]
async fn an_attempt_that_outlasts_the_timeout_is_logged_as_a_timeout_and_retried() {
    let receiver = Receiver::start().await;
    receiver.always(Reply::Delay(Duration::from_millis(1_500), 200));
    let mut config = config();
    config.set("webhooks.attempt_timeout_ms", 300);
    let app = spawn_app_with(&config).await;
    let api = app.api.clone();
    let id = created_to(&api, &receiver.url("/slow")).await;

    let log = api.wait_pending_for(&id, 1).await;
    assert_eq!(
        attempts(&log).len(),
        4,
        "timeouts are retried inline: {log}"
    );
    for attempt in attempts(&log) {
        assert_eq!(attempt["statusCode"], Value::Null, "{attempt}");
        let error = attempt["error"].as_str().unwrap_or_default();
        assert!(error.contains("timeout"), "{attempt}");
        let latency = attempt["latencyMs"].as_u64().unwrap();
        assert!(
            (300..1_500).contains(&latency),
            "cut off at the attempt timeout: {attempt}"
        );
    }
    assert_eq!(receiver.received().len(), 4);
}

#[actix_web::test]
async fn a_refused_connection_is_logged_and_retried_and_the_delivery_stays_pending() {
    let (_closed, closed_port) = crate::helpers::closed_port();
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let url = format!("http://127.0.0.1:{closed_port}/hook");
    let id = api
        .create_request(&api.sandbox_token().await, &sandbox_to(&url))
        .await;

    let log = api.wait_pending_for(&id, 1).await;
    assert_eq!(
        attempts(&log).len(),
        4,
        "refusals are retried inline: {log}"
    );
    for attempt in attempts(&log) {
        assert_eq!(attempt["url"], url.as_str(), "{attempt}");
        assert_eq!(attempt["statusCode"], Value::Null, "{attempt}");
        let error = attempt["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("connection failed"), "{attempt}");
    }
}

// ---- 10. isolation ----------------------------------------------------------------------------------

#[actix_web::test]
async fn a_slow_endpoint_does_not_hold_up_webhooks_to_a_healthy_one() {
    let slow = Receiver::start().await;
    let hold = Duration::from_secs(2);
    slow.always(Reply::Delay(hold, 200));
    let fast = Receiver::start().await;
    let app = spawn_app_with(&config()).await;
    let api = app.api.clone();
    let items: Vec<Value> = (0..10)
        .map(|n| {
            if n % 2 == 0 {
                sandbox_to(&slow.url("/slow"))
            } else {
                sandbox_to(&fast.url("/fast"))
            }
        })
        .collect();
    let (status, created) = api
        .post_requests(&api.sandbox_token().await, &json!({ "requests": items }))
        .await;
    assert_eq!(status, 200, "{created}");

    let fast_got = fast.wait_for(5, LIMIT).await;
    let slow_first = slow.wait_for(1, LIMIT).await[0].at;
    let fast_last = fast_got.iter().map(|w| w.at).max().unwrap();
    assert!(
        fast_last < slow_first + hold / 2,
        "the healthy endpoint got everything while the slow one still held its first webhook \
         (last fast arrival {:?} after the first slow one)",
        fast_last.saturating_duration_since(slow_first)
    );
    // The slow endpoint still gets everything, once each.
    slow.wait_for(5, LIMIT).await;
    for entry in created["requests"].as_array().unwrap() {
        api.wait_status(entry["requestId"].as_str().unwrap(), "delivered")
            .await;
    }
    assert_eq!(fast.received().len(), 5);
    assert_eq!(slow.received().len(), 5);
}

#[actix_web::test]
async fn a_backlog_for_a_slow_endpoint_does_not_starve_webhooks_to_a_healthy_one() {
    // More deliveries waiting on one slow destination than the dispatcher starts per tick (512).
    const BACKLOG: usize = 600;
    let slow = Receiver::start().await;
    slow.always(Reply::Delay(Duration::from_secs(2), 200));
    let fast = Receiver::start().await;
    let mut config = config();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 2_000.into());
    let app = spawn_app_with(&config).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    let mut batches = Vec::new();
    for _ in 0..BACKLOG / 300 {
        let items = vec![sandbox_to(&slow.url("/slow")); 300];
        let (status, created) = api
            .post_requests(&token, &json!({ "requests": items }))
            .await;
        assert_eq!(status, 200, "{created}");
        batches.push(
            created["requests"][0]["requestBatchId"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    // Every slow webhook is enqueued (its request terminal) before the healthy ones exist.
    let deadline = Instant::now() + Duration::from_secs(30);
    for batch in &batches {
        loop {
            let response = app
                .get(
                    &format!("/v1/requests?requestBatchId={batch}&pageSize=500"),
                    &token,
                )
                .await;
            let (status, list) = status_and_json(response).await;
            assert_eq!(status, 200, "{list}");
            let entries = list["requests"].as_array().unwrap();
            let done = entries
                .iter()
                .filter(|r| TERMINAL.contains(&r["state"].as_str().unwrap_or_default()))
                .count();
            if done == 300 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{done} of 300 terminal in {batch}"
            );
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
    }
    slow.wait_for(1, LIMIT).await;

    let started = Instant::now();
    let items = vec![sandbox_to(&fast.url("/fast")); 5];
    let (status, created) = api
        .post_requests(&token, &json!({ "requests": items }))
        .await;
    assert_eq!(status, 200, "{created}");
    fast.wait_for(5, Duration::from_secs(5)).await;
    assert!(
        slow.received().len() < BACKLOG / 2,
        "the slow backlog was still draining: {} of {BACKLOG} sent",
        slow.received().len()
    );
    println!("healthy webhooks arrived in {:?}", started.elapsed());
}

// ---- 11. private targets ----------------------------------------------------------------------------

#[actix_web::test]
async fn private_loopback_metadata_and_non_http_webhook_urls_are_refused_at_creation() {
    let app = spawn_app_with(&TestConfig::default()).await;
    let api = app.api.clone();
    let token = api.sandbox_token().await;
    for url in [
        "http://127.0.0.1:9/x",
        "http://localhost/x",
        "http://169.254.169.254/latest",
        "http://10.0.0.5/hook",
        "http://192.168.1.10:8080/hook",
        "http://[::1]/x",
        // Loopback written so that an address or name check alone lets it through (issue 43).
        "http://[::127.0.0.1]/x",
        "http://[64:ff9b::7f00:1]/x",
        "http://[2002:7f00:1::]/x",
        "http://localhost./x",
        "http://foo.localhost/x",
        "ftp://example.com/x",
        "file:///etc/passwd",
        "not a url",
    ] {
        let (status, body) = api.post_requests(&token, &sandbox_to(url)).await;
        assert_eq!(status, 400, "{url}: {body}");
        assert_eq!(body["error"], "INVALID_REQUEST", "{url}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("webhookUrl"),
            "{url}: names webhookUrl: {body}"
        );
    }
    // In a batch the refusal is that entry's answer.
    let (status, body) = api
        .post_requests(
            &token,
            &json!({ "requests": [sandbox_to("http://127.0.0.1:9/x"), item(Some("success"), None)] }),
        )
        .await;
    assert_eq!(status, 207, "{body}");
    assert_eq!(body["requests"][0]["error"], "INVALID_REQUEST", "{body}");
    assert!(body["requests"][1]["requestId"].is_string(), "{body}");
    // A public address literal is accepted (nothing is sent: dispatch is paused here).
    let (status, body) = api
        .post_requests(&token, &sandbox_to("http://93.184.216.34/hook"))
        .await;
    assert_eq!(status, 200, "{body}");
}

#[actix_web::test]
async fn a_target_refused_when_its_round_runs_ends_the_round_and_the_next_round_tries_again() {
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    // Accepted while loopback targets are allowed, and created while no request runs.
    let mut accepting = config();
    accepting.set("dialer.paused", true);
    let config_path = write_config(config_dir.path(), &accepting);
    let first = BinaryServer::start(&config_path, data_dir.path());
    let api = first.api.clone();
    let id = created_to(&api, &receiver.url("/hook")).await;
    assert_eq!(first.terminate(), Some(0));

    // Restarted with loopback refused: the request runs, and its webhook's target is refused.
    let mut refusing = config();
    refusing.set("webhooks.allow_private_targets", false);
    let config_path = write_config(config_dir.path(), &refusing);
    let second = BinaryServer::start(&config_path, data_dir.path());
    let api = second.api.clone();
    let log = api.wait_pending_for(&id, 1).await;
    let tried = attempts(&log);
    assert_eq!(tried.len(), 1, "{log}");
    assert!(tried[0]["statusCode"].is_null(), "never sent: {log}");
    // The attempt log is not sealed: it says why, never where (the target's host is the request's data).
    let error = tried[0]["error"].as_str().expect("a reason");
    let hook = receiver.url("/hook");
    let host = hook.split('/').nth(2).unwrap();
    assert!(
        !error.contains("127.0.0.1") && !error.contains(host),
        "{log}"
    );
    // Only a receiver's 400 or 404 stops delivery for good: the next round checks the target again.
    api.advance_clock(ROUNDS_S[0]).await;
    let log = api.wait_pending_for(&id, 2).await;
    assert_eq!(attempts(&log).len(), 2, "{log}");
    assert!(receiver.received().is_empty());
}

// ---- 12. restart ------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_pending_delivery_survives_a_restart_and_its_next_round_runs_on_the_new_server() {
    let receiver = Receiver::start().await;
    receiver.respond_with(vec![Reply::Status(503); 4]);
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config_path = write_config(config_dir.path(), &config());

    let first = BinaryServer::start(&config_path, data_dir.path());
    let api = first.api.clone();
    let id = created_to(&api, &receiver.url("/hook")).await;
    receiver.wait_for(4, LIMIT).await;
    api.wait_pending_for(&id, 1).await;
    assert_eq!(first.terminate(), Some(0), "clean exit on SIGTERM");

    let second = BinaryServer::start(&config_path, data_dir.path());
    let api = second.api.clone();
    let log = api.deliveries(&id).await;
    assert_eq!(log["status"], "pending", "{log}");
    assert_eq!(log["nextRound"], 1, "{log}");
    assert_eq!(attempts(&log).len(), 4, "{log}");
    actix_web::rt::time::sleep(QUIET).await;
    assert_eq!(receiver.received().len(), 4, "round 1 waits for its time");

    api.advance_clock(ROUNDS_S[0]).await;
    let got = receiver.wait_for(5, LIMIT).await;
    let log = api.wait_status(&id, "delivered").await;
    assert_eq!(attempts(&log).len(), 5, "{log}");
    assert_eq!(attempts(&log)[4]["round"], 1, "{log}");
    assert_eq!(attempts(&log)[4]["statusCode"], 200, "{log}");
    assert_eq!(
        got[4].body, got[0].body,
        "the same payload after the restart"
    );
    assert_eq!(
        got[4].header("x-webhook-signature"),
        got[0].header("x-webhook-signature")
    );
}
