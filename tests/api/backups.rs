//! Backups while serving (operator contract section 7): a copy taken while creates and orchestration run
//! opens with every request acknowledged before the call, clients see no error meanwhile, the command-line
//! twin works, and bad paths are refused. With `[server] backup_root` a backup goes nowhere else, and
//! backups and `data_dir` are private (0700 directories, 0600 files) whatever the umask (issue 43).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::{
    binary, client, sled_only, status_and_json, write_config, BinaryServer, TestConfig,
    ADMIN_TOKEN, SANDBOX_KEY, SANDBOX_SECRET,
};

/// Why these tests run on sled only.
const BACKUPS_ARE_SLEDS: &str =
    "a backup copies sled's store; on PostgreSQL the database is backed up \
     with its own tools and the endpoint answers 409 (postgres.rs checks it)";

fn sandbox_batch(n: usize) -> Value {
    let requests: Vec<Value> = (0..5)
        .map(|i| {
            json!({
                "schemaId": "vob-basic",
                "inputs": {
                    "sandboxScenario": "success", "payerName": "Aetna",
                    "memberId": format!("W{:09}", n * 10 + i),
                    "patientFirstName": "Ann", "patientLastName": "Lee",
                    "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890"
                }
            })
        })
        .collect();
    json!({ "requests": requests })
}

async fn backup(server: &BinaryServer, path: &str) -> (u16, Value) {
    let response = client()
        .post(server.url("/admin/v1/backups"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({ "path": path }))
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

#[actix_web::test]
async fn a_backup_under_load_restores_every_request_acknowledged_before_it() {
    sled_only!(BACKUPS_ARE_SLEDS);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut config = TestConfig::default();
    config.dispatching();
    // Every request is booked for today, so each one runs.
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1_000_000.into());
    let config = write_config(work.path(), &config);
    let server = BinaryServer::start_ready(&config, data.path()).await;
    let token = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;

    // Creates run all along; every answer must be a 200.
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let creator = {
        let (acknowledged, stop, url, token) = (
            Arc::clone(&acknowledged),
            Arc::clone(&stop),
            server.url("/v1/requests"),
            token.clone(),
        );
        actix_web::rt::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let response = client()
                    .post(&url)
                    .bearer_auth(&token)
                    .json(&sandbox_batch(n))
                    .send()
                    .await
                    .unwrap();
                let (status, body) = status_and_json(response).await;
                assert_eq!(status, 200, "a create failed during the backup: {body}");
                let ids = body["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["requestId"].as_str().unwrap().to_owned());
                acknowledged.lock().unwrap().extend(ids);
                n += 1;
            }
        })
    };
    actix_web::rt::time::sleep(Duration::from_millis(600)).await;
    let before: Vec<String> = acknowledged.lock().unwrap().clone();
    assert!(before.len() >= 10, "creates were running: {}", before.len());
    let copy = work.path().join("copy");
    let (status, body) = backup(&server, copy.to_str().unwrap()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["path"], copy.to_str().unwrap());
    assert!(body["bytes"].as_u64().unwrap() > 10_000, "{body}");
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    creator.await.unwrap();
    let after = acknowledged.lock().unwrap().len();
    assert!(after > before.len(), "creates went on after the backup");
    assert_eq!(server.terminate(), Some(0));

    // The copy serves on its own, with the key that travelled beside it.
    assert!(copy.join("master.key").exists());
    let restored = BinaryServer::start_ready(&config, &copy).await;
    let token = restored.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    for id in &before {
        let response = client()
            .get(restored.url(&format!("/v1/requests/{id}")))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(
            status, 200,
            "{id} acknowledged before the backup is missing: {body}"
        );
    }
    // What ran at backup time resumes to its end.
    let last = before.last().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let response = client()
            .get(restored.url(&format!("/v1/requests/{last}")))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let (_, body) = status_and_json(response).await;
        if body["state"] != "PROCESSING" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never finished: {body}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

#[actix_web::test]
async fn bad_backup_paths_are_refused_and_the_command_line_twin_writes_one() {
    sled_only!(BACKUPS_ARE_SLEDS);
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(work.path(), &TestConfig::default());
    let server = BinaryServer::start_ready(&config, data.path()).await;
    let inside = data.path().join("b");
    let cases = [
        ("relative/dir".to_owned(), 400, "INVALID_REQUEST"),
        (work.path().to_str().unwrap().to_owned(), 409, "CONFLICT"),
        (
            work.path()
                .join("no/such/parent")
                .to_str()
                .unwrap()
                .to_owned(),
            400,
            "INVALID_REQUEST",
        ),
        (inside.to_str().unwrap().to_owned(), 400, "INVALID_REQUEST"),
        (
            format!("{}/b\nforged audit line", work.path().display()),
            400,
            "INVALID_REQUEST",
        ),
    ];
    for (path, status, code) in cases {
        let (got, body) = backup(&server, &path).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(code)),
            "{path}: {body}"
        );
    }
    assert!(
        !inside.exists() && !work.path().join("no").exists(),
        "nothing half made"
    );

    let target = work.path().join("from-cli");
    let output = std::process::Command::new(binary())
        .args([
            "backup",
            "--to",
            target.to_str().unwrap(),
            "--base-url",
            &server.address,
        ])
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("backup written to"));
    assert!(target.join("store").is_dir() && target.join("keyring").is_file());
}

/// Every directory and file under `dir` (`dir` included), with its permission bits; links not followed.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut found = vec![(
        dir.display().to_string(),
        std::fs::symlink_metadata(dir).unwrap().permissions().mode() & 0o777,
    )];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            found.extend(modes(&path));
        } else {
            found.push((
                path.display().to_string(),
                meta.permissions().mode() & 0o777,
            ));
        }
    }
    found
}

/// Whether `dir` and everything under it is for the owner alone: 0700 directories, files without any
/// group or other bit. (The test process's umask is usually 022, under which sled's files and copies
/// would be 0644 without the explicit modes.)
fn assert_private(dir: &Path, what: &str) {
    let open: Vec<String> = modes(dir)
        .into_iter()
        .filter(|(path, mode)| {
            let is_dir = Path::new(path).is_dir();
            (is_dir && *mode != 0o700) || (!is_dir && mode & 0o077 != 0)
        })
        .map(|(path, mode)| format!("{path} {mode:o}"))
        .collect();
    assert!(open.is_empty(), "{what}: not private: {open:?}");
}

#[actix_web::test]
async fn with_a_backup_root_backups_go_only_under_it_and_backups_and_data_dir_are_private() {
    sled_only!(BACKUPS_ARE_SLEDS);
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().canonicalize().unwrap();
    let (root, elsewhere) = (work_path.join("backups"), work_path.join("elsewhere"));
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir(root.join("nightly")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("link-out")).unwrap();
    // A data_dir the server creates.
    let data = work_path.join("data");
    let mut config = TestConfig::default();
    config.set("server.backup_root", root.to_str().unwrap());
    let config = write_config(&work_path, &config);
    let server = BinaryServer::start_ready(&config, &data).await;

    for (path, case) in [
        (elsewhere.join("b"), "outside the root"),
        (root.join("../elsewhere/b"), "'..' out of the root"),
        (root.join("link-out/b"), "a link out of the root"),
    ] {
        let (status, body) = backup(&server, path.to_str().unwrap()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{case}: {body}"
        );
    }
    assert!(
        std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
        "nothing written outside the root"
    );

    let target = root.join("nightly/../2026-11-27");
    let (status, body) = backup(&server, target.to_str().unwrap()).await;
    assert_eq!(status, 200, "{body}");
    let written = root.join("2026-11-27");
    assert_eq!(
        body["path"],
        written.to_str().unwrap(),
        "the path as resolved"
    );
    assert!(written.join("store").is_dir() && written.join("keyring").is_file());
    assert_private(&written, "the backup");
    assert_private(&data, "data_dir while serving");
    assert_eq!(server.terminate(), Some(0));
    assert_private(&data, "data_dir after a graceful stop");
}
