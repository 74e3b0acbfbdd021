//! One-time conversions are `switchboard migrate`'s, never a start's (issue 43 H1, issue 45): a start
//! refuses a store of an earlier layout, exit code not 0, a message on stderr naming `switchboard migrate`,
//! before it listens and with nothing changed; `migrate` converts it and prints what it bound.
//!
//! The attack: whoever can write the store but lacks the master key puts back a keyring saved before the
//! binding upgrade (the same keys, the check value of an unbound store: the `test-hooks` write it) and adds
//! an operator with a token of their choosing. A start that bound the store then made that token an admin.

use std::path::Path;
use std::process::Command;

use sha2::{Digest, Sha256};
use switchboard_storage::{fresh_postgres_database, EngineChoice, StorageConfig, Store};

use crate::helpers::{binary, client, run_to_exit, write_config, BinaryServer, TestConfig};
use crate::node_start::serve_to_exit;
use crate::sealing::snapshot;

const FORGED_TOKEN: &str = "forged-operator-token-0123456789";

/// The store of a stopped server, opened through the storage API (the key is beside the data).
fn open(data_dir: &Path, engine: &EngineChoice) -> Store {
    Store::open(&StorageConfig::embedded(data_dir).on(engine.clone())).unwrap()
}

/// Writes the operator `mallory` and its token's digest as a release before binding stored them (no
/// MAC), and puts the keyring back at `layout`.
fn forge(data_dir: &Path, engine: &EngineChoice, layout: u32) {
    let store = open(data_dir, engine);
    let digest = hex::encode(Sha256::digest(FORGED_TOKEN.as_bytes()));
    let forged = serde_json::json!({
        "name": "mallory", "role": "admin", "token_digest": digest,
        "created_at": "2026-11-23T14:00:00Z"
    });
    let mut record = vec![1u8];
    record.extend_from_slice(forged.to_string().as_bytes());
    store
        .raw_put_for_tests("operators", b"mallory", Some(&record))
        .unwrap();
    store
        .raw_put_for_tests("operator_tokens", digest.as_bytes(), Some(b"mallory"))
        .unwrap();
    store.keyring_at_layout_for_tests(layout).unwrap();
    store.close().unwrap();
}

/// Runs `switchboard migrate --config PATH` to its exit: exit code and stderr.
fn migrate(config: &Path, data_dir: &Path) -> (Option<i32>, String) {
    let mut command = Command::new(binary());
    command
        .args(["migrate", "--config"])
        .arg(config)
        .env_remove("SWITCHBOARD_MASTER_KEY")
        .env_remove("SWITCHBOARD_CONFIG")
        .env("SWITCHBOARD_DATA_DIR", data_dir);
    let output = run_to_exit(command);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `serve` exits non-zero before it listens, saying `why` and naming `switchboard migrate`.
fn refused(config: &Path, data_dir: &Path, why: &str) {
    let output = serve_to_exit(config, data_dir, &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.code().is_some_and(|c| c != 0), "{stderr}");
    assert!(!stdout.contains("listening"), "{stdout}");
    assert!(
        stderr.contains(why) && stderr.contains("switchboard migrate --config PATH"),
        "{stderr}"
    );
}

/// The forged token's answer on the admin API.
async fn forged_token_status(server: &BinaryServer) -> u16 {
    client()
        .get(server.url("/admin/v1/accounts"))
        .bearer_auth(FORGED_TOKEN)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The attack on the store of `config` (on `engine`), the refusals, and `migrate` naming the forgery.
async fn put_back_an_old_keyring(
    work: &Path,
    data_dir: &Path,
    config: TestConfig,
    engine: EngineChoice,
) {
    let config = write_config(work, &config);
    let server = BinaryServer::start_ready(&config, data_dir).await;
    server.live_token().await;
    server.terminate();
    forge(data_dir, &engine, 0);
    let before = snapshot(data_dir);
    for _ in 0..2 {
        refused(&config, data_dir, "not bound to the master key");
    }
    assert!(
        before == snapshot(data_dir),
        "a refused start changes nothing"
    );

    // The explicit step binds what it finds, and names it.
    let (code, stderr) = migrate(&config, data_dir);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("from layout 0 to layout")
            && stderr.contains("bound operators: mallory")
            && stderr.contains("by the operator each names: mallory"),
        "{stderr}"
    );
    let (code, again) = migrate(&config, data_dir);
    assert_eq!(code, Some(0), "{again}");
    assert!(again.contains("already"), "{again}");
    // Told, the operator deletes mallory; the server starts on the migrated store.
    let server = BinaryServer::start_ready(&config, data_dir).await;
    let deleted = client()
        .delete(server.url("/admin/v1/operators/mallory"))
        .bearer_auth(crate::helpers::ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 204);
    assert_eq!(forged_token_status(&server).await, 401);
    server.terminate();
}

#[actix_web::test]
async fn an_old_keyring_put_back_beside_a_forged_operator_token_stops_the_start_on_sled() {
    let (work, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut config = TestConfig::default();
    config.set("storage.kind", "sled");
    put_back_an_old_keyring(work.path(), data.path(), config, EngineChoice::Sled).await;
}

#[actix_web::test]
async fn an_old_keyring_put_back_beside_a_forged_operator_token_stops_the_start_on_postgres() {
    let (work, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let url = fresh_postgres_database();
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("storage.kind", "postgres")
        .set("storage.url", url.as_str());
    let engine = EngineChoice::Postgres { url, ca_file: None };
    put_back_an_old_keyring(work.path(), data.path(), config, engine).await;
}

#[actix_web::test]
async fn a_store_of_the_previous_layout_is_refused_by_name_until_migrate_converts_it() {
    let (work, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // sled's: the previous layout is put back through the store's files.
    let mut config = TestConfig::default();
    config.set("storage.kind", "sled");
    let config = write_config(work.path(), &config);
    let server = BinaryServer::start_ready(&config, data.path()).await;
    let token = server.live_token().await;
    server.terminate();
    let store = open(data.path(), &EngineChoice::Sled);
    store.keyring_at_layout_for_tests(1).unwrap();
    store.close().unwrap();
    drop(store);
    refused(
        &config,
        data.path(),
        "is at layout 1 and this Switchboard needs layout 4",
    );
    let (code, stderr) = migrate(&config, data.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("from layout 1 to layout 4"), "{stderr}");
    assert!(
        !stderr.contains("bound operators"),
        "nothing to bind: {stderr}"
    );
    let server = BinaryServer::start_ready(&config, data.path()).await;
    assert!(!server.live_token().await.is_empty());
    drop(token);
    server.terminate();
}
