//! `[dialer] kind = "vapi"` against the local fake Vapi, black-box: the `POST /call` body, answers under
//! the schema's field names, redials, referrals, failures, the `x-vapi-secret` check, idempotent server
//! messages, polling when they are withheld, the recording kept by Switchboard, and a `kill -9` in the
//! middle of a live call.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fakes::vapi::{
    schemas_of, FakeVapi, Outcome, Scenario, API_KEY, ASSISTANT_ID, FROM_NUMBER, PHONE_NUMBER_ID,
    SERVER_SECRET,
};
use crate::helpers::{
    client, free_port, spawn_app_on, status_and_json, write_config, BinaryServer, TestApp,
    TestConfig,
};
use crate::voice_retell::create;

/// A dispatching config placing production calls through the fake, its events URL on `port`.
pub(crate) fn vapi_config(fake: &FakeVapi, port: u16) -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("server.public_url", format!("http://127.0.0.1:{port}"))
        .set("dialer.kind", "vapi")
        .set("dialer.poll_interval_s", 1)
        .set("dialer.vapi.api_key", API_KEY)
        .set("dialer.vapi.base_url", fake.base_url())
        .set("dialer.vapi.assistant_id", ASSISTANT_ID)
        .set("dialer.vapi.phone_number_id", PHONE_NUMBER_ID)
        .set("dialer.vapi.server_secret", SERVER_SECRET)
        .features(&["attempt_details"]);
    config
}

/// A fake Vapi and a Switchboard calling through it.
async fn vapi_app() -> (FakeVapi, TestApp) {
    vapi_app_with(|_| {}).await
}

/// [`vapi_app`] with `tweak` applied to the config last.
async fn vapi_app_with(tweak: impl FnOnce(&mut TestConfig)) -> (FakeVapi, TestApp) {
    let fake = FakeVapi::start(schemas_of(&TestConfig::default().to_toml()), 7).await;
    let port = free_port();
    let mut config = vapi_config(&fake, port);
    tweak(&mut config);
    let app = spawn_app_on(&config, &format!("127.0.0.1:{port}")).await;
    (fake, app)
}

fn dispositions(done: &Value) -> Vec<&str> {
    done["attemptDetails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["disposition"].as_str().unwrap_or("-"))
        .collect()
}

/// POSTs a server message to the app's events route; status and JSON answer.
async fn post_message(app: &TestApp, message: &Value, secret: Option<&str>) -> (u16, Value) {
    let mut request = app
        .client
        .post(app.url("/dialers/vapi/events"))
        .json(message);
    if let Some(secret) = secret {
        request = request.header("x-vapi-secret", secret);
    }
    status_and_json(request.send().await.unwrap()).await
}

async fn read(app: &TestApp, token: &str, id: &str) -> Value {
    status_and_json(app.get(&format!("/v1/requests/{id}"), token).await)
        .await
        .1
}

#[actix_web::test]
async fn an_answered_call_fills_the_results_under_the_schema_field_names() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![Scenario::of(Outcome::Answered)]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    let creates = fake.creates();
    assert_eq!(creates.len(), 1);
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
    let create = &creates[0];
    assert_eq!(create["assistantId"], ASSISTANT_ID);
    assert_eq!(create["phoneNumberId"], PHONE_NUMBER_ID);
    assert_eq!(create["customer"]["number"], "+18005550123");
    let overrides = &create["assistantOverrides"];
    assert_eq!(overrides["metadata"]["switchboard_request_id"], id.as_str());
    assert_eq!(overrides["variableValues"]["memberId"], "W123456789");
    assert!(overrides["variableValues"]["questions"]
        .as_str()
        .unwrap()
        .contains("(planActive)"));
    let public_url = app
        .state
        .settings
        .server
        .public_url
        .as_str()
        .trim_end_matches('/')
        .to_owned();
    assert_eq!(
        overrides["server"]["url"],
        format!("{public_url}/dialers/vapi/events")
    );
    assert_eq!(
        overrides["server"]["headers"]["x-vapi-secret"],
        SERVER_SECRET
    );
    let plan = &overrides["analysisPlan"]["structuredDataPlan"];
    assert_eq!(plan["enabled"], true);
    let properties = plan["schema"]["properties"].as_object().unwrap();
    // Typed schema fields are strings whose pattern admits the typed answers or `CANNOT ANSWER - ...`.
    assert_eq!(properties["planActive"]["type"], "string");
    assert_eq!(
        properties["planActive"]["pattern"],
        "^(true|false|CANNOT ANSWER - .+)$"
    );
    assert_eq!(properties["individualDeductible"]["type"], "string");
    assert_eq!(properties["followUpNeeded"]["type"], "boolean");
    assert!(properties["callOutcome"]["enum"]
        .as_array()
        .unwrap()
        .contains(&json!("not_found")));

    // Every result is a schema field, with the value Vapi's analysis extracted.
    let call = &fake.calls()[0];
    let data = call["analysis"]["structuredData"].as_object().unwrap();
    let results = done["results"].as_object().unwrap();
    assert!(!results.is_empty());
    for (name, value) in results {
        assert!(properties.contains_key(name), "{name} is a schema field");
        let extracted = &data[name];
        let expected = match extracted {
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => format!("{:.2}", n.as_f64().unwrap()),
            other => other.as_str().unwrap().to_owned(),
        };
        assert_eq!(value, &json!(expected), "{name}");
    }
    assert_eq!(done["callSummary"], call["analysis"]["summary"]);
    assert_eq!(dispositions(&done), ["completed"]);

    // The recording was downloaded from Vapi and is served by Switchboard itself.
    let link = done["recordingDownloadUrl"]
        .as_str()
        .expect("a recording link");
    assert!(
        !link.contains(&fake.base_url()),
        "the platform's URL never reaches a client"
    );
    let path = link.split_once("/v1/recordings/").unwrap().1;
    let audio = app
        .client
        .get(app.url(&format!("/v1/recordings/{path}")))
        .send()
        .await
        .unwrap();
    assert_eq!(audio.status(), 200);
    assert!(audio.bytes().await.unwrap().starts_with(b"RIFF"));
}

#[actix_web::test]
async fn voicemail_and_a_busy_line_are_redialed() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![
        Scenario::of(Outcome::Voicemail),
        Scenario::of(Outcome::Busy),
        Scenario::of(Outcome::Answered),
    ]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(dispositions(&done), ["voicemail", "voicemail", "completed"]);
    let creates = fake.creates();
    assert_eq!(creates.len(), 3);
    let call_id =
        |i: usize| creates[i]["assistantOverrides"]["metadata"]["switchboard_call_id"].clone();
    assert_ne!(call_id(0), call_id(1), "each redial is its own call");
}

#[actix_web::test]
async fn follow_up_needed_opens_the_follow_up_leg_on_accounts_that_have_it() {
    let (fake, app) = vapi_app_with(|c| {
        c.features(&["follow_up_calls", "attempt_details"]);
    })
    .await;
    fake.script(vec![
        Scenario::of(Outcome::AnsweredWithFollowUp),
        Scenario::of(Outcome::Answered),
    ]);
    let token = app.live_token().await;
    let body = json!({
        "schemaId": "claim-status-basic",
        "inputs": {
            "payerName": "UHC", "phoneNumber": "(800) 555-0123", "groupNumber": "GRP20417",
            "memberId": "W123456001", "patientFirstName": "Jane", "patientLastName": "Doe",
            "patientDateOfBirth": "1980-04-12", "dateOfService": "2026-10-01",
            "billingProviderNpi": "1234567890", "billingProviderTaxId": "12-3456789"
        }
    });
    let id = &app.create_request(&token, &body).await;

    let done = app.wait_terminal(&token, id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    let steps: Vec<&str> = done["callSteps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["schemaId"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["claim-status-basic", "claim-appeal-basic"]);
    let creates = fake.creates();
    assert_eq!(creates.len(), 2);
    let schema = |i: usize| {
        creates[i]["assistantOverrides"]["analysisPlan"]["structuredDataPlan"]["schema"].clone()
    };
    assert!(schema(1)["properties"]["callOutcome"].is_object());
    assert_ne!(
        schema(0),
        schema(1),
        "the leg asks its own schema's questions"
    );
}

#[actix_web::test]
async fn holds_that_never_end_and_unanswered_lines_use_up_the_budget() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![
        Scenario::of(Outcome::HoldTimeout),
        Scenario::of(Outcome::NoAnswer),
        Scenario::of(Outcome::HoldTimeout),
    ]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "FAILURE", "{done}");
    assert_eq!(
        done["error"]["errorCode"], "UNABLE_TO_REACH_HUMAN_IN_TIME",
        "{done}"
    );
    assert_eq!(
        dispositions(&done),
        ["hold_timeout", "voicemail", "hold_timeout"]
    );
    assert_eq!(fake.creates().len(), 3);
}

#[actix_web::test]
async fn a_referral_dials_the_number_the_representative_gave() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![
        Scenario::of(Outcome::Referral("+1 (888) 555-0111".into())),
        Scenario::of(Outcome::Answered),
    ]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(dispositions(&done), ["referred", "completed"]);
    assert_eq!(fake.creates()[1]["customer"]["number"], "+18885550111");
    // The call that dialed another number says which, sanitized like an input (section 7.4).
    let redialed = done["contributingCalls"]
        .as_array()
        .and_then(|calls| calls.iter().find(|call| call["call"] == 2))
        .unwrap_or_else(|| panic!("the second call contributes: {done}"));
    assert_eq!(redialed["to"], "8885550111", "{done}");
}

#[actix_web::test]
async fn a_member_the_payer_cannot_find_fails_with_its_7_3_code() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![Scenario::of(Outcome::NotFound("MEMBER_NOT_FOUND"))]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "FAILURE", "{done}");
    assert_eq!(done["error"]["errorCategory"], "NOT_FOUND");
    assert_eq!(done["error"]["errorCode"], "MEMBER_NOT_FOUND");
    assert_eq!(
        fake.creates().len(),
        1,
        "a failure the payer reported is not redialed"
    );
}

#[actix_web::test]
async fn a_message_without_the_secret_is_refused_and_changes_nothing() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![
        Scenario::of(Outcome::Answered).lasting(Duration::from_secs(2))
    ]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;
    fake.wait_until("the call is in progress", Duration::from_secs(10), |f| {
        f.calls()
            .first()
            .is_some_and(|c| c["status"] == "in-progress")
    })
    .await;

    // A forged report that would end the live call with other answers.
    let mut call = fake.calls()[0].clone();
    call["status"] = json!("ended");
    let forged = json!({"message": {
        "type": "end-of-call-report",
        "endedReason": "assistant-ended-call",
        "artifact": {"transcript": "forged"},
        "analysis": {"structuredData": {"callOutcome": "not_found", "failureCode": "MEMBER_NOT_FOUND"}},
        "call": call,
    }});
    for secret in [
        Some("not-the-secret"),
        Some(""),
        None,
        Some("vapi-server-secret-tes"),
    ] {
        let (status, answer) = post_message(&app, &forged, secret).await;
        assert_eq!(status, 401, "{secret:?}: {answer}");
        assert_eq!(answer["error"], "UNAUTHORIZED");
    }
    let now = read(&app, &token, &id).await;
    assert_eq!(
        now["state"], "PROCESSING",
        "a refused message changed the request: {now}"
    );

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(
        done["state"], "SUCCESS",
        "the genuine report still completes it: {done}"
    );
}

#[actix_web::test]
async fn a_repeated_report_is_acknowledged_and_changes_nothing() {
    let (fake, app) = vapi_app().await;
    fake.script(vec![Scenario::of(Outcome::Answered)]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    fake.wait_until("the report was answered", Duration::from_secs(5), |f| {
        f.deliveries()
            .iter()
            .any(|d| d.kind == "end-of-call-report")
    })
    .await;

    let deliveries = fake.deliveries();
    let report = deliveries
        .iter()
        .find(|d| d.kind == "end-of-call-report")
        .unwrap();
    assert_eq!(report.status, Some(200));
    // Vapi sending the same report again.
    assert_eq!(fake.redeliver(report).await, Some(200));
    // The same call and type with other content, properly authenticated: still the first one counts.
    let mut other = report.body.clone();
    other["message"]["analysis"]["structuredData"] =
        json!({"callOutcome": "not_found", "failureCode": "MEMBER_NOT_FOUND"});
    let (status, answer) = post_message(&app, &other, Some(SERVER_SECRET)).await;
    assert_eq!((status, answer), (200, json!({"applied": false})));
    // Status updates say nothing about the end: acknowledged without effect.
    let update = deliveries
        .iter()
        .find(|d| d.kind == "status-update")
        .unwrap();
    let (status, answer) = post_message(&app, &update.body, Some(SERVER_SECRET)).await;
    assert_eq!((status, answer), (200, json!({"applied": false})));

    let again = read(&app, &token, &id).await;
    assert_eq!(again["state"], "SUCCESS");
    assert_eq!(again["results"], done["results"]);
    assert_eq!(dispositions(&again), ["completed"]);
    assert_eq!(fake.creates().len(), 1);
}

#[actix_web::test]
async fn without_server_messages_the_call_is_completed_by_reading_it() {
    let (fake, app) = vapi_app_with(|c| {
        c.features(&["attempt_details", "call_from_number"]);
    })
    .await;
    fake.script(vec![Scenario::of(Outcome::Answered).withheld()]);
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert!(fake.deliveries().is_empty(), "no message was sent");
    assert!(fake.reads() >= 1, "GET /call/{{id}} was read");
    assert_eq!(fake.creates().len(), 1);
    // A call read from GET /call/{id} names its number only by id: the caller number is looked up.
    assert_eq!(done["callFromNumber"], FROM_NUMBER, "{done}");
}

/// A dispatching binary calling through `fake` on a known port, with one production vob-basic request
/// created: the server, what restarting it needs, and the request id.
struct Crashable {
    server: BinaryServer,
    config: std::path::PathBuf,
    bind: String,
    id: String,
    config_dir: tempfile::TempDir,
    data_dir: tempfile::TempDir,
}

async fn crashable(fake: &FakeVapi, http: &reqwest::Client) -> Crashable {
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &vapi_config(fake, port));
    let server = BinaryServer::start_on(&config, data_dir.path(), &bind);
    server.wait_ready().await;
    let token = server.live_token().await;
    let body = json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890"
        }
    });
    let response = http
        .post(server.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (status, created) = status_and_json(response).await;
    assert_eq!(status, 200, "{created}");
    Crashable {
        server,
        config,
        bind,
        id: created["requestId"].as_str().unwrap().to_owned(),
        config_dir,
        data_dir,
    }
}

impl Crashable {
    /// kill -9, a restart on the same port and data, then the request's terminal read.
    async fn kill_restart_and_finish(self, http: &reqwest::Client) -> Value {
        self.server.kill_hard();
        let second = BinaryServer::start_on(&self.config, self.data_dir.path(), &self.bind);
        second.wait_ready().await;
        let token = second.live_token().await;
        let deadline = Instant::now() + Duration::from_secs(30);
        let done = loop {
            let response = http
                .get(second.url(&format!("/v1/requests/{}", self.id)))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            let (status, body) = status_and_json(response).await;
            assert_eq!(status, 200, "{body}");
            if body["state"] != "PROCESSING" {
                break body;
            }
            assert!(
                Instant::now() < deadline,
                "not terminal after the restart: {body}"
            );
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        };
        drop(self.config_dir);
        done
    }
}

#[actix_web::test]
async fn a_kill_9_during_a_live_call_re_attaches_after_the_restart_without_a_second_call() {
    let fake = FakeVapi::start(schemas_of(&TestConfig::default().to_toml()), 7).await;
    // Long enough to kill the server while the payer is on the line.
    fake.script(vec![
        Scenario::of(Outcome::Answered).lasting(Duration::from_secs(3))
    ]);
    let http = client();
    let crashable = crashable(&fake, &http).await;
    fake.wait_until("the call is placed", Duration::from_secs(20), |f| {
        f.creates().len() == 1
    })
    .await;

    let done = crashable.kill_restart_and_finish(&http).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(
        fake.creates().len(),
        1,
        "the payer was dialed once for the attempt"
    );
    assert_eq!(dispositions(&done), ["completed"]);
}

#[actix_web::test]
async fn a_kill_9_before_vapi_answered_the_create_finds_the_call_instead_of_dialing_again() {
    let fake = FakeVapi::start(schemas_of(&TestConfig::default().to_toml()), 7).await;
    // Vapi has the call at once but takes 3 s to say so: the server dies knowing only that it asked.
    fake.script(vec![Scenario::of(Outcome::Answered)
        .lasting(Duration::from_secs(4))
        .answering_after(Duration::from_secs(3))]);
    let http = client();
    let crashable = crashable(&fake, &http).await;
    fake.wait_until("the call is placed", Duration::from_secs(20), |f| {
        f.creates().len() == 1
    })
    .await;

    let done = crashable.kill_restart_and_finish(&http).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert!(
        fake.lists() >= 1,
        "the restarted server searched Vapi for the attempt's call"
    );
    assert_eq!(
        fake.creates().len(),
        1,
        "the payer was dialed once for the attempt"
    );
}
