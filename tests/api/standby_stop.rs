//! A node asked to stop lets the calls it is forwarding finish, whatever it is at that moment: a standby,
//! or a standby that took the lease over while a forward to the previous holder was still under way. The
//! holder's advertised address is a server in this process that holds each forwarded call until the test
//! releases it, so a forward is known to be in flight, and the stop known to be under way, before the
//! answer comes.

use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_storage::LEASE_TTL;
use tokio::sync::{mpsc, watch};

use crate::helpers::{admin_query, status_and_json, Api, BinaryServer};
use crate::several_nodes::{wait_exit, Nodes, TAKEOVER_WAIT};

#[actix_web::test]
async fn a_stopped_standby_lets_a_forward_in_flight_finish() {
    a_standby_stopped_by(Stop::Term).await
}

/// SIGINT stops as gracefully as SIGTERM (operator contract §1).
#[actix_web::test]
async fn a_standby_stopped_by_sigint_lets_a_forward_in_flight_finish() {
    a_standby_stopped_by(Stop::Int).await
}

async fn a_standby_stopped_by(stop: Stop) {
    let nodes = Nodes::new().await;
    let mut held = HeldServer::start();
    let (holder, mut standby, _holder_dir) = holder_advertising(&nodes, &held.url).await;

    // A write: the standby answers reads itself.
    let call = actix_web::rt::spawn(standby.client.post(standby.url("/v1/requests")).send());
    held.arrival().await;
    stop.send(&standby);
    wait_refused(&standby).await;
    held.release();
    let answer = call
        .await
        .unwrap()
        .expect("the forward in flight was answered");
    assert_eq!(
        status_and_json(answer).await,
        (200, json!({ "held": true }))
    );
    assert_eq!(wait_exit(&mut standby, Duration::from_secs(10)), Some(0));
    assert_eq!(holder.terminate(), Some(0));
}

#[actix_web::test]
async fn a_standby_that_took_over_lets_a_forward_from_before_finish_when_stopped() {
    a_node_that_took_over_stopped_by(Stop::Term).await
}

/// The full server a standby became leaves SIGINT to the same graceful stop.
#[actix_web::test]
async fn a_standby_that_took_over_lets_a_forward_from_before_finish_when_sigint_stops_it() {
    a_node_that_took_over_stopped_by(Stop::Int).await
}

async fn a_node_that_took_over_stopped_by(stop: Stop) {
    let nodes = Nodes::new().await;
    let mut held = HeldServer::start();
    let (holder, mut standby, _holder_dir) = holder_advertising(&nodes, &held.url).await;
    let call = actix_web::rt::spawn(standby.client.post(standby.url("/v1/requests")).send());
    held.arrival().await;

    // The holder stops and the standby takes over, its forward held past the handover's grace.
    let stopped = tokio::task::spawn_blocking(move || holder.terminate());
    assert_eq!(stopped.await.unwrap(), Some(0));
    standby.wait_serving(TAKEOVER_WAIT).await;
    stop.send(&standby);
    wait_refused(&standby).await;
    // Its requests are over, its store closed and the lease given up: the forward is all that keeps it.
    wait_lease_free(&nodes).await;
    let exited = Instant::now() + Duration::from_secs(1);
    while Instant::now() < exited {
        let running = standby.child.try_wait().unwrap().is_none();
        assert!(running, "the node exited with a forward in flight");
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    held.release();
    let answer = call
        .await
        .unwrap()
        .expect("the forward from before the handover was answered");
    assert_eq!(
        status_and_json(answer).await,
        (200, json!({ "held": true }))
    );
    assert_eq!(wait_exit(&mut standby, Duration::from_secs(10)), Some(0));
}

/// A holder that tells its standbys to reach it at `address`, and a standby: both serving, and the
/// holder's data directory.
/// The signal a test stops a node with: both must stop it gracefully.
#[derive(Clone, Copy)]
enum Stop {
    Term,
    Int,
}

impl Stop {
    fn send(self, node: &BinaryServer) {
        match self {
            Stop::Term => node.ask_to_stop(),
            Stop::Int => node.interrupt(),
        }
    }
}

pub(crate) async fn holder_advertising(
    nodes: &Nodes,
    address: &str,
) -> (BinaryServer, BinaryServer, tempfile::TempDir) {
    let holder_dir = tempfile::tempdir().unwrap();
    let holder = BinaryServer::start_with_env(
        &nodes.config,
        holder_dir.path(),
        &[
            ("SWITCHBOARD_MASTER_KEY", &nodes.key),
            ("SWITCHBOARD_NODE_URL", address),
        ],
    );
    holder.wait_ready().await;
    let standby = nodes.node().start();
    crate::node_start::wait_routed(&standby).await;
    (holder, standby, holder_dir)
}

/// Waits until `node` refuses new connections: its stop is under way, and a connection made now would
/// never be served. A stopping node closes its socket rather than leave such connections in a backlog
/// nobody accepts from, to be reset at its exit with their request perhaps sent. The tries are spaced so
/// that they cannot fill a backlog (128 connections), where a connection would hang rather than be taken.
async fn wait_refused(node: &Api) {
    let address = node.address.trim_start_matches("http://").to_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let connect = tokio::net::TcpStream::connect(&address);
        match tokio::time::timeout(Duration::from_secs(1), connect).await {
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => return,
            _ => assert!(
                Instant::now() < deadline,
                "the stopping node still takes connections it will not serve"
            ),
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until no node holds the lease of `nodes`' database.
async fn wait_lease_free(nodes: &Nodes) {
    let url = nodes.database_url();
    let deadline = Instant::now() + LEASE_TTL;
    loop {
        let held = admin_query(Some(&url), "SELECT holder FROM switchboard_lease", &[]);
        if held.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "the lease was not given up");
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A server in this process standing for the holder at its advertised address: its health check answers
/// at once; every other call is told on `arrivals` and answered `{"held":true}` once released.
struct HeldServer {
    url: String,
    arrivals: mpsc::UnboundedReceiver<String>,
    release: watch::Sender<bool>,
}

impl HeldServer {
    fn start() -> HeldServer {
        use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
        let (arrived, arrivals) = mpsc::unbounded_channel();
        let (release, released) = watch::channel(false);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = HttpServer::new(move || {
            let (arrived, released) = (arrived.clone(), released.clone());
            App::new()
                .route("/healthz", web::get().to(HttpResponse::Ok))
                .default_service(web::to(move |req: HttpRequest| {
                    let _ = arrived.send(format!("{} {}", req.method(), req.path()));
                    let mut released = released.clone();
                    async move {
                        let _ = released.wait_for(|released| *released).await;
                        HttpResponse::Ok().json(json!({ "held": true }))
                    }
                }))
        })
        .workers(1)
        .disable_signals()
        .listen(listener)
        .unwrap()
        .run();
        actix_web::rt::spawn(server);
        HeldServer {
            url,
            arrivals,
            release,
        }
    }

    /// Waits for the forwarded call to arrive.
    async fn arrival(&mut self) {
        let arrived = self.arrivals.recv().await.unwrap();
        assert_eq!(arrived, "POST /v1/requests");
    }

    /// Answers the calls held, and those to come at once.
    fn release(&self) {
        self.release.send_replace(true);
    }
}
