//! How a node on a shared PostgreSQL database starts: it reaches the database and checks its master key
//! before it serves anything, standing by included; a node restarted after kill -9 takes its own lease
//! back at once; a standby says whether it reaches the holder; and the self-signed certificate the
//! operations guide makes works between nodes.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use switchboard_storage::fresh_postgres_database;

use crate::helpers::{
    admin_query, binary, create_vob, run_to_exit, status_and_json, Api, BinaryServer, TestConfig,
};
use crate::several_nodes::{on_a_shared_database, shared_master_key, Node};
use crate::tls::config_with_tls;

/// `serve` with `config`, `data_dir` and `env`, run to its exit (a node that serves instead fails the
/// test after 10 s).
pub(crate) fn serve_to_exit(
    config: &Path,
    data_dir: &Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut command = Command::new(binary());
    command
        .args(["serve", "--config"])
        .arg(config)
        .env_remove("SWITCHBOARD_MASTER_KEY")
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .env("RUST_LOG", "warn");
    for (name, value) in env {
        command.env(name, value);
    }
    run_to_exit(command)
}

fn database_url(config: &Path) -> String {
    let table: toml::Table = toml::from_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    table["storage"]["url"].as_str().unwrap().to_owned()
}

fn lease_holder(url: &str) -> Vec<String> {
    admin_query(Some(url), "SELECT holder FROM switchboard_lease", &[])
        .iter()
        .map(|row| row.get::<_, String>(0))
        .collect()
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[actix_web::test]
async fn a_node_with_another_master_key_stops_before_it_serves_or_stands_by_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (config, key) = on_a_shared_database(dir.path(), &mut TestConfig::default());
    let holder = Node::new(&config, &key).start();
    holder.wait_ready().await;
    let url = database_url(&config);
    let leased = lease_holder(&url);
    let kept = admin_query(
        Some(&url),
        "SELECT count(*), coalesce(md5(string_agg(tree || key::text || value::text, ',' \
         ORDER BY tree, key)), '') FROM switchboard_kv WHERE tree NOT IN ('audit', 'meta')",
        &[],
    );
    let fingerprint =
        |rows: &[tokio_postgres::Row]| (rows[0].get::<_, i64>(0), rows[0].get::<_, String>(1));

    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let other_key = shared_master_key(&other);
    let data_dir = dir.path().join("wrong-key-node");
    let output = serve_to_exit(
        &config,
        &data_dir,
        &[("SWITCHBOARD_MASTER_KEY", &other_key)],
    );

    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stdout.contains("listening"), "it never served: {stdout}");
    assert!(
        stderr.contains("master key does not open the store"),
        "{stderr}"
    );
    assert!(!stderr.contains("standing by"), "{stderr}");
    assert!(!data_dir.exists(), "nothing was created on the node either");
    assert_eq!(lease_holder(&url), leased, "the lease was left alone");
    let now = admin_query(
        Some(&url),
        "SELECT count(*), coalesce(md5(string_agg(tree || key::text || value::text, ',' \
         ORDER BY tree, key)), '') FROM switchboard_kv WHERE tree NOT IN ('audit', 'meta')",
        &[],
    );
    assert_eq!(
        fingerprint(&now),
        fingerprint(&kept),
        "the database was left alone"
    );
    let token = holder.live_token().await;
    create_vob(&holder, &token).await;
}

#[actix_web::test]
async fn a_node_restarted_after_kill_9_takes_its_own_lease_back_and_is_never_a_standby_of_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (config, key) = on_a_shared_database(dir.path(), &mut TestConfig::default());
    let node = Node::new(&config, &key);
    let bind = format!("127.0.0.1:{}", free_port());
    let env = [("SWITCHBOARD_BIND", bind.as_str())];
    let first = node.start_with(&env);
    first.wait_ready().await;
    let token = first.live_token().await;
    let id = create_vob(&first, &token).await;
    first.kill_hard();

    let (again, log) =
        node.start_logged(&[("SWITCHBOARD_BIND", bind.as_str()), ("RUST_LOG", "info")]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ready = again.client.get(again.url("/readyz")).send().await;
        if let Ok(ready) = ready {
            let (status, body) = status_and_json(ready).await;
            assert_ne!(
                body["status"], "standby",
                "a standby of its own previous process: {body}"
            );
            if status == 200 {
                assert_eq!(body["status"], "ready");
                break;
            }
        }
        assert!(Instant::now() < deadline, "the node never became ready");
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        again.read_request(&token, &id).await["requestId"],
        id.as_str()
    );
    again.kill_hard();
    // Taken back, not waited out: a node that only waited for the old lease to expire becomes ready too.
    let log = log.join().unwrap();
    assert!(
        log.contains("took the orchestrator lease back from this node's previous process"),
        "{log}"
    );
}

/// The self-signed certificate command of docs/operations.md, as written there, making its files in
/// `dir` (the guide's /etc/switchboard/); `without` drops the lines that contain it.
fn documented_certificate(
    dir: &Path,
    without: Option<&str>,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md"))
        .unwrap();
    let lines: Vec<&str> = guide.lines().collect();
    let start = lines
        .iter()
        .position(|line| line.starts_with("openssl req -x509"))
        .expect("operations.md has the openssl command");
    let mut command = String::new();
    for line in &lines[start..] {
        if without.is_none_or(|dropped| !line.contains(dropped)) {
            command.push_str(line);
            command.push('\n');
        }
        if !line.trim_end().ends_with('\\') {
            break;
        }
    }
    let command = command.replace("/etc/switchboard/", &format!("{}/", dir.display()));
    let made = Command::new("sh").arg("-c").arg(&command).output().unwrap();
    assert!(
        made.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    (dir.join("cert.pem"), dir.join("key.pem"))
}

/// A client that trusts `cert_file` alone; `lenient` accepts any certificate (to reach a holder whose
/// certificate the forwarding client would refuse).
fn trusting(cert_file: &Path, lenient: bool) -> reqwest::Client {
    let pem = std::fs::read(cert_file).unwrap();
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .danger_accept_invalid_certs(lenient)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[actix_web::test]
async fn the_operations_guides_certificate_serves_between_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = documented_certificate(dir.path(), None);
    let (config, key) =
        on_a_shared_database(dir.path(), &mut config_with_tls(&cert_file, &key_file));
    let client = trusting(&cert_file, false);
    let first = Node::new(&config, &key).start();
    let holder = Api::with_client(first.address.clone(), client.clone());
    holder.wait_ready().await;
    let second = Node::new(&config, &key).start();
    let standby = Api::with_client(second.address.clone(), client);
    standby.wait_ready().await;
    let token = standby.live_token().await;
    let id = create_vob(&standby, &token).await;
    assert_eq!(
        holder.read_request(&token, &id).await["requestId"],
        id.as_str()
    );
}

#[actix_web::test]
async fn a_standby_that_cannot_reach_the_holder_is_not_ready_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    // As the guide had it: OpenSSL 3 marks the certificate a CA's, which rustls refuses as a server's.
    let (cert_file, key_file) = documented_certificate(dir.path(), Some("basicConstraints"));
    let (config, key) =
        on_a_shared_database(dir.path(), &mut config_with_tls(&cert_file, &key_file));
    let client = trusting(&cert_file, true);
    let first = Node::new(&config, &key).start();
    Api::with_client(first.address.clone(), client.clone())
        .wait_ready()
        .await;
    let second: BinaryServer = Node::new(&config, &key).start();
    let standby = Api::with_client(second.address.clone(), client);
    let (status, body) = wait_routed(&standby).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"], "NOT_READY", "{body}");
    let message = body["message"]
        .as_str()
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(
        message.contains("certificate"),
        "the cause is named: {body}"
    );
}

#[test]
fn a_database_out_of_reach_fails_the_start_before_the_node_listens_and_says_where_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut config = TestConfig::default();
    config.set("storage.kind", "postgres").set(
        "storage.url",
        format!("postgres://switchboard:secret-pw@127.0.0.1:{port}/switchboard"),
    );
    let path = crate::helpers::write_config(dir.path(), &config);
    let output = serve_to_exit(
        &path,
        &dir.path().join("data"),
        &[("SWITCHBOARD_MASTER_KEY", &shared_master_key(dir.path()))],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(!output.status.success());
    assert!(!stdout.contains("listening"), "{stdout}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");
    assert!(stderr.to_ascii_lowercase().contains("refused"), "{stderr}");
    assert!(!stderr.contains("secret-pw"), "{stderr}");
}

#[test]
fn a_missing_database_fails_the_start_before_the_node_listens() {
    let dir = tempfile::tempdir().unwrap();
    let url = fresh_postgres_database();
    let missing = match url.split_once('?') {
        Some((base, options)) => format!("{base}_missing?{options}"),
        None => format!("{url}_missing"),
    };
    let mut config = TestConfig::default();
    config
        .set("storage.kind", "postgres")
        .set("storage.url", missing);
    let path = crate::helpers::write_config(dir.path(), &config);
    let output = serve_to_exit(
        &path,
        &dir.path().join("data"),
        &[("SWITCHBOARD_MASTER_KEY", &shared_master_key(dir.path()))],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(!output.status.success());
    assert!(!stdout.contains("listening"), "{stdout}");
    assert!(stderr.contains("does not exist"), "{stderr}");
}

#[actix_web::test]
async fn a_standby_logs_an_unreachable_holder_once_per_episode_not_once_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let (config, key) = on_a_shared_database(dir.path(), &mut TestConfig::default());
    let holder = Node::new(&config, &key).start();
    holder.wait_ready().await;
    let data_dir = tempfile::tempdir().unwrap();
    let (standby, log) = BinaryServer::start_logged(
        &config,
        data_dir.path(),
        &[("SWITCHBOARD_MASTER_KEY", &key)],
    );
    standby.wait_ready().await;
    holder.kill_hard();
    let mut refused = 0;
    for _ in 0..40 {
        // A write: the standby answers reads itself.
        let answer = standby
            .client
            .post(standby.url("/v1/requests"))
            .send()
            .await
            .unwrap();
        if answer.status() == 503 {
            refused += 1;
        }
    }
    assert!(
        refused > 1,
        "the holder is gone: its calls are refused ({refused})"
    );
    standby.kill_hard();
    let log = log.join().unwrap();
    let lines = log
        .matches("the node that runs requests cannot be reached")
        .count();
    assert_eq!(lines, 1, "{log}");
}

/// Polls a standby's `/readyz` until it knows which node holds the lease (its answer no longer says
/// that none does): that answer.
pub(crate) async fn wait_routed(standby: &Api) -> (u16, serde_json::Value) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = standby.client.get(standby.url("/readyz")).send().await;
        if let Ok(answer) = answer {
            let (status, body) = status_and_json(answer).await;
            let unrouted = body["message"]
                .as_str()
                .is_some_and(|message| message.starts_with("No node runs requests"));
            if !unrouted {
                return (status, body);
            }
        }
        assert!(
            Instant::now() < deadline,
            "the standby never learned the holder"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}
