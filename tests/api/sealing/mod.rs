//! PHI at rest: what a copy of `data_dir` reveals (nothing), and the master key's life: a wrong or missing
//! key refused with nothing changed, the environment's key winning, rotation, and a plaintext store of the
//! release before sealing opened and sealed.

mod keys;
pub mod markers;
mod migration;
mod phi_at_rest;
pub mod scan;

use std::path::Path;

use serde_json::Value;

use crate::helpers::BinaryServer;

/// `POST /v1/requests` of one item: its `requestId`.
async fn create(server: &BinaryServer, token: &str, item: &Value) -> String {
    let (status, body) = server.post_requests(token, item).await;
    assert!(status == 200 || status == 201, "{status} {body}");
    body["requestId"]
        .as_str()
        .or_else(|| body["requests"][0]["requestId"].as_str())
        .unwrap_or_else(|| panic!("no requestId in {body}"))
        .to_owned()
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
pub(crate) fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
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
