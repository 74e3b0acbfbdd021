//! Several binaries on one PostgreSQL database (`[storage] kind = "postgres"`): one runs requests while
//! the others stand by, and when it dies a standby takes its requests over the way a restart resumes them:
//! every request ends, each live platform call is re-attached (one create per attempt), nothing is booked
//! or sent twice, and a token one node issued works on the other. A node that loses the lease stops.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use switchboard_storage::{fresh_postgres_database, LEASE_TTL};

use crate::fakes::retell::{FakeRetell, Scenario};
use crate::helpers::{
    admin_query, binary, create_vob, run_to_exit, write_config, BinaryServer, TestConfig,
};
use crate::receiver::Receiver;
use crate::voice_retell::retell_config;

/// A node taking over resumes its calls first: a longer wait than the default.
const TAKEOVER_WAIT: Duration = Duration::from_secs(30);

/// A master key both nodes are given, as `keys generate` writes it.
fn shared_master_key(dir: &Path) -> String {
    let path = dir.join("master.key");
    let mut command = Command::new(binary());
    command.args(["keys", "generate", "--out"]).arg(&path);
    assert!(run_to_exit(command).status.success());
    std::fs::read_to_string(path).unwrap().trim().to_owned()
}

/// One node: its own data directory, the shared database and key.
struct Node {
    config: PathBuf,
    data_dir: tempfile::TempDir,
    key: String,
}

impl Node {
    fn new(config: &Path, key: &str) -> Node {
        Node {
            config: config.to_owned(),
            data_dir: tempfile::tempdir().unwrap(),
            key: key.to_owned(),
        }
    }

    /// Starts the binary; answers once it serves, which for a standby is once it took over.
    fn start(&self) -> BinaryServer {
        BinaryServer::start_with_env(
            &self.config,
            self.data_dir.path(),
            &[("SWITCHBOARD_MASTER_KEY", &self.key)],
        )
    }

    /// Starts the binary on a thread of its own, for a node that stands by first.
    fn start_standby(self) -> std::thread::JoinHandle<(BinaryServer, Node)> {
        std::thread::spawn(move || (self.start(), self))
    }
}

/// The standby once it took over and is ready (with its node, whose data directory it uses).
async fn took_over(standby: std::thread::JoinHandle<(BinaryServer, Node)>) -> (BinaryServer, Node) {
    let (server, node) = actix_web::rt::task::spawn_blocking(move || standby.join().unwrap())
        .await
        .unwrap();
    server.wait_ready().await;
    (server, node)
}

/// What the nodes of a test share: the Retell fake, the webhook receiver, the configuration (a fresh
/// database) and the master key.
struct Nodes {
    fake: FakeRetell,
    receiver: Receiver,
    config: PathBuf,
    key: String,
    _dir: tempfile::TempDir,
}

impl Nodes {
    async fn new() -> Nodes {
        let fake = FakeRetell::start().await;
        let receiver = Receiver::start().await;
        let dir = tempfile::tempdir().unwrap();
        Nodes {
            config: config(dir.path(), &fake, &receiver),
            key: shared_master_key(dir.path()),
            fake,
            receiver,
            _dir: dir,
        }
    }

    fn node(&self) -> Node {
        Node::new(&self.config, &self.key)
    }
}

fn config(dir: &Path, fake: &FakeRetell, receiver: &Receiver) -> PathBuf {
    let mut config = TestConfig::default();
    retell_config(&mut config, fake);
    config
        .set("storage.kind", "postgres")
        .set("storage.url", fresh_postgres_database())
        .set("webhooks.allow_private_targets", true);
    config
        .demo_account()
        .insert("webhook_url".into(), receiver.url("/hook").into());
    write_config(dir, &config)
}

#[actix_web::test]
async fn a_standby_takes_over_after_kill_9_and_finishes_the_live_calls_without_placing_any_again() {
    let nodes = Nodes::new().await;
    let (fake, receiver) = (&nodes.fake, &nodes.receiver);
    fake.hold_calls(true);
    fake.force(&[Scenario::Answered, Scenario::Answered, Scenario::Answered]);

    let first = nodes.node().start();
    first.wait_ready().await;
    let standby = nodes.node().start_standby();
    fake.deliver_to(&first.url(""));
    let token = first.live_token().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(create_vob(&first, &token).await);
    }
    let created = fake.wait_creates(3).await;
    for call in &created {
        crate::voice_retell::wait_platform_call(fake, call).await;
    }
    // The platform's ids are stored before anything waits on them; give the commits a moment, then crash.
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !standby.is_finished(),
        "the standby serves nothing while the first node holds the lease"
    );
    let killed = Instant::now();
    first.kill_hard();

    let (second, _node) = took_over(standby).await;
    let takeover = killed.elapsed();
    assert!(
        takeover < LEASE_TTL + Duration::from_secs(5),
        "took over in {takeover:?}"
    );
    eprintln!("several_nodes: took over {takeover:?} after kill -9");
    fake.deliver_to(&second.url(""));
    fake.release_calls();
    // The first node's token: both nodes share the token secret in the database.
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
async fn a_standby_takes_over_at_once_when_the_holder_stops_gracefully() {
    let nodes = Nodes::new().await;

    let first = nodes.node().start();
    first.wait_ready().await;
    let standby = nodes.node().start_standby();
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    let stopped = Instant::now();
    assert_eq!(first.terminate(), Some(0));
    let (second, _node) = took_over(standby).await;
    assert!(
        stopped.elapsed() < LEASE_TTL,
        "the lease was released, not left to expire: {:?}",
        stopped.elapsed()
    );
    assert_eq!(second.terminate(), Some(0));
}

#[actix_web::test]
async fn a_node_whose_lease_another_took_stops_at_once() {
    let nodes = Nodes::new().await;
    let node = nodes.node();
    let mut server = node.start();
    server.wait_ready().await;

    let url: String =
        toml::from_str::<toml::Table>(&std::fs::read_to_string(&nodes.config).unwrap()).unwrap()
            ["storage"]["url"]
            .as_str()
            .unwrap()
            .to_owned();
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

fn wait_exit(server: &mut BinaryServer, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the node did not stop within {limit:?}");
}
