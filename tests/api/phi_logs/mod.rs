//! No protected health information in the logs (operator contract section 6), black-box: the real binary,
//! logging at debug and above (Switchboard's own crates and the HTTP stack at trace), is driven through
//! every path a request can take, with inputs, `internalId` and `internalTag` that carry one run-unique
//! marker. Production requests go through the electronic channel (the simulated clearinghouse, or the
//! Stedi fake with its rejections and outages) and the seeded payer simulator, sandbox requests through
//! every scenario, some creates fail validation on a marked value, and every route with an id in its path
//! is called with the marker as that id. Once every request is terminal and has been read back, the
//! server is stopped, and its whole stdout and stderr must hold neither the marker nor a credential nor a
//! token, in either log format.

mod requests;
mod server;

use std::time::Duration;

use serde_json::{json, Value};

use crate::fakes::stedi::{FakeStedi, API_KEY as STEDI_API_KEY};
use crate::helpers::{
    write_config, TestConfig, ADMIN_TOKEN, LIVE_KEY, LIVE_SECRET, SANDBOX_KEY, SANDBOX_SECRET,
};
use crate::receiver::Receiver;
use requests::{
    claim_inputs, probe_marked_paths, production_inputs, read_everything_about, read_lists,
    refuse_marked_values, Marker,
};
use server::{LogFormat, LoggedServer};

/// Every `sandboxScenario` of operator contract section 4 but `stuck`, which never ends.
const ENDING_SCENARIOS: [&str; 9] = [
    "success",
    "redial",
    "follow_up",
    "partial",
    "failure:MEMBER_NOT_FOUND",
    "failure:NO_SUCH_CODE",
    "cannot_answer",
    "digital",
    "digital_plus_phone",
];

/// Member ids the Stedi fake answers with an AAA rejection in a 200 and in a 400, and with 502s.
const STEDI_TROUBLE: [&str; 3] = ["AAA75", "AAA44", "DOWNALL"];

#[actix_web::test]
async fn no_phi_reaches_the_text_logs_on_any_path_through_the_simulators() {
    let log = run_every_path(LogFormat::Text, None).await;
    assert!(log.contains(" DEBUG "), "text lines");
}

#[actix_web::test]
async fn no_phi_reaches_the_json_logs_on_any_path_through_the_simulators() {
    let log = run_every_path(LogFormat::Json, None).await;
    assert!(
        log.lines().skip(3).any(|l| l.starts_with('{')),
        "JSON lines"
    );
}

#[actix_web::test]
async fn no_phi_reaches_the_logs_through_the_stedi_clearinghouse_its_rejections_and_outages() {
    let fake = FakeStedi::start().await;
    let log = run_every_path(LogFormat::Text, Some(&fake)).await;
    // Rejections and outages are logged by their kind, never by the payer's or Stedi's words.
    for expected in [
        "clearinghouse inquiry finished",
        "clearinghouse busy or failing",
        "outcome=\"rejected by the payer\"",
        "outcome=\"unavailable\"",
    ] {
        assert!(log.contains(expected), "no {expected:?} in the log: {log}");
    }
    assert!(!log.contains(STEDI_API_KEY), "the Stedi key is in the log");
    let sent = fake.received();
    assert!(
        sent.iter().any(|r| r.body.to_string().contains("Phimark")),
        "the inquiries carried the marked names: {}",
        sent.len()
    );
}

/// Drives every path on a fresh server (electronic answers from `stedi` when given, else the simulated
/// clearinghouse), checks the log it wrote and returns it.
async fn run_every_path(format: LogFormat, stedi: Option<&FakeStedi>) -> String {
    let marker = Marker::new();
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    if let Some(fake) = stedi {
        config
            .set("electronic.kind", "stedi")
            .set("electronic.stedi.api_key", STEDI_API_KEY)
            .set("electronic.stedi.base_url", fake.base_url.as_str())
            .set("electronic.stedi.timeout_ms", 2_000)
            .set("electronic.stedi.retry_backoff_ms", vec![20, 20]);
    }
    let config = write_config(config_dir.path(), &config);
    let server = LoggedServer::start(&config, data_dir.path(), format).await;
    let api = server.api();
    let live = api.token(LIVE_KEY, LIVE_SECRET).await;
    let sandbox = api.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let webhook_url = receiver.url("/hook");

    // Every request that ends, with the token that reads it.
    let mut ending: Vec<(&str, String)> = Vec::new();
    let mut production = production_inputs(&marker);
    if stedi.is_some() {
        for member in STEDI_TROUBLE {
            let mut inputs = claim_inputs(&marker, "Aetna");
            inputs["memberId"] = json!(member);
            production.push(("vob-basic", inputs));
        }
    }
    for (n, (schema, inputs)) in production.iter().enumerate() {
        let item = marker.item(schema, inputs.clone(), &format!("live-{n}"), &webhook_url);
        ending.push((&live, api.create_request(&live, &item).await));
    }
    // A replay of the first create: the idempotency path, with the same marked internalId.
    let (schema, inputs) = production[0].clone();
    let replay = marker.item(schema, inputs.clone(), "live-0", &webhook_url);
    assert_eq!(
        api.create_request(&live, &replay).await,
        ending[0].1,
        "a reused internalId replays"
    );
    // A batch with one valid entry and one whose member id fails validation on a marked value.
    let mut invalid = inputs.clone();
    invalid["memberId"] = json!(format!("{}NULL", marker.upper()));
    let batch = json!({ "requests": [
        marker.item(schema, inputs, "batch-valid", &webhook_url),
        marker.item(schema, invalid, "batch-invalid", &webhook_url),
    ]});
    let (status, body) = api.post_requests(&live, &batch).await;
    assert_eq!(status, 207, "one entry created, one refused: {body}");
    let created = body["requests"][0]["requestId"].as_str().unwrap();
    ending.push((&live, created.to_owned()));
    // Sandbox: every scenario, on a schema with a follow-up leg.
    for scenario in ENDING_SCENARIOS.into_iter().chain(["stuck"]) {
        let mut inputs = claim_inputs(&marker, "UHC");
        inputs["sandboxScenario"] = json!(scenario);
        let item = marker.item("claim-status-basic", inputs, scenario, &webhook_url);
        ending.push((&sandbox, api.create_request(&sandbox, &item).await));
    }
    let (_, stuck) = ending.pop().unwrap();

    refuse_marked_values(&api, &live, &marker).await;
    probe_marked_paths(&api, &live, &marker).await;
    let mut reads: Vec<(&str, Value)> = Vec::new();
    for (token, id) in &ending {
        reads.push((
            *token,
            // Tracing every crate slows the server down: a longer wait than the default.
            api.wait_terminal_within(token, id, Duration::from_secs(30))
                .await,
        ));
    }
    let mut signatures = Vec::new();
    for (token, read) in &reads {
        signatures.extend(read_everything_about(&api, token, read, &marker).await);
    }
    assert!(!signatures.is_empty(), "some calls left a recording");
    read_lists(&api, &[live.as_str(), sandbox.as_str()], &reads, &marker).await;
    receiver
        .wait_for(ending.len(), Duration::from_secs(20))
        .await;
    let (status, metrics) = api.text("/metrics", ADMIN_TOKEN).await;
    assert_eq!(status, 200);
    assert!(!marker.is_in(&metrics), "a marked value is a metric label");

    let log = server.stop();

    let lines: Vec<&str> = log.lines().collect();
    assert!(
        lines.len() > 100 && lines.iter().any(|l| l.contains("DEBUG")),
        "the log was captured at debug level; it has {} lines: {log}",
        lines.len()
    );
    for expected in [
        "request booked",
        "electronic channel tried",
        "call placed",
        "request finished",
        "webhook round finished",
    ] {
        assert!(log.contains(expected), "no {expected:?} in the log: {log}");
    }
    for id in ending.iter().map(|(_, id)| id).chain([&stuck]) {
        assert!(log.contains(id.as_str()), "request {id} is not in the log");
    }
    let leaks: Vec<&str> = lines.iter().copied().filter(|l| marker.is_in(l)).collect();
    assert!(
        leaks.is_empty(),
        "{} log lines carry a marked value:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
    let credentials = [
        LIVE_KEY,
        LIVE_SECRET,
        SANDBOX_KEY,
        SANDBOX_SECRET,
        ADMIN_TOKEN,
    ];
    for secret in credentials
        .into_iter()
        .chain([live.as_str(), sandbox.as_str()])
    {
        assert!(
            !log.contains(secret),
            "a credential or token is in the log: {secret}"
        );
    }
    let lowered = log.to_ascii_lowercase();
    for signature in &signatures {
        assert!(
            !lowered.contains(signature.as_str()),
            "a recording link's signature is in the log"
        );
    }
    log
}
