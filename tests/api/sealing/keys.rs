//! The master key: a wrong or missing key stops the start with nothing in `data_dir` changed, the
//! environment's key wins over the key file, and rotation moves the store to a new key and refuses the old.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;

use super::markers::Markers;
use super::{create, snapshot, stable};
use crate::helpers::{binary, on_postgres, run_to_exit, write_config, BinaryServer, TestConfig};

/// A new master key's base64 text.
fn new_key() -> String {
    let bytes: [u8; 32] = rand::random();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn key_file(dir: &Path, name: &str, key: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{key}\n")).unwrap();
    path
}

/// The binary with `args`, the test's data directory, and `env` on a clean `SWITCHBOARD_*` environment.
fn command(data_dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(binary());
    command
        .args(args)
        .env_remove("SWITCHBOARD_MASTER_KEY")
        .env_remove("SWITCHBOARD_CONFIG")
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .env("RUST_LOG", "warn");
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// A `serve` that must fail: its stderr, after checking that nothing was served and nothing in the data
/// directory changed.
fn refused_start(config: &Path, data_dir: &Path, env: &[(&str, &str)]) -> String {
    let before = snapshot(data_dir);
    let output = run_to_exit(command(
        data_dir,
        &["serve", "--config", config.to_str().unwrap()],
        env,
    ));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.code().is_some_and(|c| c != 0), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing is served");
    assert!(snapshot(data_dir) == before, "data_dir changed: {stderr}");
    stderr
}

/// A server on `data_dir` started with `env`, ready.
pub(super) async fn serve(config: &Path, data_dir: &Path, env: &[(&str, &str)]) -> BinaryServer {
    let server = BinaryServer::start_with_env(config, data_dir, env);
    server.wait_ready().await;
    server
}

/// Creates one marked request and answers its id and its body as read.
async fn one_request(server: &BinaryServer) -> (String, serde_json::Value) {
    let token = server.live_token().await;
    let id = create(server, &token, &Markers::new().vob(1)).await;
    let body = stable(server.read_request(&token, &id).await);
    (id, body)
}

async fn reads_back(server: &BinaryServer, id: &str, body: &serde_json::Value) {
    let token = server.live_token().await;
    assert_eq!(&stable(server.read_request(&token, id).await), body);
}

#[actix_web::test]
async fn a_wrong_or_missing_key_stops_the_start_and_changes_nothing() {
    let (data, configs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(configs.path(), &TestConfig::default());
    let right = new_key();
    let server = serve(&config, data.path(), &[("SWITCHBOARD_MASTER_KEY", &right)]).await;
    let (id, body) = one_request(&server).await;
    assert_eq!(server.terminate(), Some(0));
    assert!(
        !data.path().join("master.key").exists(),
        "a given key is never written"
    );

    let stderr = refused_start(
        &config,
        data.path(),
        &[("SWITCHBOARD_MASTER_KEY", &new_key())],
    );
    assert!(
        stderr.contains("the master key does not open the store"),
        "{stderr}"
    );
    let stderr = refused_start(&config, data.path(), &[]);
    assert!(stderr.contains("no master key was given"), "{stderr}");
    let stderr = refused_start(
        &config,
        data.path(),
        &[("SWITCHBOARD_MASTER_KEY", "c2hvcnQ=")],
    );
    assert!(
        stderr.contains("SWITCHBOARD_MASTER_KEY holds 5 bytes"),
        "{stderr}"
    );

    let server = serve(&config, data.path(), &[("SWITCHBOARD_MASTER_KEY", &right)]).await;
    reads_back(&server, &id, &body).await;
}

#[actix_web::test]
async fn the_environment_key_wins_over_the_key_file() {
    let (data, configs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (one, two) = (new_key(), new_key());
    let mut with_file = TestConfig::default();
    let file_two = key_file(configs.path(), "two.key", &two);
    with_file.set("encryption.key_file", file_two.to_str().unwrap());
    let config = write_config(configs.path(), &with_file);

    // Sealed under the environment's key, though the file names another.
    let server = serve(&config, data.path(), &[("SWITCHBOARD_MASTER_KEY", &one)]).await;
    let (id, body) = one_request(&server).await;
    assert_eq!(server.terminate(), Some(0));
    let stderr = refused_start(&config, data.path(), &[]);
    assert!(stderr.contains("does not open the store"), "{stderr}");

    let file_one = key_file(configs.path(), "one.key", &one);
    with_file.set("encryption.key_file", file_one.to_str().unwrap());
    let config = write_config(configs.path(), &with_file);
    let server = serve(&config, data.path(), &[]).await;
    reads_back(&server, &id, &body).await;
}

#[actix_web::test]
async fn rotation_moves_the_store_to_the_new_key_and_the_old_one_is_refused() {
    let (data, configs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(configs.path(), &TestConfig::default());
    // The demo's way: the first start keeps a generated key beside the data, readable by its owner only.
    let server = serve(&config, data.path(), &[]).await;
    let (id, body) = one_request(&server).await;
    let beside = data.path().join("master.key");
    let old = std::fs::read_to_string(&beside).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        beside.metadata().unwrap().permissions().mode() & 0o777,
        0o400
    );

    let new_file = configs.path().join("new.key");
    let generated = run_to_exit(command(
        data.path(),
        &["keys", "generate", "--out", new_file.to_str().unwrap()],
        &[],
    ));
    assert!(generated.status.success());
    let rotate = || {
        command(
            data.path(),
            &[
                "keys",
                "rotate",
                "--config",
                config.to_str().unwrap(),
                "--new-key-file",
                new_file.to_str().unwrap(),
            ],
            &[],
        )
    };
    // Not while a server holds the store (on PostgreSQL: while a node holds the database's lease).
    let refused = run_to_exit(rotate());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    let asked = if on_postgres() {
        "stop every node"
    } else {
        "stop the server"
    };
    assert!(stderr.contains(asked), "{stderr}");
    assert_eq!(server.terminate(), Some(0));

    let rotated = run_to_exit(rotate());
    let stderr = String::from_utf8_lossy(&rotated.stderr);
    assert!(rotated.status.success(), "{stderr}");
    assert!(!beside.exists(), "the old key beside the data is removed");

    let stderr = refused_start(
        &config,
        data.path(),
        &[("SWITCHBOARD_MASTER_KEY", old.trim())],
    );
    assert!(stderr.contains("does not open the store"), "{stderr}");
    let mut with_new = TestConfig::default();
    with_new.set("encryption.key_file", new_file.to_str().unwrap());
    let config = write_config(configs.path(), &with_new);
    let server = serve(&config, data.path(), &[]).await;
    reads_back(&server, &id, &body).await;
}
