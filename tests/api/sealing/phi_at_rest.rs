//! Requests carrying marker values through every path (the seeded simulator with the electronic channel,
//! every sandbox scenario, a real platform's call with its recording), read back across a restart, then a
//! search of every file under `data_dir` for the markers, raw and inside zstd frames, and for plain audio.

use serde_json::Value;

use super::markers::Markers;
use super::scan::{files_under, holds_plain_riff, scan};
use super::{create, stable};
use crate::fakes::retell::{FakeRetell, Scenario, RECORDING};
use crate::helpers::{
    client, skip_on_postgres, write_config, BinaryServer, TestConfig, ADMIN_TOKEN, SANDBOX_KEY,
    SANDBOX_SECRET,
};
use crate::receiver::Receiver;
use crate::voice_retell::retell_config;

const SCENARIOS: [&str; 9] = [
    "success",
    "redial",
    "follow_up",
    "partial",
    "failure:MEMBER_NOT_FOUND",
    "cannot_answer",
    "digital",
    "digital_plus_phone",
    "stuck",
];

#[actix_web::test]
async fn no_marker_and_no_audio_is_readable_anywhere_under_data_dir() {
    let markers = Markers::new();
    let data = tempfile::tempdir().unwrap();
    let configs = tempfile::tempdir().unwrap();

    // 1. The seeded simulator: production requests (electronic answer, then calls and follow-up legs) and
    // every sandbox scenario.
    let mut simulated = TestConfig::default();
    simulated
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    let secret = toml::Value::String(markers.webhook_secret.clone());
    simulated
        .demo_account()
        .insert("webhook_secret".into(), secret.clone());
    let receiver = Receiver::start().await;
    let config = write_config(configs.path(), &simulated);
    let server = BinaryServer::start_ready(&config, data.path()).await;
    let live = server.live_token().await;
    let sandbox = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let mut finished: Vec<(String, &str, Value)> = Vec::new();
    for n in 0..3 {
        let id = create(&server, &live, &markers.claim(n, None)).await;
        finished.push((id, "live", Value::Null));
    }
    // Its webhook goes to a URL carrying a marker: the delivery and its attempt log hold it.
    let mut hooked = markers.vob(3);
    hooked["webhookUrl"] = format!("{}/{}", receiver.url("/hook"), markers.webhook_path).into();
    let hooked = create(&server, &live, &hooked).await;
    finished.push((hooked.clone(), "live", Value::Null));
    let mut stuck = None;
    for (i, scenario) in SCENARIOS.iter().enumerate() {
        let id = create(&server, &sandbox, &markers.claim(10 + i, Some(scenario))).await;
        if *scenario == "stuck" {
            stuck = Some(id);
        } else {
            finished.push((id, "sandbox", Value::Null));
        }
    }
    for (id, key, body) in &mut finished {
        let token = if *key == "live" { &live } else { &sandbox };
        *body = stable(server.wait_terminal(token, id).await);
        assert_eq!(body["internalTag"], markers.internal_tag.as_str(), "{body}");
    }
    let electronic = finished
        .iter()
        .filter(|(_, _, body)| body.to_string().contains("digital"))
        .count();
    assert!(electronic >= 2, "the electronic channel answered some");
    receiver
        .wait_for(1, std::time::Duration::from_secs(10))
        .await;
    // Its attempt is logged once the round ends.
    let log = format!("/admin/v1/webhook-deliveries?requestId={hooked}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, body) = server.get_json(&log, ADMIN_TOKEN).await;
        assert_eq!(status, 200, "{body}");
        if body["status"] == "delivered" && body["deliveries"][0]["url"].is_string() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never delivered: {body}"
        );
        actix_web::rt::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(server.terminate(), Some(0));

    // 2. A real platform's call on the same data: its recording is downloaded into data_dir. The requests
    // of the first run read back the same.
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Answered]);
    let mut platform = TestConfig::default();
    // The same features as the first run, so its requests read back the same.
    let features = TestConfig::default().demo_account()["features"].clone();
    retell_config(&mut platform, &fake);
    platform.demo_account().insert("features".into(), features);
    platform
        .demo_account()
        .insert("webhook_secret".into(), secret);
    let config = write_config(configs.path(), &platform);
    let server = BinaryServer::start_ready(&config, data.path()).await;
    fake.deliver_to(&server.address);
    let live = server.live_token().await;
    let sandbox = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    for (id, key, before) in &finished {
        let token = if *key == "live" { &live } else { &sandbox };
        assert_eq!(&stable(server.read_request(token, id).await), before);
    }
    let stuck = server
        .read_request(&sandbox, stuck.as_deref().unwrap())
        .await;
    assert_eq!(stuck["internalId"], format!("{}-18", markers.internal_id));
    let id = create(&server, &live, &markers.vob(40)).await;
    let done = server.wait_terminal(&live, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    let link = done["recordingDownloadUrl"].as_str().expect("a recording");
    let path = link.split_once("/v1/recordings/").unwrap().1;
    let audio = client()
        .get(server.url(&format!("/v1/recordings/{path}")))
        .send()
        .await
        .unwrap();
    assert_eq!(audio.status(), 200);
    assert_eq!(audio.bytes().await.unwrap().as_ref(), RECORDING);
    assert_eq!(server.terminate(), Some(0));

    // 3. What a copy of the directory reveals.
    if skip_on_postgres(
        "the scan of data_dir: the requests and the recording are in the database, the directory \
         holds only the key",
    ) {
        return;
    }
    let recordings = files_under(&data.path().join("recordings"));
    assert_eq!(recordings.len(), 1, "{recordings:?}");
    assert!(!holds_plain_riff(&std::fs::read(&recordings[0]).unwrap()));
    let store_bytes: u64 = files_under(&data.path().join("store"))
        .iter()
        .map(|f| f.metadata().unwrap().len())
        .sum();
    assert!(store_bytes > 10_000, "the store holds the requests");
    let found = scan(data.path(), &markers.all());
    assert!(found.is_empty(), "PHI readable on disk: {found:?}");
}
