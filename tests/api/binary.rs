//! The built binary as an operator runs it (operator contract sections 1-3): the first stdout line, the
//! probes, SIGTERM, restarts and `kill -9` on the same data directory, start-up failures on bad
//! configuration, and the demo credentials printed only for the embedded default config.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    binary, client, run_to_exit, status_and_json, write_config, Api, BinaryServer, TestConfig,
    ADMIN_TOKEN, LIVE_KEY, LIVE_SECRET, SANDBOX_KEY,
};

// ---- helpers ----------------------------------------------------------------------------------------

/// Polls `GET path` until it answers `status` (50 x 100 ms at most).
async fn wait_for_status(client: &reqwest::Client, server: &BinaryServer, path: &str, status: u16) {
    let mut last = String::from("no answer");
    for _ in 0..50 {
        match client.get(server.url(path)).send().await {
            Ok(response) if response.status() == status => return,
            Ok(response) => last = format!("status {}", response.status()),
            Err(e) => last = e.to_string(),
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{path} did not answer {status} within 5 s (last: {last})");
}

/// Starts the binary and waits until `/readyz` answers 200.
async fn start_ready(client: &reqwest::Client, config: &Path, data_dir: &Path) -> BinaryServer {
    let server = BinaryServer::start(config, data_dir);
    wait_for_status(client, &server, "/readyz", 200).await;
    server
}

/// An admin call on a running binary: status and JSON body.
async fn admin(
    client: &reqwest::Client,
    server: &BinaryServer,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client
        .request(method, server.url(path))
        .bearer_auth(ADMIN_TOKEN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    status_and_json(request.send().await.unwrap()).await
}

/// The latest version of a schema as the admin API reports it.
async fn schema_version(client: &reqwest::Client, server: &BinaryServer, id: &str) -> u64 {
    let (status, body) = admin(
        client,
        server,
        Method::GET,
        &format!("/admin/v1/schemas/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "GET schema {id}: {body}");
    body["version"]
        .as_u64()
        .unwrap_or_else(|| panic!("no version in {body}"))
}

/// An account body as the admin API takes it (the `[[accounts]]` fields as JSON).
fn account_body(key: &str, secret: &str) -> Value {
    json!({
        "daily_call_capacity": 50,
        "timezone": "UTC",
        "features": ["payer_phone_lookup"],
        "schemas": ["vob-basic"],
        "credentials": [{ "environment": "production", "key": key, "secret": secret }],
    })
}

/// A small schema body; `question` changes the content, so a second PUT publishes a new version.
fn schema_body(question: &str) -> Value {
    json!({
        "name": "Restart check",
        "request_type": "vob",
        "required_inputs": ["payerName", "memberId"],
        "fields": [{
            "name": "isActive",
            "label": "Active",
            "description": question,
            "type": "boolean",
            "required": true,
        }],
    })
}

/// The binary with a clean `SWITCHBOARD_*` environment, a throw-away data directory and working directory.
fn command(data_dir: &Path) -> Command {
    let mut command = Command::new(binary());
    command
        .env_remove("SWITCHBOARD_CONFIG")
        .env_remove("SWITCHBOARD_BIND")
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .env("RUST_LOG", "warn")
        .current_dir(data_dir);
    command
}

/// Starts a command whose whole stdout the test wants: a thread forwards every line, and keeps the pipe open
/// for as long as the child writes. Returns the server (address from the first line) and the later lines.
fn spawn_reading_stdout(mut command: Command) -> (BinaryServer, mpsc::Receiver<String>) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Wrapped at once, so the child is killed on every early return.
    let mut server = BinaryServer {
        child,
        api: Api::at(String::new()),
    };
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let first = lines
        .recv_timeout(Duration::from_secs(10))
        .expect("a first stdout line within 10 s");
    server.api.address = first
        .strip_prefix("Switchboard listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    (server, lines)
}

/// Every remaining stdout line of a child that has exited.
fn rest_of_stdout(lines: mpsc::Receiver<String>) -> String {
    let mut out = Vec::new();
    loop {
        match lines.recv_timeout(Duration::from_secs(5)) {
            Ok(line) => out.push(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("stdout did not close after exit; so far: {out:?}")
            }
        }
    }
    out.join("\n")
}

fn write_text(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

// ---- 1-2: serve, probes, SIGTERM ----------------------------------------------------------------------

#[actix_web::test]
async fn serve_with_a_config_file_prints_the_url_first_and_answers_healthz_and_readyz() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let client = client();

    let server = BinaryServer::start(&config, data_dir.path());

    let port = server
        .address
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("address {:?} is not http://127.0.0.1:PORT", server.address));
    let port: u16 = port
        .parse()
        .unwrap_or_else(|_| panic!("{port:?} is not a port"));
    assert_ne!(
        port, 0,
        "the real bound port is printed, not the requested 0"
    );
    wait_for_status(&client, &server, "/healthz", 200).await;
    let (status, body) =
        status_and_json(client.get(server.url("/healthz")).send().await.unwrap()).await;
    assert_eq!((status, body), (200, json!({ "status": "ok" })));
    wait_for_status(&client, &server, "/readyz", 200).await;
}

#[actix_web::test]
async fn sigterm_stops_the_server_with_exit_code_0() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let client = client();
    let server = start_ready(&client, &config, data_dir.path()).await;
    let health = server.url("/healthz");

    assert_eq!(server.terminate(), Some(0));

    assert!(
        client.get(health).send().await.is_err(),
        "the listener is closed after SIGTERM"
    );
}

// ---- 3: restarts keep state ---------------------------------------------------------------------------

#[actix_web::test]
async fn a_restart_on_the_same_data_dir_keeps_credentials_and_issued_tokens() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let client = client();

    let server = start_ready(&client, &config, data_dir.path()).await;
    let (status, body) = admin(
        &client,
        &server,
        Method::PUT,
        "/admin/v1/accounts/acme",
        Some(account_body("sk_live_acme_restart", "acme-live-secret")),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let (status, generated) = admin(
        &client,
        &server,
        Method::POST,
        "/admin/v1/accounts/acme/credentials",
        Some(json!({ "environment": "sandbox" })),
    )
    .await;
    assert_eq!(status, 201, "{generated}");
    let sandbox_key = generated["key"].as_str().unwrap().to_owned();
    let sandbox_secret = generated["secret"].as_str().unwrap().to_owned();
    assert!(sandbox_key.starts_with("sk_test_"), "{sandbox_key}");
    let old_token = server
        .token("sk_live_acme_restart", "acme-live-secret")
        .await;
    let response = client
        .get(server.url("/v1/schemas"))
        .bearer_auth(&old_token)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.terminate(), Some(0));

    let server = start_ready(&client, &config, data_dir.path()).await;
    server
        .token("sk_live_acme_restart", "acme-live-secret")
        .await;
    server.token(&sandbox_key, &sandbox_secret).await;
    let (status, body) = server.auth(&sandbox_key, "not-the-secret").await;
    assert_eq!(
        status, 401,
        "a wrong secret is still refused after the restart: {body}"
    );
    let response = client
        .get(server.url("/v1/schemas"))
        .bearer_auth(&old_token)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "the pre-restart token is accepted: {body}");
    let ids: Vec<&str> = body["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["schemaId"].as_str())
        .collect();
    assert_eq!(ids, ["vob-basic"]);
    let response = client
        .get(server.url("/v1/schemas"))
        .bearer_auth("not.a.token")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401, "a made-up token is still refused");
    assert_eq!(server.terminate(), Some(0));
}

#[actix_web::test]
async fn restarts_keep_published_schema_versions_and_do_not_bump_config_declared_ones() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let client = client();

    let server = start_ready(&client, &config, data_dir.path()).await;
    let path = "/admin/v1/schemas/restart-check";
    let (status, body) = admin(
        &client,
        &server,
        Method::PUT,
        path,
        Some(schema_body("Is the plan active?")),
    )
    .await;
    assert_eq!((status, &body["version"]), (201, &json!(1)), "{body}");
    let (status, body) = admin(
        &client,
        &server,
        Method::PUT,
        path,
        Some(schema_body("Is the policy active today?")),
    )
    .await;
    assert_eq!((status, &body["version"]), (200, &json!(2)), "{body}");
    assert_eq!(schema_version(&client, &server, "vob-basic").await, 1);
    assert_eq!(server.terminate(), Some(0));

    for restart in 1..=2 {
        let server = start_ready(&client, &config, data_dir.path()).await;
        assert_eq!(
            schema_version(&client, &server, "restart-check").await,
            2,
            "after restart {restart}"
        );
        assert_eq!(
            schema_version(&client, &server, "vob-basic").await,
            1,
            "after restart {restart}"
        );
        assert_eq!(server.terminate(), Some(0));
    }
}

// ---- 4: kill -9 ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn accounts_acknowledged_with_201_survive_kill_9() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let client = client();
    let server = start_ready(&client, &config, data_dir.path()).await;

    let puts = (0..20).map(|i| {
        let (client, server) = (&client, &server);
        async move {
            let body = account_body(&format!("sk_live_bulk_{i}"), &format!("bulk-secret-{i}"));
            admin(
                client,
                server,
                Method::PUT,
                &format!("/admin/v1/accounts/bulk-{i}"),
                Some(body),
            )
            .await
        }
    });
    for (i, (status, body)) in futures::future::join_all(puts)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(status, 201, "PUT bulk-{i}: {body}");
    }
    server.kill_hard();

    let server = start_ready(&client, &config, data_dir.path()).await;
    for i in 0..20 {
        let (status, body) = admin(
            &client,
            &server,
            Method::GET,
            &format!("/admin/v1/accounts/bulk-{i}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "bulk-{i} lost by kill -9: {body}");
        assert_eq!(body["id"], format!("bulk-{i}"));
    }
    server.token("sk_live_bulk_19", "bulk-secret-19").await;
    assert_eq!(server.terminate(), Some(0));
}

// ---- 5: configuration errors --------------------------------------------------------------------------

/// Runs `serve --config <file with text>` and returns the failed run's stderr, after checking the exit code
/// and that nothing was served.
fn failed_start(text: Option<&str>, bind: Option<&str>) -> (PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = match text {
        Some(text) => write_text(dir.path(), "switchboard.toml", text),
        None => dir.path().join("missing.toml"),
    };
    let mut command = command(dir.path());
    command.args(["serve", "--config"]).arg(&path);
    if let Some(bind) = bind {
        command.env("SWITCHBOARD_BIND", bind);
    }
    let output = run_to_exit(command);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{text:?} started: {stderr}");
    assert!(
        output.status.code().is_some_and(|c| c != 0),
        "{:?}",
        output.status
    );
    assert!(
        output.stdout.is_empty(),
        "nothing is served: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    (path, stderr)
}

#[test]
fn config_errors_stop_start_up_with_a_message_naming_the_file_and_the_key() {
    let cases = [
        ("[server]\nbind = \"not-an-address\"\n", None, "server.bind"),
        ("[server]\nbindd = 1\n", Some("127.0.0.1:0"), "server.bindd"),
        (
            "[[accounts]]\nid = \"a\"\ndaily_call_capacity = 1\nfeatures = [\"teleportation\"]\n",
            Some("127.0.0.1:0"),
            "accounts[0].features",
        ),
    ];
    for (text, bind, key) in cases {
        let (path, stderr) = failed_start(Some(text), bind);
        assert!(
            stderr.contains(&path.display().to_string()),
            "{text:?}: the file is not named: {stderr}"
        );
        assert!(
            stderr.contains(key),
            "{text:?}: {key} is not named: {stderr}"
        );
    }
}

#[test]
fn a_toml_syntax_error_stops_start_up_naming_the_file() {
    let (path, stderr) = failed_start(Some("[server\nbind = 1\n"), Some("127.0.0.1:0"));
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
}

#[test]
fn a_missing_config_file_stops_start_up_naming_the_file() {
    let (path, stderr) = failed_start(None, Some("127.0.0.1:0"));
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
}

#[test]
fn a_garbage_switchboard_bind_stops_start_up_naming_the_variable() {
    let (path, stderr) = failed_start(Some("[server]\nadmin_token = \"t\"\n"), Some("garbage"));
    assert!(stderr.contains("SWITCHBOARD_BIND"), "{stderr}");
    assert!(stderr.contains("server.bind"), "{stderr}");
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
}

// ---- 6: demo credentials ------------------------------------------------------------------------------

#[actix_web::test]
async fn the_embedded_default_prints_the_url_then_the_demo_credentials() {
    let data_dir = tempfile::tempdir().unwrap();
    let client = client();
    let mut command = command(data_dir.path());
    command.env("SWITCHBOARD_BIND", "127.0.0.1:0");

    let (server, lines) = spawn_reading_stdout(command);

    assert!(
        server.address.starts_with("http://127.0.0.1:"),
        "{}",
        server.address
    );
    wait_for_status(&client, &server, "/readyz", 200).await;
    server.token(LIVE_KEY, LIVE_SECRET).await;
    assert_eq!(server.terminate(), Some(0));
    let rest = rest_of_stdout(lines);
    assert!(rest.contains(LIVE_KEY), "{rest}");
    assert!(rest.contains(SANDBOX_KEY), "{rest}");
}

#[actix_web::test]
async fn an_operator_config_file_neither_prints_nor_inherits_the_demo_credentials() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), TestConfig::default().remove("accounts"));
    let client = client();
    let mut command = command(data_dir.path());
    command
        .args(["serve", "--config"])
        .arg(&config)
        .env("SWITCHBOARD_BIND", "127.0.0.1:0");

    let (server, lines) = spawn_reading_stdout(command);

    wait_for_status(&client, &server, "/readyz", 200).await;
    let (status, body) = server.auth(LIVE_KEY, LIVE_SECRET).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"], "INVALID_API_KEY");
    let (status, body) = admin(
        &client,
        &server,
        Method::GET,
        "/admin/v1/accounts/demo",
        None,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(server.terminate(), Some(0));
    let rest = rest_of_stdout(lines);
    assert!(
        !rest.contains(LIVE_KEY) && !rest.contains(SANDBOX_KEY),
        "credentials printed: {rest}"
    );
    assert!(!rest.contains("secret"), "credentials printed: {rest}");
}

#[actix_web::test]
async fn a_restart_resumes_the_manual_clock_where_the_admin_api_moved_it() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let client = client();
    let clock = |server: &BinaryServer| {
        let (client, url) = (client.clone(), server.url("/admin/v1/clock"));
        async move {
            let response = client
                .get(url)
                .bearer_auth(ADMIN_TOKEN)
                .send()
                .await
                .unwrap();
            status_and_json(response).await.1["now"].clone()
        }
    };

    let server = start_ready(&client, &config, data_dir.path()).await;
    let set = json!({ "set": "2026-11-25T10:00:00Z" });
    let (status, moved) = admin(&client, &server, Method::POST, "/admin/v1/clock", Some(set)).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(server.terminate(), Some(0));
    let server = start_ready(&client, &config, data_dir.path()).await;
    assert_eq!(clock(&server).await, moved["now"], "after a graceful stop");

    let advance = json!({ "advanceSeconds": 3600 });
    let (_, moved) = admin(
        &client,
        &server,
        Method::POST,
        "/admin/v1/clock",
        Some(advance),
    )
    .await;
    assert_eq!(moved["now"], "2026-11-25T11:00:00.000000+00:00");
    // Answered means stored: a kill -9 right after loses nothing.
    server.kill_hard();
    let server = start_ready(&client, &config, data_dir.path()).await;
    assert_eq!(clock(&server).await, moved["now"], "after a kill -9");

    // Refused moves change nothing stored.
    let back = json!({ "set": "2026-11-24T00:00:00Z" });
    let (status, _) = admin(
        &client,
        &server,
        Method::POST,
        "/admin/v1/clock",
        Some(back),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(server.terminate(), Some(0));
    let server = start_ready(&client, &config, data_dir.path()).await;
    assert_eq!(
        clock(&server).await,
        moved["now"],
        "a refused move is not kept"
    );
}
