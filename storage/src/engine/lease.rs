//! The orchestrator lease of a PostgreSQL database: one node at a time runs requests, webhooks and the
//! other singletons; the others stand by and take over when the holder stops renewing.
//!
//! The lease is a row, `switchboard_lease`, whose expiry is set and compared with the database's own clock,
//! so nodes' clocks never matter. The holder renews it every [`RENEW_EVERY`]; a holder that could not
//! renew for [`FENCE_AFTER`] stops itself ([`NodeLease::acquire`]'s `lost`), well before the row expires
//! after [`LEASE_TTL`] and a standby may take it, so two nodes never run requests at once.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::error::SqlState;

use crate::StorageError;

/// How long the lease lasts after its last renewal: the longest a standby waits after the holder died.
pub const LEASE_TTL: Duration = Duration::from_secs(5);
/// How often the holder renews, and how often a standby asks.
pub const RENEW_EVERY: Duration = Duration::from_secs(1);
/// How long the holder goes on without a renewal before it stops itself: the lease it last renewed is
/// then still valid for two seconds, the time the process has to end.
pub const FENCE_AFTER: Duration = Duration::from_secs(3);

const TAKE: &str = "INSERT INTO switchboard_lease (name, holder, node_url, expires_at) \
     VALUES ('orchestrator', $1, $2, now() + make_interval(secs => $3)) \
     ON CONFLICT (name) DO UPDATE \
     SET holder = EXCLUDED.holder, node_url = EXCLUDED.node_url, expires_at = EXCLUDED.expires_at \
     WHERE switchboard_lease.holder = EXCLUDED.holder OR switchboard_lease.expires_at < now() \
     RETURNING holder";
const HOLDER: &str = "SELECT holder, node_url FROM switchboard_lease \
     WHERE name = 'orchestrator' AND expires_at >= now()";
/// Takes the lease from `$4`, a previous process of this node's that is gone, without waiting for it
/// to expire: only while `$4` still holds it, so a takeover by another node in between wins.
const RECLAIM: &str = "UPDATE switchboard_lease \
     SET holder = $1, node_url = $2, expires_at = now() + make_interval(secs => $3) \
     WHERE name = 'orchestrator' AND holder = $4 RETURNING holder";
const RELEASE: &str = "DELETE FROM switchboard_lease WHERE name = 'orchestrator' AND holder = $1";

/// A node as the lease names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHolder {
    /// Unique per process (`host:pid:random`).
    pub name: String,
    /// Where the other nodes reach it, to forward what their clients send; `None` when it has no address
    /// they could use.
    pub node_url: Option<String>,
}

/// The lease, held by this process until it is released or the process ends.
pub struct NodeLease {
    holder: String,
    stop: Arc<AtomicBool>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

impl NodeLease {
    /// Waits until this node (`me`) holds the lease, telling `watch` after every try which node holds it
    /// meanwhile (`None`: none does); then renews it on a thread of its own, which calls `lost` if the
    /// lease cannot be kept. A caller that stops waiting (drops the future) leaves the lease alone.
    /// A holder that `gone` says is a previous process of this node's, which ended without giving the
    /// lease up, is taken over at once rather than after [`LEASE_TTL`].
    pub async fn acquire(
        url: &str,
        ca_file: Option<&Path>,
        me: LeaseHolder,
        gone: impl Fn(&LeaseHolder) -> bool + Send + 'static,
        watch: impl FnMut(Option<&LeaseHolder>) + Send + 'static,
        lost: impl FnOnce(&str) + Send + 'static,
    ) -> Result<NodeLease, StorageError> {
        let holder = me.name.clone();
        let (acquired, taken) = tokio::sync::oneshot::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let tls = super::connect::tls(ca_file)?;
        let (thread_url, thread_stop) = (url.to_owned(), Arc::clone(&stop));
        let renewer = std::thread::Builder::new()
            .name("lease".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the lease's runtime");
                runtime.block_on(hold(
                    thread_url,
                    tls,
                    me,
                    thread_stop,
                    acquired,
                    (gone, watch),
                    lost,
                ));
            })
            .map_err(|e| StorageError::Database(format!("cannot start the lease thread: {e}")))?;
        // A caller that stops waiting (drops this future) must not leave the thread holding the lease.
        let abandoned = StopOnDrop(Some(Arc::clone(&stop)));
        let taken = taken.await;
        abandoned.disarm();
        match taken {
            Ok(Ok(())) => Ok(NodeLease {
                holder,
                stop,
                renewer: Some(renewer),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StorageError::Database("the lease thread ended".into())),
        }
    }

    /// This node's name in the lease.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Gives the lease up at once, so a standby need not wait for it to expire.
    pub fn release(mut self) {
        self.give_up();
    }

    /// Stops renewing, and waits for the lease thread to delete the row on its own connection.
    fn give_up(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
    }
}

/// Tells the lease thread to stop (giving the lease up if it took it) unless disarmed.
struct StopOnDrop(Option<Arc<AtomicBool>>);

impl StopOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(stop) = &self.0 {
            stop.store(true, Ordering::SeqCst);
        }
    }
}

impl Drop for NodeLease {
    /// Gives the lease up, as [`NodeLease::release`] does: a node whose start failed after it took the
    /// lease lets a standby (or its own next start) have it at once.
    fn drop(&mut self) {
        self.give_up();
    }
}

/// Renews the lease on `client`, connected again first when the database restarted or failed over: `true`
/// when this node still holds it.
async fn renew(
    client: &mut tokio_postgres::Client,
    url: &str,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
    holder: &str,
    node_url: &Option<String>,
    ttl: f64,
) -> Result<bool, String> {
    if client.is_closed() {
        *client = lease_connection(url, tls)
            .await
            .map_err(|e| super::postgres::describe(&e))?;
    }
    client
        .query_opt(TAKE, &[&holder, node_url, &ttl])
        .await
        .map(|row| row.is_some())
        .map_err(|e| super::postgres::describe(&e))
}

/// A connection for the lease's statements, SERIALIZABLE as the engine's transactions are: a takeover then
/// conflicts with a fenced transaction of the old holder that read the lease row, so the database orders
/// that transaction before the takeover or fails it (PostgreSQL checks serializability only between
/// SERIALIZABLE transactions).
async fn lease_connection(
    url: &str,
    tls: &tokio_postgres_rustls::MakeRustlsConnect,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let client = super::connect::connect(url, tls.clone()).await?;
    client
        .batch_execute("SET default_transaction_isolation TO serializable")
        .await?;
    Ok(client)
}

/// The lease thread: takes the lease (waiting as long as another node holds it, unless `gone` says the
/// holder is this node's previous process; `watch` is told who holds it meanwhile), answers `acquired`,
/// then renews until stopped or lost.
async fn hold(
    url: String,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    me: LeaseHolder,
    stop: Arc<AtomicBool>,
    acquired: tokio::sync::oneshot::Sender<Result<(), StorageError>>,
    (gone, mut watch): (
        impl Fn(&LeaseHolder) -> bool,
        impl FnMut(Option<&LeaseHolder>),
    ),
    lost: impl FnOnce(&str),
) {
    let LeaseHolder {
        name: holder,
        node_url,
    } = me;
    let mut client = match lease_connection(&url, &tls).await {
        Ok(client) => client,
        Err(e) => {
            let _ = acquired.send(Err(StorageError::Database(format!(
                "cannot connect to the database: {}",
                super::postgres::describe(&e)
            ))));
            return;
        }
    };
    let ttl = LEASE_TTL.as_secs_f64();
    let taken_at = loop {
        if acquired.is_closed() {
            return;
        }
        // The lease runs from the database's clock when it took the statement, so from no later than this.
        let asked = Instant::now();
        match client.query_opt(TAKE, &[&holder, &node_url, &ttl]).await {
            Ok(Some(_)) => break asked,
            Ok(None) => {
                let current = client
                    .query_opt(HOLDER, &[])
                    .await
                    .ok()
                    .flatten()
                    .map(|row| LeaseHolder {
                        name: row.get(0),
                        node_url: row.get(1),
                    });
                if let Some(previous) = current.as_ref().filter(|holder| gone(holder)) {
                    let reclaimed = client
                        .query_opt(RECLAIM, &[&holder, &node_url, &ttl, &previous.name])
                        .await;
                    if let Ok(Some(_)) = reclaimed {
                        tracing::info!(
                            previous = previous.name,
                            "took the orchestrator lease back from this node's previous process, which \
                             ended without giving it up"
                        );
                        break asked;
                    }
                }
                watch(current.as_ref());
            }
            // Another node's TAKE at the same moment: the next try tells who won.
            Err(e) if super::postgres::is_conflict(&e) => {}
            Err(e) => {
                // No lease table, or one without this release's columns: the schema is older.
                let outdated = [SqlState::UNDEFINED_TABLE, SqlState::UNDEFINED_COLUMN];
                let refusal = if e.code().is_some_and(|code| outdated.contains(code)) {
                    let found = client
                        .query_opt("SELECT max(version) FROM switchboard_schema", &[])
                        .await
                        .ok()
                        .flatten()
                        .and_then(|row| row.get::<_, Option<i32>>(0));
                    super::postgres::outdated(found)
                } else {
                    StorageError::Database(format!(
                        "cannot take the orchestrator lease: {}",
                        super::postgres::describe(&e)
                    ))
                };
                let _ = acquired.send(Err(refusal));
                return;
            }
        }
        tokio::time::sleep(RENEW_EVERY).await;
    };
    if acquired.send(Ok(())).is_err() {
        // Nobody waits for it any more (the node was stopped while standing by).
        let _ = client.execute(RELEASE, &[&holder]).await;
        return;
    }
    let mut renewed = taken_at;
    while !stop.load(Ordering::SeqCst) {
        tokio::time::sleep(RENEW_EVERY).await;
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let asked = Instant::now();
        // Whatever a renewal waits on, a new connection included, ends at the fence: past it, the lease
        // last renewed has only the time left that the process needs to stop.
        let fence = renewed + FENCE_AFTER;
        let outcome = tokio::time::timeout_at(
            fence.into(),
            renew(&mut client, &url, &tls, &holder, &node_url, ttl),
        )
        .await;
        match outcome {
            Ok(Ok(true)) => renewed = asked,
            Ok(Ok(false)) => {
                lost("another node holds the orchestrator lease now");
                return;
            }
            // Cut at the fence, or failed with no time left for the next try.
            Err(_) => {
                lost("the orchestrator lease could not be renewed in time");
                return;
            }
            Ok(Err(_)) if Instant::now() + RENEW_EVERY >= fence => {
                lost("the orchestrator lease could not be renewed in time");
                return;
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the orchestrator lease was not renewed; retrying")
            }
        }
    }
    // Stopped: given up at once, so a standby need not wait for it to expire.
    if client.execute(RELEASE, &[&holder]).await.is_err() {
        tracing::warn!(
            "the orchestrator lease could not be released: a standby takes over when it expires"
        );
    }
}
