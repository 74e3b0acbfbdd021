//! PHI at rest: what a copy of `data_dir` reveals (nothing), and the master key's life: a wrong or missing
//! key refused with nothing changed, the environment's key winning, rotation, and a plaintext store of the
//! release before sealing opened and sealed.

mod keys;
pub mod markers;
mod migration;
mod phi_at_rest;
pub mod scan;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::{client, status_and_json, BinaryServer};

const TERMINAL: [&str; 3] = ["SUCCESS", "PARTIAL", "FAILURE"];

/// `POST /v1/requests` of one item: its `requestId`.
async fn create(server: &BinaryServer, token: &str, item: &Value) -> String {
    let response = client()
        .post(server.url("/v1/requests"))
        .bearer_auth(token)
        .json(item)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert!(status == 200 || status == 201, "{status} {body}");
    body["requestId"]
        .as_str()
        .or_else(|| body["requests"][0]["requestId"].as_str())
        .unwrap_or_else(|| panic!("no requestId in {body}"))
        .to_owned()
}

/// `GET /v1/requests/{id}`.
async fn read(server: &BinaryServer, token: &str, id: &str) -> Value {
    let response = client()
        .get(server.url(&format!("/v1/requests/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// Polls a request until it is terminal (20 s at most).
async fn wait_terminal(server: &BinaryServer, token: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let body = read(server, token, id).await;
        if TERMINAL.contains(&body["state"].as_str().unwrap_or_default()) {
            return body;
        }
        assert!(Instant::now() < deadline, "never terminal: {body}");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A request as read, without the parts that change between reads (signed links that expire some time
/// after the read), at any depth.
fn stable(mut body: Value) -> Value {
    match &mut body {
        Value::Object(object) => {
            object.remove("recordingDownloadUrl");
            for value in object.values_mut() {
                *value = stable(value.take());
            }
        }
        Value::Array(items) => {
            for value in items.iter_mut() {
                *value = stable(value.take());
            }
        }
        _ => {}
    }
    body
}

/// Every file under `dir` with its bytes, to compare before and after a refused start.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = scan::files_under(dir)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}
