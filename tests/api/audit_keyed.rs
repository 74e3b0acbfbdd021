//! What write access to the store without the master key can no longer do (operator contract section 12):
//! rewrite or cut the audit log unnoticed, make an operator, or swap an account. The "attacker" writes
//! through the storage engine's own API (the `test-hooks` the black-box tests build with), or removes
//! sled's files of a stopped server.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::helpers::{
    create_vob, sled_only, spawn_app, status_and_json, write_config, BinaryServer, TestApp,
    TestConfig,
};

async fn verify(app: &TestApp) -> Value {
    let (status, verified) =
        status_and_json(app.admin(Method::GET, "/admin/v1/audit/verify", None).await).await;
    assert_eq!(status, 200, "{verified}");
    verified
}

async fn verify_against(app: &TestApp, checkpoints: Value) -> (u16, Value) {
    status_and_json(
        app.admin(
            Method::POST,
            "/admin/v1/audit/verify",
            Some(json!({ "checkpoints": checkpoints })),
        )
        .await,
    )
    .await
}

async fn checkpoint(app: &TestApp) -> Value {
    let (status, checkpoint) = status_and_json(
        app.admin(Method::GET, "/admin/v1/audit/checkpoint", None)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{checkpoint}");
    checkpoint
}

/// The number of the event of `action` on `target`, once it is written.
async fn seq_of(app: &TestApp, action: &str, target: &str) -> u64 {
    for _ in 0..100 {
        let path = format!("/admin/v1/audit?action={action}&targetId={target}");
        let (_, page) = status_and_json(app.admin(Method::GET, &path, None).await).await;
        if let Some(event) = page["events"].as_array().unwrap().first() {
            return event["seq"].as_u64().unwrap();
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("no {action} on {target}");
}

#[actix_web::test]
async fn an_event_rewritten_with_every_later_hash_recomputed_makes_verify_answer_not_ok() {
    let app = spawn_app().await;
    let created = create_vob(&app.api, &app.live_token().await).await;
    let seq = seq_of(&app, "request.create", &created).await;
    assert_eq!(verify(&app).await["ok"], json!(true));
    // The attacker knows the published algorithm: every SHA-256 after the change is recomputed, so the
    // unkeyed chain would hold. The events' MACs cannot be.
    let changed = app
        .state
        .store
        .rewrite_audit_for_tests(&format!("\"{created}\""), "\"someone-else\"")
        .unwrap();
    assert_eq!(changed, Some(seq));
    assert_eq!(
        verify(&app).await,
        json!({ "ok": false, "firstBadSeq": seq })
    );
}

#[actix_web::test]
async fn the_last_events_removed_make_verify_answer_not_ok_where_they_were() {
    let app = spawn_app().await;
    let created = create_vob(&app.api, &app.live_token().await).await;
    let seq = seq_of(&app, "request.create", &created).await;
    app.state.store.truncate_audit_for_tests(seq - 1).unwrap();
    assert_eq!(
        verify(&app).await,
        json!({ "ok": false, "firstBadSeq": seq })
    );
}

#[actix_web::test]
async fn a_checkpoint_verifies_until_an_event_up_to_it_changes() {
    let app = spawn_app().await;
    let created = create_vob(&app.api, &app.live_token().await).await;
    seq_of(&app, "request.create", &created).await;
    let kept = checkpoint(&app).await;
    let fields: Vec<&str> = kept
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(fields, ["at", "hash", "mac", "seq"], "{kept}");
    let (status, verified) = verify_against(&app, json!([kept])).await;
    assert_eq!(
        (status, verified["ok"].clone()),
        (200, json!(true)),
        "{verified}"
    );
    assert!(verified["events"].as_u64().unwrap() >= kept["seq"].as_u64().unwrap());

    // The events up to the checkpoint cut, sealed head and all: the store alone would look like an
    // earlier copy of itself, the checkpoint kept elsewhere tells.
    let seq = kept["seq"].as_u64().unwrap();
    app.state.store.truncate_audit_for_tests(seq - 1).unwrap();
    let (status, verified) = verify_against(&app, json!([kept])).await;
    assert_eq!(status, 200);
    assert_eq!(verified, json!({ "ok": false, "firstBadSeq": seq }));
}

#[actix_web::test]
async fn a_checkpoint_whose_mac_does_not_hold_is_refused_with_400() {
    let app = spawn_app().await;
    let kept = checkpoint(&app).await;
    let mut forged = kept.clone();
    forged["hash"] = json!(hex::encode(Sha256::digest(b"another history")));
    let mut unknown_field = kept.clone();
    unknown_field["note"] = json!("x");
    for (description, checkpoints, message) in [
        ("a hash of its own", json!([kept, forged]), "checkpoints[1]"),
        (
            "a mac that is no hex",
            json!([dict_with(&kept, "mac", json!("zz"))]),
            "checkpoints[0]",
        ),
        ("an unknown field", json!([unknown_field]), "note"),
        ("no seq", json!([without(&kept, "seq")]), "seq"),
    ] {
        let (status, body) = verify_against(&app, checkpoints).await;
        assert_eq!(status, 400, "{description}: {body}");
        assert_eq!(body["error"], "INVALID_REQUEST", "{description}: {body}");
        assert!(
            body["message"].as_str().unwrap().contains(message),
            "{description}: {body}"
        );
    }
    let (status, body) = status_and_json(
        app.admin(Method::POST, "/admin/v1/audit/verify", Some(json!({})))
            .await,
    )
    .await;
    assert_eq!(
        (status, body["error"].clone()),
        (400, json!("INVALID_REQUEST")),
        "{body}"
    );
}

fn dict_with(value: &Value, field: &str, new: Value) -> Value {
    let mut value = value.clone();
    value[field] = new;
    value
}

fn without(value: &Value, field: &str) -> Value {
    let mut value = value.clone();
    value.as_object_mut().unwrap().remove(field);
    value
}

#[actix_web::test]
async fn an_operator_token_digest_written_into_the_store_is_not_an_operator() {
    let app = spawn_app().await;
    let token = "forged-operator-token-0123456789";
    let digest = hex::encode(Sha256::digest(token.as_bytes()));
    let forged = json!({
        "name": "mallory", "role": "admin", "token_digest": digest,
        "created_at": "2026-11-23T14:00:00Z"
    });
    let mut record = vec![1u8];
    record.extend_from_slice(forged.to_string().as_bytes());
    let store = &app.state.store;
    store
        .raw_put_for_tests("operators", b"mallory", Some(&record))
        .unwrap();
    store
        .raw_put_for_tests("operator_tokens", digest.as_bytes(), Some(b"mallory"))
        .unwrap();
    let refused = app
        .client
        .get(app.url("/admin/v1/accounts"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    // The same digest pointed at a real operator's record is refused too.
    crate::operators::operator(&app, "alice", "admin").await;
    store
        .raw_put_for_tests("operator_tokens", digest.as_bytes(), Some(b"alice"))
        .unwrap();
    let refused = app
        .client
        .get(app.url("/admin/v1/accounts"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
}

#[actix_web::test]
async fn an_account_record_swapped_in_the_store_does_not_exchange_its_key() {
    let app = spawn_app().await;
    let store = &app.state.store;
    // The demo account's stored record, its secret digest replaced by one of a secret the attacker chose.
    let stored = store
        .raw_get_for_tests("accounts", b"demo")
        .unwrap()
        .unwrap();
    let record: Value = serde_json::from_slice(&stored[1..stored.len() - 32]).unwrap();
    let mut swapped = record.clone();
    for credential in swapped["credentials"].as_array_mut().unwrap() {
        credential["secret_sha256"] = json!(hex::encode(Sha256::digest(b"chosen")));
        credential.as_object_mut().unwrap().remove("secret_argon2");
    }
    let mut bytes = vec![stored[0]];
    bytes.extend_from_slice(swapped.to_string().as_bytes());
    store
        .raw_put_for_tests("accounts", b"demo", Some(&bytes))
        .unwrap();
    let (status, body) = app.auth("sk_live_demo_7Qh2m9XcP4", "chosen").await;
    assert_eq!(status, 401, "{body}");
    // The original MAC kept after the swapped bytes does not help either.
    bytes.extend_from_slice(&stored[stored.len() - 32..]);
    store
        .raw_put_for_tests("accounts", b"demo", Some(&bytes))
        .unwrap();
    let (status, body) = app.auth("sk_live_demo_7Qh2m9XcP4", "chosen").await;
    assert_eq!(status, 401, "{body}");
}

/// What a start on `data_dir` that must be refused says.
fn refused_start(config: &Path, data_dir: &Path) -> String {
    let output = crate::node_start::serve_to_exit(config, data_dir, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.code().is_some_and(|c| c != 0), "{stderr}");
    stderr
}

/// sled's files of a stopped server.
fn remove_sled_files(data_dir: &Path) {
    for entry in std::fs::read_dir(data_dir.join("store")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "db" || name.starts_with("snap.") || name == "blobs" {
            if path.is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
}

#[actix_web::test]
async fn a_store_whose_sled_files_were_removed_does_not_start_and_names_the_audit_log() {
    sled_only!("removes sled's files from data_dir");
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(work.path(), &TestConfig::default());
    let server = BinaryServer::start_ready(&config, data.path()).await;
    server.live_token().await;
    server.terminate();
    remove_sled_files(data.path());
    let stderr = refused_start(&config, data.path());
    assert!(stderr.contains("audit log"), "{stderr}");
}

/// Copies the directory `from` into a new `to`, as whoever keeps an old copy of a stopped server's files.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

async fn create_operator(server: &BinaryServer, name: &str) {
    let body = json!({ "name": name, "role": "support" });
    let (status, created) = status_and_json(
        server
            .admin(Method::POST, "/admin/v1/operators", Some(body))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
}

#[actix_web::test]
async fn a_store_rolled_back_whole_to_an_older_copy_does_not_start_and_names_the_audit_log() {
    sled_only!("puts an older copy of sled's files back in data_dir");
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(work.path(), &TestConfig::default());
    let server = BinaryServer::start_ready(&config, data.path()).await;
    create_operator(&server, "carol").await;
    server.terminate();
    let older = work.path().join("older-store");
    copy_dir(&data.path().join("store"), &older);
    let server = BinaryServer::start_ready(&config, data.path()).await;
    create_operator(&server, "dave").await;
    server.terminate();
    // The log and its sealed head go back together: consistent, and without dave's creation.
    std::fs::remove_dir_all(data.path().join("store")).unwrap();
    copy_dir(&older, &data.path().join("store"));
    let stderr = refused_start(&config, data.path());
    assert!(stderr.contains("audit log"), "{stderr}");
    assert!(stderr.contains("rolled back"), "{stderr}");
}

#[actix_web::test]
async fn api_secrets_are_stored_salted_and_slow_and_exchange_as_before() {
    let app = spawn_app().await;
    let stored = app
        .state
        .store
        .raw_get_for_tests("accounts", b"demo")
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&stored);
    assert!(text.contains("\"secret_argon2\":\"$argon2id$"), "{text}");
    assert!(!text.contains("secret_sha256"), "no bare digest: {text}");
    let digest = hex::encode(Sha256::digest(b"demo-live-secret-change-me"));
    assert!(!text.contains(&digest), "{text}");
    for _ in 0..2 {
        let (status, body) = app
            .auth("sk_live_demo_7Qh2m9XcP4", "demo-live-secret-change-me")
            .await;
        assert_eq!(status, 200, "{body}");
        let (status, _) = app.auth("sk_live_demo_7Qh2m9XcP4", "wrong").await;
        assert_eq!(status, 401);
    }
}
