//! The HTTP dialer against a fake voice agent: signed call jobs out, signed outcomes back.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;

use crate::electronic_stedi;
use crate::fakes::stedi::FakeStedi;
use crate::helpers::{create_vob as create, spawn_app_with, status_and_json, TestApp, TestConfig};

const SECRET: &str = "agent-shared-secret";

fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// A voice agent that accepts every job and remembers it, with its signature check result.
#[derive(Clone, Default)]
struct FakeAgent {
    jobs: Arc<Mutex<Vec<(Value, bool)>>>,
}

impl FakeAgent {
    async fn start(&self) -> String {
        let jobs = Arc::clone(&self.jobs);
        let server = HttpServer::new(move || {
            let jobs = Arc::clone(&jobs);
            App::new().route(
                "/calls",
                web::post().to(move |req: HttpRequest, body: web::Bytes| {
                    let jobs = Arc::clone(&jobs);
                    async move {
                        let signed = req
                            .headers()
                            .get("X-Switchboard-Signature")
                            .and_then(|v| v.to_str().ok())
                            == Some(sign(&body).as_str());
                        jobs.lock()
                            .unwrap()
                            .push((serde_json::from_slice(&body).unwrap(), signed));
                        HttpResponse::Accepted().finish()
                    }
                }),
            )
        })
        .workers(1)
        .bind("127.0.0.1:0")
        .unwrap();
        let address = format!("http://{}/calls", server.addrs()[0]);
        actix_web::rt::spawn(server.run());
        address
    }

    async fn next_job(&self, seen: usize) -> Value {
        for _ in 0..400 {
            if let Some((job, signed)) = self.jobs.lock().unwrap().get(seen).cloned() {
                assert!(signed, "job bodies are signed with the dialer secret");
                return job;
            }
            actix_web::rt::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("no call job {seen} reached the agent");
    }
}

async fn app_with_agent(agent_url: &str, call_timeout_s: i64) -> TestApp {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("dialer.kind", "http")
        .set("dialer.url", agent_url)
        .set("dialer.secret", SECRET)
        .set("dialer.call_timeout_s", call_timeout_s)
        .features(&[]);
    spawn_app_with(&config).await
}

/// `outcome` as the agent signs it for `call_id` at `timestamp` (seconds since the epoch).
fn signed_for(call_id: &str, timestamp: i64, outcome: &Value) -> String {
    let mut body = outcome.clone();
    body["callId"] = json!(call_id);
    body["timestamp"] = json!(timestamp);
    body.to_string()
}

fn now_s() -> i64 {
    chrono::Utc::now().timestamp()
}

async fn report(
    app: &TestApp,
    call_id: &str,
    outcome: &Value,
    signature: Option<String>,
) -> (u16, Value) {
    let body = signed_for(call_id, now_s(), outcome);
    post_outcome(app, call_id, body, signature).await
}

/// POSTs `body` as the outcome of `call_id`, signed with `signature` or else correctly.
async fn post_outcome(
    app: &TestApp,
    call_id: &str,
    body: String,
    signature: Option<String>,
) -> (u16, Value) {
    let signature = signature.unwrap_or_else(|| sign(body.as_bytes()));
    let response = app
        .client
        .post(app.url(&format!("/agent/v1/calls/{call_id}/outcome")))
        .header("Content-Type", "application/json")
        .header("X-Switchboard-Signature", signature)
        .body(body)
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

#[actix_web::test]
async fn a_voice_agent_gets_a_signed_job_and_its_signed_outcome_completes_the_request() {
    let agent = FakeAgent::default();
    let app = app_with_agent(&agent.start().await, 60).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let job = agent.next_job(0).await;
    assert_eq!(job["requestId"], id.as_str());
    assert_eq!(job["to"], "+18005550123");
    assert_eq!(job["schema"]["schemaId"], "vob-basic");
    assert!(job["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["required"] == true && f["question"].is_string()));
    let required: Vec<&str> = job["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["required"] == true)
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let captured: serde_json::Map<String, Value> = required
        .iter()
        .map(|f| ((*f).to_owned(), json!("true")))
        .collect();
    let outcome = json!({
        "disposition": "completed", "durationSeconds": 421, "captured": captured,
        "transcript": "Agent: ...\nRepresentative: ...", "summary": "Benefits verified.", "recording": true,
        "fromNumber": "+16175550100",
    });
    let call_id = job["callId"].as_str().unwrap();

    let (status, body) = report(&app, call_id, &outcome, Some("00".repeat(32))).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("UNAUTHORIZED")),
        "a badly signed outcome is refused"
    );
    let (status, body) = report(&app, "no-such-call", &outcome, None).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("NOT_FOUND")));
    let (status, body) = report(&app, call_id, &outcome, None).await;
    assert_eq!((status, body), (200, json!({ "accepted": true })));

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS");
    assert_eq!(done["callDuration"], "00:07:01");
    assert_eq!(done["callSummary"], "Benefits verified.");
    let (status, _) = report(&app, call_id, &outcome, None).await;
    assert_eq!(status, 404, "a call reports once");
}

#[actix_web::test]
async fn a_signed_outcome_is_refused_on_another_call_when_stale_or_without_its_call() {
    let agent = FakeAgent::default();
    let app = app_with_agent(&agent.start().await, 60).await;
    let token = app.live_token().await;
    let first = create(&app, &token).await;
    let second = create(&app, &token).await;
    let jobs = [agent.next_job(0).await, agent.next_job(1).await];
    let call_of = |request: &str| {
        jobs.iter()
            .find(|job| job["requestId"] == request)
            .map(|job| job["callId"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (first_call, second_call) = (call_of(&first), call_of(&second));
    let outcome = json!({ "disposition": "voicemail", "durationSeconds": 30 });

    let signed_for_first = signed_for(&first_call, now_s(), &outcome);
    let (status, body) = post_outcome(&app, &second_call, signed_for_first, None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("UNAUTHORIZED")),
        "an outcome signed for one call, replayed onto another: {body}"
    );
    for (case, timestamp) in [
        ("ten minutes old", now_s() - 600),
        ("ten minutes ahead", now_s() + 600),
    ] {
        let stale = signed_for(&second_call, timestamp, &outcome);
        let (status, body) = post_outcome(&app, &second_call, stale, None).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("UNAUTHORIZED")),
            "{case}: {body}"
        );
    }
    // The body of earlier releases: signed, but naming neither its call nor its time.
    let unnamed = outcome.to_string();
    let (status, body) = post_outcome(&app, &second_call, unnamed, None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("INVALID_REQUEST")),
        "{body}"
    );
    // None of the refusals reported anything: the call still takes its own outcome.
    let (status, body) = report(&app, &second_call, &outcome, None).await;
    assert_eq!((status, body), (200, json!({ "accepted": true })));
}

#[actix_web::test]
async fn an_agent_that_never_reports_leads_to_redials_then_unable_to_reach_a_human() {
    let agent = FakeAgent::default();
    let app = app_with_agent(&agent.start().await, 1).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "FAILURE");
    assert_eq!(done["error"]["errorCode"], "UNABLE_TO_REACH_HUMAN_IN_TIME");
    assert_eq!(
        agent.jobs.lock().unwrap().len(),
        3,
        "the first call and two redials"
    );
    assert_eq!(done["callSteps"][0]["numContributingCalls"], 3);
}

#[actix_web::test]
async fn an_agent_that_refuses_the_job_fails_the_call_as_a_system_error() {
    let app = app_with_agent("http://127.0.0.1:9/calls", 60).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "FAILURE");
    assert_eq!(
        (
            done["error"]["errorCategory"].as_str(),
            done["error"]["errorCode"].as_str()
        ),
        (Some("SYSTEM_ERROR"), Some("OTHER"))
    );
}

#[actix_web::test]
async fn a_job_after_an_electronic_answer_carries_what_the_payer_already_answered() {
    let stedi = FakeStedi::start().await;
    let agent = FakeAgent::default();
    let mut config = electronic_stedi::config(&stedi);
    config
        .set("dialer.kind", "http")
        .set("dialer.url", agent.start().await)
        .set("dialer.secret", SECRET)
        .set("dialer.call_timeout_s", 60);
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    electronic_stedi::create(
        &app,
        &token,
        "vob-basic",
        electronic_stedi::inputs("W123456789"),
    )
    .await;

    let job = agent.next_job(0).await;
    let known = job["known"].as_object().expect("a known object");
    assert_eq!(known["planActive"], "true", "{job}");
    assert_eq!(known["individualDeductible"], "1500.00", "{job}");
    let asked: Vec<&str> = job["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    // Every field of the schema, as the operator contract has it: `known` says which need no asking.
    assert!(asked.contains(&"callReferenceNumber"), "{job}");
    for answered in known.keys() {
        assert!(
            asked.contains(&answered.as_str()),
            "{answered} missing: {job}"
        );
    }
}
