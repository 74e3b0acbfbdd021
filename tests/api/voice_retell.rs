//! `[dialer] kind = "retell"` against the local fake Retell: the create-phone-call body, answers under the
//! schema's field names, redials, referrals, failures, signed and idempotent events, polling, and the
//! recording kept by Switchboard.

use std::time::Duration;

use serde_json::{json, Value};

use crate::fakes::retell::{FakeRetell, Scenario, AGENT_ID, API_KEY, FROM_NUMBER, RECORDING};
use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig};

/// The Retell dialer pointed at `fake`, dispatching, with `tweak` applied last.
pub async fn app_with_retell(fake: &FakeRetell, tweak: impl FnOnce(&mut TestConfig)) -> TestApp {
    let mut config = TestConfig::default();
    retell_config(&mut config, fake);
    tweak(&mut config);
    let app = spawn_app_with(&config).await;
    fake.deliver_to(&app.address);
    app
}

/// The `[dialer]` settings of a Retell deployment on `fake`.
pub fn retell_config(config: &mut TestConfig, fake: &FakeRetell) {
    config
        .dispatching()
        .set("dialer.kind", "retell")
        .set("dialer.poll_interval_s", 1)
        .set("dialer.retell.api_key", API_KEY)
        .set("dialer.retell.base_url", fake.base_url.as_str())
        .set("dialer.retell.agent_id", AGENT_ID)
        .set("dialer.retell.from_number", FROM_NUMBER)
        .features(&["attempt_details"]);
}

/// A production vob-basic request dialing (800) 555-0123.
pub use crate::helpers::create_vob as create;

fn dispositions(done: &Value) -> Vec<&str> {
    done["attemptDetails"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["disposition"].as_str().unwrap_or("-"))
        .collect()
}

#[actix_web::test]
async fn an_answered_call_fills_the_results_under_the_schema_field_names_and_keeps_the_recording() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(done["results"]["planActive"], "true");
    assert_eq!(done["results"]["individualDeductible"], "250.50");
    assert_eq!(done["results"]["effectiveDate"], "2026-01-01");
    assert_eq!(done["callDuration"], "00:07:01");
    assert_eq!(done["callSummary"], "The agent reached the payer.");

    let creates = fake.creates();
    assert_eq!(creates.len(), 1);
    let create = &creates[0];
    assert_eq!(create["override_agent_id"], AGENT_ID);
    assert_eq!(create["from_number"], FROM_NUMBER);
    assert_eq!(create["to_number"], "+18005550123");
    assert_eq!(create["metadata"]["switchboard_request_id"], id.as_str());
    assert!(create["metadata"]["switchboard_call_id"].is_string());
    let webhook = create["agent_override"]["agent"]["webhook_url"]
        .as_str()
        .unwrap();
    let public_url = app
        .state
        .settings
        .server
        .public_url
        .as_str()
        .trim_end_matches('/')
        .to_owned();
    assert_eq!(webhook, format!("{public_url}/dialers/retell/events"));
    assert_eq!(
        create["retell_llm_dynamic_variables"]["memberId"],
        "W123456789"
    );
    assert!(create["retell_llm_dynamic_variables"]["questions"]
        .as_str()
        .unwrap()
        .contains("(planActive)"));
    let items = create["agent_override"]["agent"]["post_call_analysis_data"]
        .as_array()
        .unwrap();
    let item = |name: &str| {
        items
            .iter()
            .find(|i| i["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    // Schema fields are string items (only they can carry `CANNOT ANSWER - <reason>` as well as a typed
    // answer), teaching their typed answers by example; control fields keep Retell's native types.
    assert_eq!(item("planActive")["type"], "string");
    assert_eq!(item("planActive")["examples"][0], "true");
    assert_eq!(item("individualDeductible")["type"], "string");
    assert_eq!(item("planType")["type"], "string");
    assert!(item("planType")["examples"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e.as_str().unwrap().starts_with("CANNOT ANSWER - ")));
    assert_eq!(item("followUpNeeded")["type"], "boolean");
    assert_eq!(item("callOutcome")["type"], "enum");
    assert_eq!(
        item("callOutcome")["choices"],
        json!([
            "answered",
            "referred",
            "refused",
            "not_found",
            "missing_input",
            "ivr_failure",
            "other"
        ])
    );
    for control in ["failureCode", "referralPhoneNumber", "followUpNeeded"] {
        item(control);
    }
    assert!(items
        .iter()
        .all(|i| i["description"].as_str().is_some_and(|d| !d.is_empty())));

    // The console names the platform and its call id.
    let (status, voice) = status_and_json(
        app.get(&format!("/console/api/requests/{id}/voice"), &token)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{voice}");
    let ours = create["metadata"]["switchboard_call_id"].as_str().unwrap();
    let platform_call = fake.call_for(ours).unwrap();
    assert_eq!(voice["calls"][0]["platform"], "retell");
    assert_eq!(
        voice["calls"][0]["platformCallId"],
        platform_call["call_id"]
    );
    assert_eq!(voice["calls"][0]["recordingKept"], true);
    assert!(
        !voice.to_string().contains(&fake.base_url),
        "no platform URL in the console"
    );

    // The recording was downloaded at the end of the call and is served by Switchboard itself.
    let link = done["recordingDownloadUrl"]
        .as_str()
        .expect("a recording link")
        .to_owned();
    assert!(
        !link.contains(&fake.base_url),
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
    assert_eq!(audio.bytes().await.unwrap().as_ref(), RECORDING);
}

#[actix_web::test]
async fn a_boolean_the_representative_could_not_answer_is_an_answer_kept_verbatim() {
    let fake = FakeRetell::start().await;
    let value = "CANNOT ANSWER - representative could not confirm";
    fake.force(&[Scenario::AnsweredWith("planActive", value)]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(done["results"]["planActive"], value, "{done}");
    assert!(
        !done["missingFields"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f == "planActive"),
        "{done}"
    );
    assert_eq!(fake.creates().len(), 1);
}

#[actix_web::test]
async fn voicemail_and_a_busy_line_are_redialed() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Voicemail, Scenario::Busy, Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(dispositions(&done), ["voicemail", "voicemail", "completed"]);
    assert_eq!(fake.creates().len(), 3);
    let creates = fake.creates();
    assert_ne!(
        creates[0]["metadata"]["switchboard_call_id"],
        creates[1]["metadata"]["switchboard_call_id"],
        "each redial is its own call"
    );
}

#[actix_web::test]
async fn a_referral_dials_the_number_the_representative_gave() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Referred("+1 (888) 555-0111"), Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(dispositions(&done), ["referred", "completed"]);
    assert_eq!(fake.creates()[1]["to_number"], "+18885550111");
}

#[actix_web::test]
async fn a_member_the_payer_cannot_find_fails_with_its_7_3_code() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::NotFound("MEMBER_NOT_FOUND")]);
    let app = app_with_retell(&fake, |_| {}).await;
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
async fn events_with_a_bad_or_stale_signature_are_refused_and_change_nothing() {
    let fake = FakeRetell::start().await;
    fake.hold_calls(true);
    fake.force(&[Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;
    let created = fake.wait_creates(1).await;
    let call_id = wait_platform_call(&fake, &created[0]).await;

    // A forged analysis that would end the call with other answers.
    let mut forged = fake.call(&call_id);
    forged["call_status"] = json!("ended");
    forged["disconnection_reason"] = json!("agent_hangup");
    forged["call_analysis"] = json!({ "custom_analysis_data": { "callOutcome": "not_found", "failureCode": "MEMBER_NOT_FOUND" } });
    let body = json!({ "event": "call_analyzed", "call": forged }).to_string();
    let now = chrono::Utc::now().timestamp_millis();
    let wrong_key = {
        use hmac::{Hmac, Mac};
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(b"another-key").unwrap();
        mac.update(format!("{body}{now}").as_bytes());
        format!("v={now},d={}", hex::encode(mac.finalize().into_bytes()))
    };
    let stale = FakeRetell::sign(&body, now - 6 * 60 * 1000);
    for signature in [wrong_key.as_str(), stale.as_str(), "", "v=1,d=zz"] {
        let (status, answer) = fake.post_event(&forged, body.clone(), signature).await;
        assert_eq!(status, 401, "{signature:?}: {answer}");
        assert_eq!(answer["error"], "UNAUTHORIZED");
    }
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    let (_, read) = status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(
        read["state"], "PROCESSING",
        "a refused event changed the request: {read}"
    );

    fake.release_calls();
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(
        done["state"], "SUCCESS",
        "the genuine events still complete it: {done}"
    );
}

#[actix_web::test]
async fn a_repeated_event_is_acknowledged_once_and_changes_nothing() {
    let fake = FakeRetell::start().await;
    fake.duplicate_events(true);
    fake.force(&[Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");

    let analysed: Vec<u16> = fake
        .deliveries()
        .iter()
        .filter(|d| d.1 == "call_analyzed")
        .map(|d| d.2)
        .collect();
    assert_eq!(analysed, [200, 200], "both deliveries acknowledged");
    let ours = fake.creates()[0]["metadata"]["switchboard_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let call = fake.call_for(&ours).unwrap();
    let (status, answer) = fake.send_event("call_analyzed", &call).await;
    assert_eq!((status, answer), (200, json!({ "applied": false })));
    let (_, again) = status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(again["results"], done["results"]);
    assert_eq!(dispositions(&again), ["completed"]);
}

#[actix_web::test]
async fn without_events_the_call_is_completed_by_polling_get_call() {
    let fake = FakeRetell::start().await;
    fake.withhold_events(true);
    fake.force(&[Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert!(fake.deliveries().is_empty(), "no event was sent");
    assert_eq!(fake.creates().len(), 1);
}

/// Waits until the fake's call for `create` is ongoing; its Retell id.
pub async fn wait_platform_call(fake: &FakeRetell, create: &Value) -> String {
    let ours = create["metadata"]["switchboard_call_id"].as_str().unwrap();
    for _ in 0..200 {
        if let Some(call) = fake
            .call_for(ours)
            .filter(|c| c["call_status"] == "ongoing")
        {
            return call["call_id"].as_str().unwrap().to_owned();
        }
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the call of {ours} never went ongoing");
}

#[actix_web::test]
async fn follow_up_needed_opens_the_follow_up_leg_on_accounts_that_have_it() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::AnsweredWithFollowUp, Scenario::Answered]);
    let app = app_with_retell(&fake, |c| {
        c.features(&["follow_up_calls", "attempt_details"]);
    })
    .await;
    let token = app.live_token().await;
    let body = json!({
        "schemaId": "claim-status-basic",
        "inputs": {
            "payerName": "UHC", "phoneNumber": "(800) 555-0123", "groupNumber": "GRP20417", "memberId": "W123456001",
            "patientFirstName": "Jane", "patientLastName": "Doe", "patientDateOfBirth": "1980-04-12",
            "dateOfService": "2026-10-01", "billingProviderNpi": "1234567890", "billingProviderTaxId": "12-3456789"
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
    let second: Vec<&str> = creates[1]["agent_override"]["agent"]["post_call_analysis_data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(second.contains(&"callOutcome"));
    assert_ne!(
        creates[0]["agent_override"]["agent"]["post_call_analysis_data"],
        creates[1]["agent_override"]["agent"]["post_call_analysis_data"],
        "the leg asks its own schema's questions"
    );
}
