//! Graceful stop never panics: SIGTERM with thousands of requests in every phase (booked, calls in flight,
//! calls that never end, webhooks waiting on a slow receiver) exits 0 with no panic on stderr, and leaves
//! a recovery snapshot covering what the run wrote, so the next start does not replay it all.
//!
//! The panic this pins: when `main` returned, the runtime dropped the actors still alive, and actix polls a
//! dropped actor one last time; a call or webhook round then created a timer outside any runtime context.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{binary, skip_on_postgres, write_config, Api, TestConfig};
use crate::receiver::{Receiver, Reply};

fn item(scenario: &str, url: &str) -> Value {
    json!({
        "schemaId": "vob-basic",
        "webhookUrl": url,
        "inputs": {
            "payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890",
            "sandboxScenario": scenario
        }
    })
}

struct Server {
    child: Child,
    api: Api,
    /// Reads stderr while the server runs, so a long log line never blocks it on a full pipe.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(config: &std::path::Path, data_dir: &std::path::Path) -> Server {
    let mut child = Command::new(binary())
        .args(["serve", "--config"])
        .arg(config)
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = Vec::new();
    let mut byte = [0u8];
    while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let stderr = crate::helpers::drain_stderr(&mut child);
    let first = String::from_utf8(first).unwrap();
    let address = first
        .strip_prefix("Switchboard listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
    Server {
        child,
        api: Api::at(address),
        stderr: Some(stderr),
    }
}

async fn running(api: &Api) -> u64 {
    api.orchestration_stats().await["running"].as_u64().unwrap()
}

/// The log position covered by the newest of sled's snapshot files (`snap.` and 16 hex digits) in `dir`.
fn newest_snapshot(dir: &std::path::Path) -> Option<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|entry| {
            let name = entry.unwrap().file_name().into_string().ok()?;
            u64::from_str_radix(name.strip_prefix("snap.")?, 16).ok()
        })
        .max()
}

/// Starts a server, creates `count` requests of each scenario, waits until `in_flight` requests run, then
/// stops it with SIGTERM; asserts exit code 0, no panic on stderr, and, on sled, a snapshot newer than the
/// one the start left.
async fn stop_with_work_in_flight(count: usize, in_flight: u64) {
    let receiver = Receiver::start().await;
    receiver.always(Reply::Delay(Duration::from_millis(500), 200));
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("simulation.time_scale", 2_000.0)
        .set("webhooks.allow_private_targets", true);
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 100_000.into());
    let path = write_config(config_dir.path(), &config);
    let mut server = start(&path, data_dir.path());
    let api = &server.api;
    let deadline = Instant::now() + Duration::from_secs(20);
    api.wait_ready().await;
    let token = api.sandbox_token().await;
    let url = receiver.url("/hook");
    for scenario in ["success", "stuck"] {
        for chunk in 0..count.div_ceil(500) {
            let n = 500.min(count - chunk * 500);
            let items = vec![item(scenario, &url); n];
            let (status, body) = api
                .post_requests(&token, &json!({ "requests": items }))
                .await;
            assert_eq!(status, 200, "{body}");
        }
    }
    while running(api).await < in_flight {
        assert!(Instant::now() < deadline, "fewer than {in_flight} running");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    let sled = switchboard_storage::sled_dir(data_dir.path());
    let snapshot_at_start =
        (!skip_on_postgres("the recovery snapshot at the stop, which is sled's"))
            .then(|| newest_snapshot(&sled));
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let stderr = server.stderr.take().unwrap().join().unwrap();
    let code = server.child.wait().unwrap().code();
    assert!(
        !stderr.contains("panicked"),
        "a panic while stopping:\n{stderr}"
    );
    assert_eq!(code, Some(0), "{stderr}");
    if let Some(snapshot_at_start) = snapshot_at_start {
        let snapshot_at_stop = newest_snapshot(&sled);
        assert!(
            snapshot_at_stop > snapshot_at_start,
            "no snapshot written at the stop: {snapshot_at_start:?} then {snapshot_at_stop:?}"
        );
    }
}

#[actix_web::test]
async fn sigterm_right_after_thousands_of_creates_exits_cleanly() {
    stop_with_work_in_flight(1_500, 0).await;
}

#[actix_web::test]
async fn sigterm_with_thousands_of_calls_and_webhooks_in_flight_exits_cleanly() {
    stop_with_work_in_flight(1_500, 1_000).await;
}
