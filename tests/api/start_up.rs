//! Starting the binary as an operator does, on the points where a start can surprise: the links handed
//! out when only a bind address is given, and a data directory that another server holds.

use std::process::Command;

use serde_json::json;

use crate::helpers::{
    binary, client, run_to_exit, sled_only, status_and_json, write_config, BinaryServer,
    TestConfig, SANDBOX_KEY, SANDBOX_SECRET,
};

#[actix_web::test]
async fn without_public_url_recording_links_point_at_the_port_bound_and_download() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    config.dispatching().remove("server.public_url");
    let config = write_config(config_dir.path(), &config);
    let server = BinaryServer::start_with_env(&config, data_dir.path(), &[]);
    server.wait_ready().await;
    let token = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let body = json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890", "sandboxScenario": "success"
        }
    });
    let response = client()
        .post(server.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (status, created) = status_and_json(response).await;
    assert_eq!(status, 200, "{created}");
    let id = created["requestId"].as_str().unwrap();

    let request = wait_terminal(&server, &token, id).await;

    let link = request["recordingDownloadUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no recording link: {request}"));
    assert!(
        link.starts_with(&format!("{}/v1/recordings/", server.address)),
        "{link} is not under the address bound, {}",
        server.address
    );
    let response = client().get(link).send().await.unwrap();
    assert_eq!(response.status(), 200, "{link}");
    assert!(!response.bytes().await.unwrap().is_empty());
}

/// Polls the single read of `id` until it leaves PROCESSING (20 s at most).
async fn wait_terminal(server: &BinaryServer, token: &str, id: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let response = client()
            .get(server.url(&format!("/v1/requests/{id}")))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(status, 200, "{body}");
        if body["state"] != "PROCESSING" {
            return body;
        }
        assert!(std::time::Instant::now() < deadline, "not terminal: {body}");
        actix_web::rt::time::sleep(std::time::Duration::from_millis(25)).await;
    }
}

#[actix_web::test]
async fn a_second_server_on_a_held_data_dir_exits_non_zero_with_one_clear_message() {
    sled_only!(
        "sled locks its data directory; on PostgreSQL a second server stands by \
         (several_nodes.rs)"
    );
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let first = BinaryServer::start_with_env(&config, data_dir.path(), &[]);
    first.wait_ready().await;
    let mut second = Command::new(binary());
    second
        .args(["serve", "--config"])
        .arg(&config)
        .env_remove("SWITCHBOARD_MASTER_KEY")
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", data_dir.path())
        .env("RUST_LOG", "warn");

    let output = run_to_exit(second);

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.code().is_some_and(|code| code != 0),
        "{:?}: {stderr}",
        output.status
    );
    let message = "another Switchboard holds the data directory";
    assert_eq!(stderr.matches(message).count(), 1, "{stderr}");
    assert!(
        stderr.contains(&data_dir.path().display().to_string()),
        "the directory is named: {stderr}"
    );
    assert!(!stderr.contains("WouldBlock"), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing was served");
    assert_eq!(first.terminate(), Some(0), "the first server is untouched");
}

#[test]
fn an_unreadable_key_file_is_a_configuration_error_naming_the_file_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    let missing = dir.path().join("no-such-master.key");
    config.set("encryption.key_file", missing.display().to_string());
    let path = write_config(dir.path(), &config);
    let data_dir = dir.path().join("data");

    let output = crate::node_start::serve_to_exit(&path, &data_dir, &[]);

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&path.display().to_string()),
        "the config file is named: {stderr}"
    );
    assert!(stderr.contains("encryption.key_file"), "{stderr}");
    assert!(!data_dir.exists(), "no data_dir was created");
}

#[test]
fn a_start_refused_for_a_port_in_use_leaves_no_new_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_config(dir.path(), &TestConfig::default());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let bind = taken.local_addr().unwrap().to_string();
    let data_dir = dir.path().join("data");

    let output = crate::node_start::serve_to_exit(&path, &data_dir, &[("SWITCHBOARD_BIND", &bind)]);

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("cannot bind"), "{stderr}");
    assert!(!data_dir.join("keyring").exists(), "no keyring: {stderr}");
    assert!(!data_dir.join("store").exists(), "no store: {stderr}");
}
