//! Several binaries on one PostgreSQL database (`[storage] kind = "postgres"`) serve as one Switchboard:
//! one runs requests while the others stand by and forward their clients and platform events to it, and
//! when it dies a standby takes its requests over the way a restart resumes them: every request ends, each
//! live platform call is re-attached (one create per attempt), nothing is booked or sent twice, and a token
//! one node issued works on the other. A node that loses the lease stops.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use switchboard_storage::{fresh_postgres_database, LEASE_TTL};

use crate::fakes::retell::{FakeRetell, Scenario};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    admin_query, binary, create_vob, run_to_exit, status_and_json, write_config, Api, BinaryServer,
    TestConfig,
};
use crate::receiver::Receiver;
use crate::standby_stop::holder_advertising;
use crate::tls::{config_with_tls, TestCertificate};
use crate::voice_retell::retell_config;

/// A node taking over resumes its calls first: a longer wait than the default.
pub(crate) const TAKEOVER_WAIT: Duration = Duration::from_secs(30);

/// A master key both nodes are given, as `keys generate` writes it.
pub(crate) fn shared_master_key(dir: &Path) -> String {
    let path = dir.join("master.key");
    let mut command = Command::new(binary());
    command.args(["keys", "generate", "--out"]).arg(&path);
    assert!(run_to_exit(command).status.success());
    std::fs::read_to_string(path).unwrap().trim().to_owned()
}

/// `config` on a fresh database, written in `dir`, and the master key its nodes share.
pub(crate) fn on_a_shared_database(dir: &Path, config: &mut TestConfig) -> (PathBuf, String) {
    config
        .set("storage.kind", "postgres")
        .set("storage.url", fresh_postgres_database());
    (write_config(dir, config), shared_master_key(dir))
}

/// One node: its own data directory, the shared database and key.
pub(crate) struct Node {
    config: PathBuf,
    data_dir: tempfile::TempDir,
    key: String,
}

impl Node {
    pub(crate) fn new(config: &Path, key: &str) -> Node {
        Node {
            config: config.to_owned(),
            data_dir: tempfile::tempdir().unwrap(),
            key: key.to_owned(),
        }
    }

    /// Starts the binary; answers once it listens, which a standby does at once (it forwards).
    pub(crate) fn start(&self) -> BinaryServer {
        self.start_with(&[])
    }

    /// [`Node::start`] with `env` set on top (a fixed bind, a log level).
    pub(crate) fn start_with(&self, env: &[(&str, &str)]) -> BinaryServer {
        let mut env = env.to_vec();
        env.insert(0, ("SWITCHBOARD_MASTER_KEY", &self.key));
        BinaryServer::start_with_env(&self.config, self.data_dir.path(), &env)
    }

    /// [`Node::start_with`], its log read to its end once it exits.
    pub(crate) fn start_logged(
        &self,
        env: &[(&str, &str)],
    ) -> (BinaryServer, std::thread::JoinHandle<String>) {
        let mut env = env.to_vec();
        env.insert(0, ("SWITCHBOARD_MASTER_KEY", &self.key));
        BinaryServer::start_logged(&self.config, self.data_dir.path(), &env)
    }
}

/// Two nodes on the database of `config`: the first holds the lease, the second stands by (and serves by
/// forwarding to the first).
async fn holder_and_standby(config: &Path, key: &str) -> (BinaryServer, BinaryServer) {
    let first = Node::new(config, key).start();
    first.wait_ready().await;
    let second = Node::new(config, key).start();
    second.wait_ready().await;
    (first, second)
}

/// A holder and a standby, and three requests created through the standby whose platform calls the
/// Retell fake holds live (their events go to the standby): the token, the request ids, the platform's
/// creates.
async fn three_live_calls_through_the_standby(
    nodes: &Nodes,
) -> (
    BinaryServer,
    BinaryServer,
    String,
    Vec<String>,
    Vec<serde_json::Value>,
) {
    nodes.fake.hold_calls(true);
    nodes
        .fake
        .force(&[Scenario::Answered, Scenario::Answered, Scenario::Answered]);
    let (first, second) = holder_and_standby(&nodes.config, &nodes.key).await;
    nodes.fake.deliver_to(&second.url(""));
    let token = second.live_token().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create_vob(&second, &token).await);
    }
    let created = nodes.fake.wait_creates(3).await;
    (first, second, token, ids, created)
}

/// Creates a request through `api` with `inputs` while claiming the client address 198.51.100.9 with a
/// made-up proof, as only a forwarding node may; answers the request's id.
async fn create_claiming_an_address(api: &Api, token: &str, inputs: &Value) -> String {
    let created = api
        .client
        .post(api.url("/v1/requests"))
        .bearer_auth(token)
        .header("x-switchboard-client-ip", "198.51.100.9")
        .header("x-switchboard-client-ip-proof", "00".repeat(32))
        .json(&json!({ "schemaId": "vob-basic", "inputs": inputs }))
        .send()
        .await
        .unwrap();
    let (status, created) = status_and_json(created).await;
    assert_eq!(status, 200, "{created}");
    created["requestId"].as_str().unwrap().to_owned()
}

/// What the nodes of a test share: the Retell fake, the webhook receiver, the configuration (a fresh
/// database) and the master key.
pub(crate) struct Nodes {
    fake: FakeRetell,
    receiver: Receiver,
    pub(crate) config: PathBuf,
    pub(crate) key: String,
    _dir: tempfile::TempDir,
}

impl Nodes {
    pub(crate) async fn new() -> Nodes {
        let fake = FakeRetell::start().await;
        let receiver = Receiver::start().await;
        let dir = tempfile::tempdir().unwrap();
        let (config, key) = config(dir.path(), &fake, &receiver);
        Nodes {
            config,
            key,
            fake,
            receiver,
            _dir: dir,
        }
    }

    pub(crate) fn node(&self) -> Node {
        Node::new(&self.config, &self.key)
    }

    /// The URL of the database the nodes share.
    pub(crate) fn database_url(&self) -> String {
        let config = std::fs::read_to_string(&self.config).unwrap();
        let table: toml::Table = toml::from_str(&config).unwrap();
        table["storage"]["url"].as_str().unwrap().to_owned()
    }
}

/// The configuration of a test's nodes and their master key: Retell calls, webhooks to `receiver`.
fn config(dir: &Path, fake: &FakeRetell, receiver: &Receiver) -> (PathBuf, String) {
    let mut config = TestConfig::default();
    retell_config(&mut config, fake);
    config.set("webhooks.allow_private_targets", true);
    config
        .demo_account()
        .insert("webhook_url".into(), receiver.url("/hook").into());
    on_a_shared_database(dir, &mut config)
}

#[actix_web::test]
async fn a_standby_takes_over_after_kill_9_and_finishes_the_live_calls_without_placing_any_again() {
    let nodes = Nodes::new().await;
    let (fake, receiver) = (&nodes.fake, &nodes.receiver);
    // Clients and platform events reach the standby only, before the crash and after it.
    let (first, second, token, ids, created) = three_live_calls_through_the_standby(&nodes).await;
    for call in &created {
        crate::voice_retell::wait_platform_call(fake, call).await;
    }
    // The platform's ids are stored before anything waits on them; give the commits a moment, then crash.
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    let (_, ready) = status_and_json(
        second
            .client
            .get(second.url("/readyz"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(ready["status"], "standby", "the standby runs nothing yet");
    let killed = Instant::now();
    first.kill_hard();
    // Until it has taken over, the standby has no node to forward a write to: 503 with Retry-After.
    let waiting = second
        .client
        .post(second.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&json!({ "schemaId": "vob-basic" }))
        .send()
        .await
        .unwrap();
    assert_eq!(waiting.status(), 503);
    assert_eq!(waiting.headers()["retry-after"], "1");
    let (_, waiting) = status_and_json(waiting).await;
    assert_eq!(waiting["error"], "NOT_READY", "{waiting}");

    second.wait_serving(TAKEOVER_WAIT).await;
    let takeover = killed.elapsed();
    assert!(
        takeover < LEASE_TTL + Duration::from_secs(5),
        "took over in {takeover:?}"
    );
    eprintln!("several_nodes: took over {takeover:?} after kill -9");
    fake.release_calls();
    for id in &ids {
        let done = second.wait_terminal_within(&token, id, TAKEOVER_WAIT).await;
        assert_eq!(done["state"], "SUCCESS", "{done}");
    }
    assert_eq!(fake.creates().len(), 3, "the standby placed a call again");
    let hooks = receiver.wait_for(3, TAKEOVER_WAIT).await;
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    let mut notified: Vec<String> = receiver
        .received()
        .iter()
        .map(|hook| hook.json()["requestId"].as_str().unwrap().to_owned())
        .collect();
    notified.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(notified, expected, "one webhook per request: {hooks:?}");
    assert_eq!(second.terminate(), Some(0));
}

#[actix_web::test]
async fn every_node_serves_clients_as_one_switchboard() {
    let nodes = Nodes::new().await;
    let (first, second) = holder_and_standby(&nodes.config, &nodes.key).await;
    // A request another node forwarded is never forwarded again: a standby answers it itself.
    let looped = second
        .client
        .post(second.url("/v1/requests"))
        .header("x-switchboard-forwarded", "1")
        .send()
        .await
        .unwrap();
    let (status, looped) = status_and_json(looped).await;
    assert_eq!((status, looped["error"].as_str()), (503, Some("NOT_READY")));
    let metrics = second
        .client
        .get(second.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert!(metrics
        .text()
        .await
        .unwrap()
        .contains("switchboard_standby 1"));

    // A client of the standby, from an address of its own, so the audit can tell it from the nodes'.
    let client = reqwest::Client::builder()
        .local_address("127.0.0.3".parse::<IpAddr>().unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let via_standby = Api::with_client(second.address.clone(), client);
    let token = via_standby.live_token().await;
    let body = json!({
        "schemaId": "vob-basic",
        "internalId": "same-on-both-nodes",
        "inputs": {
            "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890"
        }
    });
    // The same idempotency key on both nodes at once: one request.
    let (on_first, on_second) = futures::join!(
        first.post_requests(&token, &body),
        via_standby.post_requests(&token, &body)
    );
    assert_eq!(
        (on_first.0, on_second.0),
        (200, 200),
        "{on_first:?} {on_second:?}"
    );
    let id = on_first.1["requestId"].as_str().unwrap().to_owned();
    assert_eq!(on_second.1["requestId"], id.as_str());
    let (status, listed) = first.get_json("/v1/requests?pageSize=50", &token).await;
    assert_eq!(status, 200);
    assert_eq!(listed["requests"].as_array().unwrap().len(), 1, "{listed}");

    // Reads, errors and the admin API answer alike on both.
    let read = |api: &Api| {
        let (api, token, id) = (api.clone(), token.clone(), id.clone());
        async move { api.get_json(&format!("/v1/requests/{id}"), &token).await }
    };
    let (direct, forwarded) = (read(&first).await, read(&via_standby).await);
    assert_eq!(direct.0, 200);
    assert_eq!(direct.1["requestId"], forwarded.1["requestId"]);
    assert_eq!(direct.1["inputs"], forwarded.1["inputs"]);
    let (status, missing) = via_standby
        .get_json("/v1/requests/00000000-0000-4000-8000-000000000000", &token)
        .await;
    assert_eq!(
        (status, missing["error"].as_str()),
        (404, Some("REQUEST_NOT_FOUND"))
    );
    let denied = via_standby.get("/v1/requests", "not-a-token").await;
    assert_eq!(denied.status(), 401);

    // The node that ran the create audited the client's address, not the standby's; an address a client
    // claims itself, without the nodes' proof, is not believed.
    let forged = create_claiming_an_address(&first, &token, &body["inputs"]).await;
    let audited = |action: &'static str, target: String| {
        let api = second.clone();
        async move {
            let path = format!("/admin/v1/audit?action={action}&targetId={target}");
            // Read events are written within half a second.
            for _ in 0..50 {
                let (_, page) = status_and_json(api.admin(Method::GET, &path, None).await).await;
                if !page["events"][0].is_null() {
                    return page["events"][0]["ip"].clone();
                }
                actix_web::rt::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("no {action} event for {target}");
        }
    };
    // The standby passes on the address it saw, never one the client claims.
    let forwarded = create_claiming_an_address(&via_standby, &token, &body["inputs"]).await;
    assert_eq!(
        audited("request.create", forwarded.clone()).await,
        "127.0.0.3",
        "a forwarded create is audited at the client's address"
    );
    assert_eq!(
        audited("request.create", forged).await,
        "127.0.0.1",
        "an address a client claims is not believed"
    );
    // A call whose path the forwarding rewrites (a raw quote in the query, which the URL percent-encodes)
    // proves its client's address too.
    let raw_read = format!(
        "GET /v1/requests/{forwarded}?note='raw' HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n",
        second.address.trim_start_matches("http://")
    );
    assert!(
        raw_http(&second.address, "127.0.0.3", &raw_read)
            .await
            .starts_with("HTTP/1.1 200"),
        "a read with a raw quote in its query is served"
    );
    assert_eq!(
        audited("request.read", forwarded).await,
        "127.0.0.3",
        "a forwarded read whose query was re-encoded is audited at the client's address"
    );

    // A standby stopped before it ever ran requests ends cleanly, and the holder keeps serving.
    assert_eq!(second.terminate(), Some(0));
    assert_eq!(
        first
            .get_json(&format!("/v1/requests/{id}"), &token)
            .await
            .0,
        200
    );
    assert_eq!(first.terminate(), Some(0));
}

#[actix_web::test]
async fn killing_a_standby_loses_nothing_it_acknowledged() {
    let nodes = Nodes::new().await;
    let (fake, receiver) = (&nodes.fake, &nodes.receiver);
    let (first, second, token, ids, _) = three_live_calls_through_the_standby(&nodes).await;
    second.kill_hard();
    // The platform's events now reach the node that runs the calls directly.
    fake.deliver_to(&first.url(""));
    fake.release_calls();
    for id in &ids {
        let done = first.wait_terminal_within(&token, id, TAKEOVER_WAIT).await;
        assert_eq!(done["state"], "SUCCESS", "{done}");
    }
    assert_eq!(fake.creates().len(), 3, "one platform call per request");
    receiver.wait_for(3, TAKEOVER_WAIT).await;
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.received().len(), 3, "one webhook per request");
    assert_eq!(first.terminate(), Some(0));
}

#[actix_web::test]
async fn a_standby_forwards_over_https_to_a_holder_serving_the_shared_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let certificate = TestCertificate::write(dir.path());
    let mut config = config_with_tls(&certificate.cert_file, &certificate.key_file);
    let (path, key) = on_a_shared_database(dir.path(), &mut config);
    let client = certificate.client(reqwest::tls::Version::TLS_1_3);

    let first = Node::new(&path, &key).start();
    let holder = Api::with_client(first.address.clone(), client.clone());
    holder.wait_ready().await;
    let second = Node::new(&path, &key).start();
    assert!(second.address.starts_with("https://"), "{}", second.address);
    let via_standby = Api::with_client(second.address.clone(), client);
    via_standby.wait_ready().await;
    let token = via_standby.live_token().await;
    let id = create_vob(&via_standby, &token).await;
    assert_eq!(
        holder.read_request(&token, &id).await["requestId"],
        id.as_str()
    );
    assert_eq!(second.terminate(), Some(0));
    assert_eq!(first.terminate(), Some(0));
}

#[actix_web::test]
async fn a_recording_stored_by_the_holder_downloads_from_either_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    config.dispatching();
    let (path, key) = on_a_shared_database(dir.path(), &mut config);
    let (first, second) = holder_and_standby(&path, &key).await;

    // A production call through the payer simulator, which records it.
    let token = second.live_token().await;
    let id = create_vob(&second, &token).await;
    let done = second.wait_terminal(&token, &id).await;
    let link = done["recordingDownloadUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("a simulated call has a recording: {done}"));
    let signed = link.split_once("/v1/recordings/").unwrap().1;
    let mut downloads = Vec::new();
    for node in [&first, &second] {
        let audio = node
            .client
            .get(node.url(&format!("/v1/recordings/{signed}")))
            .send()
            .await
            .unwrap();
        assert_eq!(audio.status(), 200);
        downloads.push(audio.bytes().await.unwrap());
    }
    assert!(downloads[0].starts_with(b"RIFF"), "a WAV file");
    assert_eq!(downloads[0], downloads[1], "the same recording on both");
    assert_eq!(second.terminate(), Some(0));
    assert_eq!(first.terminate(), Some(0));
}

#[actix_web::test]
async fn the_manual_clock_is_one_for_every_node_and_survives_a_takeover() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    config
        .set("clock.mode", "manual")
        .set("clock.start", "2026-03-02T09:00:00Z");
    let (path, key) = on_a_shared_database(dir.path(), &mut config);
    let (first, second) = holder_and_standby(&path, &key).await;
    let advance = |api: &Api, seconds: i64| {
        let api = api.clone();
        async move {
            let body = json!({ "advanceSeconds": seconds });
            let moved = api.admin(Method::POST, "/admin/v1/clock", Some(body)).await;
            let (status, moved) = status_and_json(moved).await;
            assert_eq!(status, 200, "{moved}");
            moved["now"].as_str().unwrap().to_owned()
        }
    };

    // Moved through the standby, it is the holder's clock that moves.
    assert_eq!(
        advance(&second, 86_400).await,
        "2026-03-03T09:00:00.000000+00:00"
    );
    assert_eq!(
        advance(&first, 60).await,
        "2026-03-03T09:01:00.000000+00:00"
    );
    first.kill_hard();
    second.wait_serving(TAKEOVER_WAIT).await;
    // The node that took over goes on from where the clock was moved to, not from `clock.start`.
    assert_eq!(
        advance(&second, 60).await,
        "2026-03-03T09:02:00.000000+00:00"
    );
    assert_eq!(second.terminate(), Some(0));
}

#[actix_web::test]
async fn a_standby_takes_over_at_once_when_the_holder_stops_gracefully() {
    let nodes = Nodes::new().await;

    let (first, second) = holder_and_standby(&nodes.config, &nodes.key).await;
    let stopped = Instant::now();
    assert_eq!(first.terminate(), Some(0));
    second.wait_serving(TAKEOVER_WAIT).await;
    assert!(
        stopped.elapsed() < LEASE_TTL,
        "the lease was released, not left to expire: {:?}",
        stopped.elapsed()
    );
    assert_eq!(second.terminate(), Some(0));
}

#[actix_web::test]
async fn a_call_the_holder_took_and_never_answered_gets_a_500_that_says_to_retry() {
    let nodes = Nodes::new().await;
    // The holder's advertised address reads each call and hangs up, as a holder dying mid-call does.
    let (holder, standby, _holder_dir) = holder_advertising(&nodes, &hanging_up_server()).await;

    let answer = standby
        .client
        .post(standby.url("/v1/requests"))
        .json(&json!({ "schemaId": "vob-basic" }))
        .send()
        .await
        .unwrap();
    // The call may have run: nothing invites a blind retry, but the message says how to retry safely.
    assert_eq!(answer.headers().get("retry-after"), None);
    let (status, body) = status_and_json(answer).await;
    assert_eq!((status, &body["error"]), (500, &json!("INTERNAL_ERROR")));
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("retry") && message.contains("internalId"),
        "{message}"
    );
    assert_eq!(standby.terminate(), Some(0));
    assert_eq!(holder.terminate(), Some(0));
}

/// A server in this process that reads the head of each call and closes the connection unanswered: its
/// URL.
fn hanging_up_server() -> String {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut connection in listener.incoming().flatten() {
            let _ = connection.read(&mut [0; 4096]);
        }
    });
    url
}

#[actix_web::test]
async fn a_node_whose_lease_another_took_stops_at_once() {
    let nodes = Nodes::new().await;
    let node = nodes.node();
    let mut server = node.start();
    server.wait_ready().await;

    let url = nodes.database_url();
    // As a standby takes an expired lease.
    let moved = admin_query(
        Some(&url),
        "UPDATE switchboard_lease SET holder = 'elsewhere' RETURNING holder",
        &[],
    );
    assert_eq!(moved.len(), 1);
    let exited = wait_exit(&mut server, Duration::from_secs(5));
    assert_eq!(exited, Some(1), "the node stops when its lease is gone");
}

/// Sends `request` as written, from the local address `from`, to the server at `address`; answers what
/// came back (reqwest would percent-encode what a raw client may send).
async fn raw_http(address: &str, from: &str, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let to = address.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

pub(crate) fn wait_exit(server: &mut BinaryServer, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the node did not stop within {limit:?}");
}
