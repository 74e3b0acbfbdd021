//! A data directory written by the last release before sealing (`tests/fixtures/plaintext-store.tar.gz`,
//! made by `scripts/plaintext-store-fixture.sh` with that release's binary) opens: every request reads back
//! as it was, its `internalId` still replays, and afterwards nothing in the directory is in the clear.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::keys::serve;
use super::scan::scan;
use super::stable;
use crate::helpers::{client, status_and_json, SANDBOX_KEY, SANDBOX_SECRET};

/// The marker values the fixture's requests carry.
const MARKERS: [&str; 7] = [
    "Qzxfixturejo",
    "Vqjfixtureroe",
    "W735194601",
    "W735194602",
    "CLMPHIfixturealpha",
    "TAGPHIfixturebeta",
    "GRP7351946",
];

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[actix_web::test]
async fn a_plaintext_store_of_the_release_before_opens_reads_back_and_ends_up_sealed() {
    let work = tempfile::tempdir().unwrap();
    let unpacked = Command::new("tar")
        .arg("-xzf")
        .arg(fixture("plaintext-store.tar.gz"))
        .arg("-C")
        .arg(work.path())
        .status()
        .unwrap();
    assert!(unpacked.success());
    let data = work.path().join("data");
    let markers: Vec<String> = MARKERS.iter().map(|m| m.to_string()).collect();
    let before = scan(&data, &markers);
    assert!(
        before.iter().any(|(_, m)| m == "Vqjfixtureroe")
            && before.iter().any(|(_, m)| m == "RIFF/WAVE audio"),
        "the fixture holds PHI and audio in the clear: {before:?}"
    );
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixture("plaintext-store.expected.json")).unwrap())
            .unwrap();

    let config = work.path().join("default.toml");
    std::fs::write(&config, switchboard::configuration::DEFAULT_CONFIG).unwrap();
    let server = serve(&config, &data, &[]).await;
    let sandbox = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let id = expected["sandboxId"].as_str().unwrap();
    assert_eq!(
        stable(server.read_request(&sandbox, id).await),
        expected["sandbox"]
    );
    let live = server.live_token().await;
    let running = server
        .read_request(&live, expected["liveId"].as_str().unwrap())
        .await;
    assert_eq!(running["internalId"], "CLMPHIfixturegamma", "{running}");

    // The internal id, now a keyed hash in the store, still finds its request: a replay, not a new one.
    let mut again = json_of_expected_sandbox(&expected);
    again["internalId"] = "CLMPHIfixturealpha".into();
    let response = client()
        .post(server.url("/v1/requests"))
        .bearer_auth(&sandbox)
        .json(&again)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert!(status < 300, "{status} {body}");
    assert_eq!(body["requestId"].as_str().unwrap_or_default(), id, "{body}");
    assert_eq!(server.terminate(), Some(0));

    for plaintext in ["db", "conf"] {
        assert!(!data.join(plaintext).exists(), "{plaintext} removed");
    }
    let after = scan(&data, &markers);
    assert!(after.is_empty(), "left in the clear: {after:?}");
}

/// A create body for the fixture's sandbox request, from what it reads back as.
fn json_of_expected_sandbox(expected: &Value) -> Value {
    let sandbox = &expected["sandbox"];
    serde_json::json!({
        "schemaId": sandbox["schemaId"],
        "inputs": sandbox["inputs"],
    })
}
