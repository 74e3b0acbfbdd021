//! `switchboard trace <requestId>` against a running server.

use std::process::Command;

use serde_json::json;

use crate::helpers::{
    binary, spawn_app_with, status_and_json, TestConfig, SANDBOX_KEY, SANDBOX_SECRET,
};

#[actix_web::test]
async fn trace_prints_the_call_flow_tree_with_the_source_of_every_answer() {
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let body = json!({
        "schemaId": "claim-status-basic",
        "inputs": {
            "sandboxScenario": "follow_up", "payerName": "UHC", "groupNumber": "G100", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "dateOfService": "2026-10-01", "billingProviderNpi": "1234567890", "billingProviderTaxId": "12-3456789"
        }
    });
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (_, created) = status_and_json(response).await;
    let id = created["requestId"].as_str().unwrap().to_owned();
    let read = app.wait_terminal(&token, &id).await;
    assert_eq!(read["state"], "SUCCESS");

    let address = app.address.clone();
    let run = move |args: Vec<String>| {
        Command::new(binary())
            .arg("trace")
            .args(args)
            .output()
            .unwrap()
    };
    let args = vec![
        id.clone(),
        "--base-url".into(),
        address.clone(),
        "--key".into(),
        SANDBOX_KEY.into(),
        "--secret".into(),
        SANDBOX_SECRET.into(),
    ];
    let output = actix_web::rt::task::spawn_blocking(move || run(args))
        .await
        .unwrap();
    let tree = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        tree.starts_with(&format!("Request {id}  SUCCESS")),
        "{tree}"
    );
    assert!(
        tree.contains("step-1") && tree.contains("triggered by step-1"),
        "{tree}"
    );
    let (field, call) = read["resultSources"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert!(
        tree.contains(&format!("{field} = ")) && tree.contains(&format!("<- call {call} · ")),
        "{tree}"
    );

    let unknown = actix_web::rt::task::spawn_blocking(move || {
        Command::new(binary())
            .args([
                "trace",
                "no-such-request",
                "--base-url",
                &address,
                "--key",
                SANDBOX_KEY,
                "--secret",
                SANDBOX_SECRET,
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("REQUEST_NOT_FOUND"));
}
