//! Five `kill -9`s while Vapi calls are live, being created or ending: every attempt is one Vapi call,
//! never two, and every request still ends. The payer simulator chooses the outcomes (voicemails, holds,
//! referrals and failures make redials and second steps), and Vapi answers each create slowly, so some
//! kills land between asking for a call and storing its id.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fakes::vapi::{schemas_of, FakeVapi, Outcome, Scenario};
use crate::helpers::{client, free_port, status_and_json, write_config, BinaryServer, TestConfig};
use crate::vapi::vapi_config;

const REQUESTS: usize = 30;
const KILLS: usize = 5;

#[actix_web::test]
async fn every_attempt_is_one_vapi_call_across_five_kill_9s() {
    let fake = FakeVapi::start(schemas_of(&TestConfig::default().to_toml()), 7).await;
    fake.always(
        Scenario::of(Outcome::Simulated)
            .lasting(Duration::from_millis(900))
            .answering_after(Duration::from_millis(250)),
    );
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let mut settings = vapi_config(&fake, port);
    // Few slots: the calls queue, so every kill finds calls live, being created or waiting.
    settings.set("dialer.max_concurrent_calls", 5);
    let config = write_config(config_dir.path(), &settings);
    let http = client();
    let started = Instant::now();

    let mut server = BinaryServer::start_on(&config, data_dir.path(), &bind);
    server.wait_ready().await;
    let token = server.live_token().await;
    let items: Vec<Value> = (0..REQUESTS)
        .map(|n| {
            json!({"schemaId": "vob-basic", "inputs": {
                "payerName": "Aetna", "phoneNumber": "(800) 555-0123",
                "memberId": format!("W{:09}", 200_000_000 + n), "patientFirstName": "Ann",
                "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
                "billingProviderNpi": "1234567890"}})
        })
        .collect();
    let response = http
        .post(server.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&json!({ "requests": items }))
        .send()
        .await
        .unwrap();
    let (status, created) = status_and_json(response).await;
    assert_eq!(status, 200, "{created}");
    let ids: Vec<String> = created["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["requestId"].as_str().unwrap().to_owned())
        .collect();

    for kill in 0..KILLS {
        let before = fake.creates().len();
        fake.wait_until("a call is placed", Duration::from_secs(30), |f| {
            f.creates().len() > before
        })
        .await;
        // Vary where in a call's life the kill lands.
        actix_web::rt::time::sleep(Duration::from_millis(150 * kill as u64)).await;
        server.kill_hard();
        server = BinaryServer::start_on(&config, data_dir.path(), &bind);
        server.wait_ready().await;
    }

    let token = server.live_token().await;
    let deadline = Instant::now() + Duration::from_secs(90);
    for id in &ids {
        loop {
            let response = http
                .get(server.url(&format!("/v1/requests/{id}")))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            let (status, body) = status_and_json(response).await;
            assert_eq!(status, 200, "{body}");
            if body["state"] != "PROCESSING" {
                break;
            }
            assert!(Instant::now() < deadline, "{id} not terminal: {body}");
            actix_web::rt::time::sleep(Duration::from_millis(100)).await;
        }
    }

    let mut per_attempt: BTreeMap<String, usize> = BTreeMap::new();
    for create in fake.creates() {
        let call_id = create["assistantOverrides"]["metadata"]["switchboard_call_id"]
            .as_str()
            .unwrap()
            .to_owned();
        *per_attempt.entry(call_id).or_default() += 1;
    }
    let twice: Vec<_> = per_attempt.iter().filter(|(_, n)| **n != 1).collect();
    eprintln!(
        "vapi crash run: {REQUESTS} requests, {KILLS} kill -9s, {} attempts, {} creates, {} searches, {:.1} s",
        per_attempt.len(),
        fake.creates().len(),
        fake.lists(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        twice.is_empty(),
        "attempts created more than once: {twice:?}"
    );
    assert!(per_attempt.len() >= REQUESTS);
}
