//! The binary on PostgreSQL (`[storage] kind = "postgres"`): the schema made by `switchboard migrate` and
//! refused by `serve` until then, requests run to their end, and everything acknowledged read back after a
//! kill -9. Each test gets a database of its own on the server `scripts/test.sh` starts.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use switchboard_storage::{empty_postgres_database, fresh_postgres_database};

use crate::helpers::{
    admin_query, binary, database_name, run_to_exit, write_config, BinaryServer, TestConfig,
};

fn on_postgres(url: &str) -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("storage.kind", "postgres")
        .set("storage.url", url);
    config
}

/// Runs `switchboard <subcommand> --config PATH` to its exit: exit code and stderr.
fn run(subcommand: &str, config: &Path, data_dir: &Path) -> (Option<i32>, String) {
    let mut command = Command::new(binary());
    command
        .args([subcommand, "--config"])
        .arg(config)
        .env_remove("SWITCHBOARD_MASTER_KEY")
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", data_dir);
    let output = run_to_exit(command);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `serve` exits non-zero, saying `why` and naming `switchboard migrate`.
fn serve_is_refused(config: &Path, data_dir: &Path, why: &str) {
    let (code, stderr) = run("serve", config, data_dir);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(why) && stderr.contains("switchboard migrate"),
        "{stderr}"
    );
}

/// `migrate` succeeds, saying `what` it did.
fn migrate_says(config: &Path, data_dir: &Path, what: &str) {
    let (code, stderr) = run("migrate", config, data_dir);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains(what), "{stderr}");
}

#[actix_web::test]
async fn serve_refuses_a_database_without_the_schema_until_migrate_makes_it() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let url = empty_postgres_database();
    let config = write_config(dir.path(), &on_postgres(&url));

    serve_is_refused(&config, &data_dir, "has no Switchboard schema");
    migrate_says(&config, &data_dir, "from nothing to version 4");
    migrate_says(&config, &data_dir, "at version 4 already");

    // A database an earlier release migrated (version 1: no `node_url` in the lease, no `audit_events`,
    // `requests`, `accounts` or `credential_keys` table) is refused by name until migrate upgrades it.
    for statement in [
        "ALTER TABLE switchboard_lease DROP COLUMN node_url",
        "DROP TABLE audit_events",
        "DROP TABLE requests",
        "DROP TABLE credential_keys",
        "DROP TABLE accounts",
        "UPDATE switchboard_schema SET version = 1",
    ] {
        admin_query(Some(&url), statement, &[]);
    }
    serve_is_refused(&config, &data_dir, "is at version 1");
    migrate_says(&config, &data_dir, "from version 1 to version 4");

    let server = BinaryServer::start_ready(&config, &data_dir).await;
    let token = server.sandbox_token().await;
    let (status, _) = server.get_json("/v1/schemas", &token).await;
    assert_eq!(status, 200);
}

#[actix_web::test]
async fn migrate_on_an_embedded_store_not_made_yet_says_so_and_makes_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut embedded = TestConfig::default();
    embedded.set("storage.kind", "sled");
    let config = write_config(dir.path(), &embedded);
    let data_dir = dir.path().join("data");
    let (code, stderr) = run("migrate", &config, &data_dir);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("no store in") && stderr.contains("yet"),
        "{stderr}"
    );
    assert!(!data_dir.join("keyring").exists(), "nothing made");
}

#[actix_web::test]
async fn a_storage_section_that_does_not_add_up_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "sled",
            Some("postgres://x@127.0.0.1/db"),
            "applies to kind = \"postgres\" only",
        ),
        ("postgres", None, "is required with kind = \"postgres\""),
        (
            "postgres",
            Some("mysql://x@127.0.0.1/db"),
            "must be a postgres:// or postgresql:// URL",
        ),
    ];
    for (kind, url, message) in cases {
        let mut config = TestConfig::default();
        config.set("storage.kind", kind);
        if let Some(url) = url {
            config.set("storage.url", url);
        }
        let path = write_config(dir.path(), &config);
        let (code, stderr) = run("serve", &path, &dir.path().join("data"));
        assert_eq!(code, Some(2), "{kind} {url:?}: {stderr}");
        assert!(
            stderr.contains("storage.") && stderr.contains(message),
            "{kind} {url:?}: {stderr}"
        );
        assert!(!stderr.contains("x@127"), "the URL is not echoed: {stderr}");
    }
}

/// A request of the demo's claim-status schema, production or sandbox by the token that creates it.
fn claim(internal_id: &str) -> Value {
    json!({
        "schemaId": "claim-status-basic", "internalId": internal_id,
        "inputs": {"payerName": "UHC", "memberId": "W123456789", "groupNumber": "G100",
                   "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
                   "dateOfService": "2026-10-01", "billingProviderNpi": "1234567890",
                   "billingProviderTaxId": "12-3456789"}
    })
}

#[actix_web::test]
async fn requests_run_to_their_end_and_read_back_after_a_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let config = write_config(dir.path(), &on_postgres(&fresh_postgres_database()));

    let server = BinaryServer::start_ready(&config, &data_dir).await;
    let live = server.live_token().await;
    let sandbox = server.sandbox_token().await;
    let production = server.create_request(&live, &claim("pg-live-1")).await;
    let simulated = server
        .create_request(&sandbox, &claim("pg-sandbox-1"))
        .await;
    let production_done = server.wait_terminal(&live, &production).await;
    let sandbox_done = server.wait_terminal(&sandbox, &simulated).await;
    assert_eq!(production_done["state"], "SUCCESS", "{production_done}");
    assert_eq!(sandbox_done["state"], "SUCCESS", "{sandbox_done}");
    assert!(
        production_done["callSteps"][0]["numContributingCalls"].as_u64() >= Some(1),
        "answered by a call through the simulator: {production_done}"
    );
    server.kill_hard();

    // The lease of the killed process runs out first: until then the new one stands by.
    let server = BinaryServer::start(&config, &data_dir);
    server.wait_serving(Duration::from_secs(20)).await;
    let live = server.live_token().await;
    let sandbox = server.sandbox_token().await;
    assert_eq!(
        server.read_request(&live, &production).await,
        production_done
    );
    assert_eq!(
        server.read_request(&sandbox, &simulated).await,
        sandbox_done
    );
    // The idempotency key survived: the same internalId answers the same request.
    let (status, replay) = server.post_requests(&live, &claim("pg-live-1")).await;
    assert_eq!(status, 200, "{replay}");
    assert_eq!(replay["requestId"], production.as_str());
    let backup = server
        .admin(
            reqwest::Method::POST,
            "/admin/v1/backups",
            Some(json!({"path": dir.path().join("copy").display().to_string()})),
        )
        .await;
    assert_eq!(
        backup.status(),
        409,
        "the database is backed up by its own tools"
    );
    assert!(!dir.path().join("copy").exists());
    let (status, page) = server.get_json("/v1/requests?pageSize=10", &live).await;
    assert_eq!(status, 200);
    let listed: Vec<&str> = page["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        [production.as_str()],
        "the sandbox's request is the sandbox's"
    );

    // Purge and the audit log's hash chain are the same on PostgreSQL, across the kill.
    let purged = server
        .admin(
            reqwest::Method::DELETE,
            &format!("/admin/v1/requests/{simulated}"),
            None,
        )
        .await;
    assert_eq!(purged.status(), 204);
    let (status, gone) = server
        .get_json(&format!("/v1/requests/{simulated}"), &sandbox)
        .await;
    assert_eq!(
        (status, gone["error"].as_str()),
        (404, Some("REQUEST_NOT_FOUND"))
    );
    let purge_event: Value = server
        .admin(
            reqwest::Method::GET,
            &format!("/admin/v1/audit?action=request.purge&targetId={simulated}"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        purge_event["events"].as_array().unwrap().len(),
        1,
        "{purge_event}"
    );
    let verified: Value = server
        .admin(reqwest::Method::GET, "/admin/v1/audit/verify", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(verified["ok"], true, "{verified}");
}

/// The URL of a fresh database, asking for TLS.
fn over_tls() -> String {
    let url = fresh_postgres_database();
    let base = url.split_once('?').map_or(url.as_str(), |(base, _)| base);
    format!("{base}?sslmode=require")
}

#[actix_web::test]
async fn the_database_is_reached_over_tls_checked_against_the_configured_ca() {
    let ca = std::env::var("SWITCHBOARD_TEST_POSTGRES_CA")
        .expect("SWITCHBOARD_TEST_POSTGRES_CA: scripts/test.sh starts PostgreSQL with TLS");
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");

    // A certificate from a CA the server was not told of is refused, whatever the link.
    let config = write_config(dir.path(), &on_postgres(&over_tls()));
    let (code, stderr) = run("serve", &config, &data_dir);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("cannot connect to the database"),
        "{stderr}"
    );

    let url = over_tls();
    let mut config = on_postgres(&url);
    config.set("storage.ca_file", ca.as_str());
    let config = write_config(dir.path(), &config);
    let server = BinaryServer::start_ready(&config, &data_dir).await;
    let token = server.live_token().await;
    let id = server.create_request(&token, &claim("pg-tls-1")).await;
    assert_eq!(server.wait_terminal(&token, &id).await["state"], "SUCCESS");
    let rows = admin_query(
        None,
        "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl) \
         FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) \
         WHERE a.datname = $1 AND a.pid <> pg_backend_pid()",
        &[&database_name(&url)],
    );
    let (encrypted, plain): (i64, i64) = (rows[0].get(0), rows[0].get(1));
    assert!(encrypted > 0, "the server's connections use TLS");
    assert_eq!(plain, 0, "no connection of the server is in the clear");
}

#[actix_web::test]
async fn a_server_whose_database_connections_are_cut_connects_again_and_keeps_its_lease() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let url = fresh_postgres_database();
    let config = write_config(dir.path(), &on_postgres(&url));
    let mut server = BinaryServer::start_ready(&config, &data_dir).await;
    let token = server.live_token().await;
    let before = server.create_request(&token, &claim("pg-cut-1")).await;
    server.wait_terminal(&token, &before).await;

    // As a restart or failover of the database does.
    let rows = admin_query(
        None,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = $1 AND pid <> pg_backend_pid()",
        &[&database_name(&url)],
    );
    let cut: i64 = rows[0].get(0);
    assert!(cut >= 2, "the server's connections were cut ({cut})");
    // Past the time a node that cannot renew its lease takes to stop itself.
    actix_web::rt::time::sleep(switchboard_storage::FENCE_AFTER + Duration::from_secs(1)).await;
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the node kept its lease"
    );

    assert_eq!(
        server.read_request(&token, &before).await["state"],
        "SUCCESS"
    );
    let after = server.create_request(&token, &claim("pg-cut-2")).await;
    assert_eq!(
        server.wait_terminal(&token, &after).await["state"],
        "SUCCESS"
    );
    assert_eq!(server.terminate(), Some(0));
}

/// A master key as `keys generate` writes it, in `dir`: its path and its text.
pub(crate) fn generated_key(dir: &Path, name: &str) -> (std::path::PathBuf, String) {
    let path = dir.join(name);
    let mut command = Command::new(binary());
    command.args(["keys", "generate", "--out"]).arg(&path);
    assert!(run_to_exit(command).status.success());
    let text = std::fs::read_to_string(&path).unwrap().trim().to_owned();
    (path, text)
}

#[actix_web::test]
async fn rotation_rewraps_the_keyring_in_the_database_and_the_old_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let config = write_config(dir.path(), &on_postgres(&fresh_postgres_database()));
    let (_, old) = generated_key(dir.path(), "old.key");
    let (new_file, new) = generated_key(dir.path(), "new.key");

    let server =
        BinaryServer::start_with_env(&config, &data_dir, &[("SWITCHBOARD_MASTER_KEY", &old)]);
    server.wait_ready().await;
    let token = server.live_token().await;
    let id = server.create_request(&token, &claim("pg-rotate-1")).await;
    let before = server.wait_terminal(&token, &id).await;
    let rotate = || {
        let mut rotate = Command::new(binary());
        rotate
            .args(["keys", "rotate", "--config"])
            .arg(&config)
            .arg("--new-key-file")
            .arg(&new_file)
            .env("SWITCHBOARD_MASTER_KEY", &old)
            .env("SWITCHBOARD_DATA_DIR", &data_dir);
        run_to_exit(rotate)
    };
    // A running node would go on sealing under the old key: refused, and the node is unharmed.
    let refused = rotate();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("stop every node"), "{stderr}");
    assert_eq!(server.read_request(&token, &id).await, before);
    assert_eq!(server.terminate(), Some(0));
    assert!(
        !data_dir.join("store").exists(),
        "a node on PostgreSQL keeps no store of its own, not even after a graceful stop"
    );

    let rotated = rotate();
    let stderr = String::from_utf8_lossy(&rotated.stderr);
    assert!(rotated.status.success(), "{stderr}");

    let mut refused = Command::new(binary());
    refused
        .args(["serve", "--config"])
        .arg(&config)
        .env("SWITCHBOARD_MASTER_KEY", &old)
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", &data_dir);
    let refused = run_to_exit(refused);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("does not open the store"), "{stderr}");

    let server =
        BinaryServer::start_with_env(&config, &data_dir, &[("SWITCHBOARD_MASTER_KEY", &new)]);
    server.wait_ready().await;
    let token = server.live_token().await;
    assert_eq!(server.read_request(&token, &id).await, before);
    assert_eq!(server.terminate(), Some(0));
}
