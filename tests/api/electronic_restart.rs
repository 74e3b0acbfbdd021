//! A restart in the middle of a clearinghouse inquiry (`kill -9` while the fake is still answering): the
//! restarted server asks again, which is safe (an inquiry has no side effect), and no call is placed.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::electronic_stedi::{config, inputs};
use crate::fakes::stedi::FakeStedi;
use crate::helpers::{write_config, BinaryServer};

#[actix_web::test]
async fn a_restart_during_an_inquiry_asks_again_and_places_no_call() {
    let fake = FakeStedi::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&fake);
    // The fake's slow answer (3 s) fits in the timeout: only the kill interrupts it.
    config.set("electronic.stedi.timeout_ms", 10_000);
    let path = write_config(dir.path(), &config);
    let data = dir.path().join("data");

    let server = BinaryServer::start(&path, &data);
    let token_before = server.live_token().await;
    let body = json!({ "schemaId": "eligibility-check", "inputs": inputs("SLOW1") });
    let id = server.create_request(&token_before, &body).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while fake.received().is_empty() {
        assert!(Instant::now() < deadline, "the inquiry never left");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    server.kill_hard();

    let server = BinaryServer::start(&path, &data);
    let token = server.live_token().await;
    let read = server.wait_terminal(&token, &id).await;
    assert_eq!(fake.received().len(), 2, "asked once per start");
    assert_eq!(read["state"], "SUCCESS", "{read}");
    assert_eq!(
        read["modality"], "digital_only",
        "no call was placed: {read}"
    );
    assert_eq!(read["results"]["planActive"], "true");
}
