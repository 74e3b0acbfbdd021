//! A node that holds the orchestrator lease and is cut off from the database stops itself before the lease
//! expires, so a standby that takes the expired lease never runs requests beside it. The cut here is the
//! hard one: the node's connections close, and a new connection is accepted but never answered (a failover
//! to an address that swallows packets), where a renewal waiting on the new connection would wait forever.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use switchboard_storage::{fresh_postgres_database, LEASE_TTL};

use crate::helpers::{write_config, BinaryServer, TestConfig};
use crate::postgres::generated_key;

/// A TCP relay to the test database that can be cut: then its connections close and the new ones it
/// accepts hang unanswered.
struct Relay {
    address: SocketAddr,
    cut: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    fn to(upstream: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let (relay_cut, relay_streams) = (Arc::clone(&cut), Arc::clone(&streams));
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let mut streams = relay_streams.lock().unwrap();
                if relay_cut.load(Ordering::SeqCst) {
                    // Held open, never read: the far side of a black hole.
                    streams.push(client);
                    continue;
                }
                let server = TcpStream::connect(upstream).unwrap();
                // As the client and the server do: pipelined statements must not wait on Nagle.
                for stream in [&client, &server] {
                    stream.set_nodelay(true).unwrap();
                }
                streams.push(client.try_clone().unwrap());
                streams.push(server.try_clone().unwrap());
                pump(client.try_clone().unwrap(), server.try_clone().unwrap());
                pump(server, client);
            }
        });
        Relay {
            address,
            cut,
            streams,
        }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for stream in self.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// Copies `from` into `to` on a thread of its own until either side ends.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 16 * 1024];
        while let Ok(read @ 1..) = from.read(&mut buffer) {
            if to.write_all(&buffer[..read]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

/// `url` with its host and port replaced by `address`.
fn through(url: &str, address: SocketAddr) -> (String, SocketAddr) {
    let mut parsed = url::Url::parse(url).unwrap();
    let upstream = SocketAddr::new(
        parsed.host_str().unwrap().parse().unwrap(),
        parsed.port().unwrap(),
    );
    parsed.set_port(Some(address.port())).unwrap();
    (parsed.to_string(), upstream)
}

#[actix_web::test]
async fn a_holder_cut_off_from_the_database_stops_before_its_lease_expires() {
    let database = fresh_postgres_database();
    let upstream = through(&database, "127.0.0.1:1".parse().unwrap()).1;
    let relay = Relay::to(upstream);
    let (url, _) = through(&database, relay.address);
    let dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    config
        .set("storage.kind", "postgres")
        .set("storage.url", url);
    let config = write_config(dir.path(), &config);
    let data_dir = tempfile::tempdir().unwrap();
    let (_, key) = generated_key(dir.path(), "master.key");
    let (mut server, log) = BinaryServer::start_logged(
        &config,
        data_dir.path(),
        &[("SWITCHBOARD_MASTER_KEY", key.as_str())],
    );
    server.wait_ready().await;

    let cut_at = Instant::now();
    relay.cut();
    let limit = LEASE_TTL + Duration::from_secs(5);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            cut_at.elapsed() < limit,
            "the node still runs {limit:?} after it lost the database"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let stopped_after = cut_at.elapsed();
    assert_eq!(status.code(), Some(1));
    let log = log.join().unwrap();
    assert!(
        log.contains("the orchestrator lease could not be renewed in time"),
        "it stopped for its lease, not for another failure: {log}"
    );
    // The lease it last renewed, at most a second before the cut, lasts LEASE_TTL from then.
    assert!(
        stopped_after < LEASE_TTL - Duration::from_secs(1),
        "the node stopped {stopped_after:?} after the cut: a standby could have taken the lease before"
    );
}
