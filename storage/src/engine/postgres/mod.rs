//! The PostgreSQL engine: every tree is a set of rows of one table, `switchboard_kv (tree, key, value)`,
//! keys compared as bytes (PostgreSQL orders `bytea` the way sled orders keys).
//!
//! Transactions are SERIALIZABLE, and a serialization failure or a deadlock runs the body again from
//! scratch: sled's optimistic transactions retry the same way, so every invariant a sled transaction keeps
//! (a request with its indexes, its idempotency key and its booking; a terminal record with its webhook)
//! holds here too, also between several processes on one database. A commit is durable when it returns:
//! PostgreSQL's WAL and its own group commit stand where sled's flusher does.
//!
//! The store's operations are synchronous, and many run on an actix worker, inside a tokio runtime that a
//! blocking client could not nest in. So the connections of tokio-postgres run on a runtime of their own
//! (one thread, `postgres-io`), and a caller blocks on the client's future, which needs no runtime: it only
//! exchanges messages with its connection's task.

mod accounts;
mod audit_append;
pub(crate) mod audit_events;
pub(crate) mod binding;
mod holder_cache;
pub(crate) mod native;
#[cfg(test)]
mod native_tests;
mod operators;
mod payers;
mod range;
pub(crate) mod requests_table;
mod schema;
mod schemas;
mod settings;
#[cfg(test)]
mod speed_tests;
pub(crate) mod tables;
mod transaction;
mod tree;
mod webhook_attempts;

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use sled::transaction::{ConflictableTransactionError, TransactionError};
use tokio_postgres::error::SqlState;

use tokio_postgres::{Client, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

pub(crate) use range::PgIter;
use schema::check_schema;
pub(crate) use schema::outdated;
pub use schema::{migrate, SCHEMA_VERSION};
pub(crate) use tree::{half_open, PgTree, PgTxTree};

use super::TxTree;
use crate::StorageError;

/// Connections kept for transactions, beside the one shared by single statements. Transactions come from
/// the flusher's groups and the admin's changes, a few at a time.
const TRANSACTION_CONNECTIONS: usize = 8;

/// An open PostgreSQL engine; cheap to clone.
#[derive(Clone)]
pub(crate) struct Pg(Arc<Inner>);

struct Inner {
    /// Where to connect again when a connection was lost (the database restarted or failed over, a
    /// proxy closed it).
    url: String,
    tls: MakeRustlsConnect,
    /// Single statements, pipelined by the client from any number of threads.
    shared: Mutex<Arc<Conn>>,
    /// Connections free for a transaction.
    pool: Mutex<Vec<Arc<Conn>>>,
    returned: Condvar,
    /// The same, for a task that awaits a connection ([`Pg::checkout_async`]).
    returned_async: tokio::sync::Notify,
    /// The name this process holds the orchestrator lease under, once it does: from then on every
    /// transaction commits only while the lease is still this process's ([`Pg::fence_to`]).
    fence: OnceLock<String>,
    /// What the lease holder knows of the trees read most, kept by its commits.
    cache: holder_cache::HolderCache,
    /// Round trips of transactions so far.
    exchanges: std::sync::atomic::AtomicU64,
    /// Drives every connection's task; declared last, so it is dropped after the clients.
    _runtime: IoRuntime,
}

/// The connections' runtime, shut down without waiting when dropped: the store may be closed, or fail to
/// open, on a thread of another runtime, where a plain drop of a runtime panics.
struct IoRuntime(Option<tokio::runtime::Runtime>);

impl Drop for IoRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// A connection and its prepared statements.
pub(crate) struct Conn {
    client: Client,
    get: Statement,
    get_many: Statement,
    upsert: Statement,
    delete: Statement,
    upsert_many: Statement,
    forward: Statement,
    forward_open: Statement,
    backward: Statement,
    backward_open: Statement,
    fence: Statement,
    fence_guard: Statement,
    guess_guard: Statement,
    audit_insert: Statement,
    audit_after: Statement,
    audit_at: Statement,
    audit_last: Statement,
    requests_upsert: Statement,
    requests_delete: Statement,
}

/// A failure of the database, in the engines' shared vocabulary.
fn engine_error(e: tokio_postgres::Error) -> sled::Error {
    sled::Error::Io(std::io::Error::other(format!(
        "postgresql: {}",
        describe(&e)
    )))
}

/// What went wrong: the server's own message when it sent one (tokio-postgres shows only "db error"),
/// else the client's with every cause under it ("error connecting to server" alone does not say that the
/// connection was refused, or which certificate check failed).
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Whether `e` means the connection is gone: closed, or ended by the server (an administrator's
/// `pg_terminate_backend`, a shutdown), whose notice may answer the next statement before the client has
/// seen the connection close.
pub(crate) fn is_lost(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || matches!(
            e.code(),
            Some(&SqlState::ADMIN_SHUTDOWN) | Some(&SqlState::CRASH_SHUTDOWN)
        )
}

/// Whether `e` means "run the transaction again": SERIALIZABLE found a conflict, or a deadlock was broken.
pub(crate) fn is_conflict(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(&SqlState::T_R_SERIALIZATION_FAILURE) | Some(&SqlState::T_R_DEADLOCK_DETECTED)
    )
}

fn tx_error(e: tokio_postgres::Error) -> sled::transaction::UnabortableTransactionError {
    if is_conflict(&e) {
        sled::transaction::UnabortableTransactionError::Conflict
    } else {
        sled::transaction::UnabortableTransactionError::Storage(engine_error(e))
    }
}

/// Blocks this thread until `future` is ready: the engine's synchronous paths (transactions, which the
/// flusher thread runs for grouped writes, and the writes outside them). The store's reads never come
/// here; they await. pollster, not `futures::executor::block_on`: a wait may run inside another (a
/// statement that must connect again), which futures' executor refuses with a panic. Nesting is safe:
/// what is waited on progresses on the I/O thread, never on the waiting one.
pub(crate) fn wait<F: Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

impl Pg {
    /// Connects to `url` and checks that its schema is the one this binary needs.
    pub(crate) fn open(url: &str, ca_file: Option<&Path>) -> Result<Pg, StorageError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("postgres-io")
            .enable_all()
            .build()
            .map_err(|e| StorageError::Database(format!("cannot start its I/O thread: {e}")))?;
        let runtime = IoRuntime(Some(runtime));
        let tls = super::connect::tls(ca_file)?;
        let client = connect_client(&runtime, url, &tls)?;
        check_schema(&client)?;
        let shared = prepare(client)?;
        let pool = (0..TRANSACTION_CONNECTIONS)
            .map(|_| connect(&runtime, url, &tls))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pg(Arc::new(Inner {
            url: url.to_owned(),
            tls,
            _runtime: runtime,
            shared: Mutex::new(shared),
            pool: Mutex::new(pool),
            returned: Condvar::new(),
            returned_async: tokio::sync::Notify::new(),
            fence: OnceLock::new(),
            cache: holder_cache::HolderCache::default(),
            exchanges: Default::default(),
        })))
    }

    /// Fences this engine's writes with the orchestrator lease `holder` holds: each transaction checks, in
    /// the round trip of its `BEGIN`, that the lease is still `holder`'s, and commits nothing otherwise;
    /// a write of one key runs as a transaction of its own from then on. A
    /// holder that stalled past its lease (a paused VM, a process stopped and continued) and wakes after
    /// a standby took over cannot write beside the new holder; and as the check reads the lease row inside
    /// each SERIALIZABLE transaction, a transaction that began before a takeover and commits after it is
    /// ordered before the takeover, or fails.
    ///
    /// From then on this process is the only writer, so reads of the trees it keeps are answered from
    /// what its commits wrote ([`holder_cache`]).
    pub(crate) fn fence_to(&self, holder: &str) {
        if self.0.fence.set(holder.to_owned()).is_ok() {
            self.0.cache.serve();
        }
    }

    pub(super) fn cache(&self) -> &holder_cache::HolderCache {
        &self.0.cache
    }

    fn fence(&self) -> Option<&str> {
        self.0.fence.get().map(String::as_str)
    }

    fn count_exchanges(&self, exchanges: u64) {
        self.0
            .exchanges
            .fetch_add(exchanges, std::sync::atomic::Ordering::Relaxed);
    }

    /// Round trips of every transaction so far: what the tests of the create path count.
    #[cfg(test)]
    pub(crate) fn transaction_exchanges(&self) -> u64 {
        self.0.exchanges.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether [`Pg::fence_to`] was called: a write outside a transaction would escape the fence.
    pub(crate) fn fenced(&self) -> bool {
        self.0.fence.get().is_some()
    }

    pub(crate) fn tree(&self, name: &str) -> PgTree {
        PgTree::new(self.clone(), name)
    }

    /// Runs `body` in a SERIALIZABLE transaction over the trees `names`, again from scratch after each
    /// conflict.
    pub(crate) fn transaction<T, E>(
        &self,
        names: &[&str],
        body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<E>>,
    ) -> Result<T, TransactionError<E>> {
        let conn = self.checkout();
        let result = transaction::run(&conn.conn, self, names, body);
        drop(conn);
        result
    }

    fn checkout(&self) -> Checkout<'_> {
        let mut pool = self.0.pool.lock().expect("postgres pool");
        loop {
            if let Some(conn) = pool.pop() {
                drop(pool);
                return Checkout::new(self.alive(conn), self);
            }
            pool = self.0.returned.wait(pool).expect("postgres pool");
        }
    }

    /// A connection for one transaction of the engine's own, awaited while all are taken.
    pub(super) async fn checkout_async(&self) -> Checkout<'_> {
        loop {
            let returned = self.0.returned_async.notified();
            let mut returned = std::pin::pin!(returned);
            // Registered before the pool is looked at, so a return in between is not missed.
            returned.as_mut().enable();
            if let Some(conn) = self.0.pool.lock().expect("postgres pool").pop() {
                return Checkout::new(self.alive(conn), self);
            }
            returned.await;
        }
    }

    /// The connection for single statements, connected again if it was lost.
    pub(super) fn shared(&self) -> Arc<Conn> {
        let mut shared = self.0.shared.lock().expect("postgres shared connection");
        if shared.client.is_closed() {
            *shared = self.alive(Arc::clone(&shared));
        }
        Arc::clone(&shared)
    }

    /// `conn`, or a new connection in its place when it was closed. A failed attempt keeps the closed one:
    /// its statements fail with the cause, and the next use tries again.
    fn alive(&self, conn: Arc<Conn>) -> Arc<Conn> {
        if !conn.client.is_closed() {
            return conn;
        }
        match connect(&self.0._runtime, &self.0.url, &self.0.tls) {
            Ok(fresh) => {
                tracing::warn!("a connection to PostgreSQL was lost and is connected again");
                fresh
            }
            Err(e) => {
                tracing::error!(error = %e, "a connection to PostgreSQL was lost and cannot be made again");
                conn
            }
        }
    }
}

/// A connection taken for one transaction, returned when dropped.
pub(super) struct Checkout<'a> {
    pub(super) conn: Arc<Conn>,
    pg: &'a Pg,
    /// Whether a transaction of the engine's own ([`native`]) is open on it: set before its BEGIN,
    /// cleared once its COMMIT or ROLLBACK answered. An async caller may be dropped in between (a client
    /// gone, an actor stopped), and the next taker must not begin inside what it left open.
    pub(super) open: std::sync::atomic::AtomicBool,
}

impl<'a> Checkout<'a> {
    fn new(conn: Arc<Conn>, pg: &'a Pg) -> Checkout<'a> {
        Checkout {
            conn,
            pg,
            open: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Drop for Checkout<'_> {
    fn drop(&mut self) {
        let conn = Arc::clone(&self.conn);
        if std::thread::panicking() {
            // Dropped in the middle of a transaction: the next taker must not begin inside it.
            let _ = wait(conn.client.batch_execute("ROLLBACK"));
        } else if self.open.load(std::sync::atomic::Ordering::Acquire) {
            // Rolled back on the connections' own runtime, and only then returned.
            let pg = self.pg.clone();
            if let Some(runtime) = self.pg.0._runtime.0.as_ref() {
                runtime.spawn(async move {
                    let _ = conn.client.batch_execute("ROLLBACK").await;
                    pg.give_back(conn);
                });
                return;
            }
        }
        self.pg.give_back(conn);
    }
}

impl Pg {
    /// Puts `conn` back in the pool and wakes one waiter of either kind.
    fn give_back(&self, conn: Arc<Conn>) {
        let inner = &self.0;
        inner.pool.lock().expect("postgres pool").push(conn);
        inner.returned.notify_one();
        inner.returned_async.notify_one();
    }
}

/// A connection ready for the engine's statements.
fn connect(
    runtime: &IoRuntime,
    url: &str,
    tls: &MakeRustlsConnect,
) -> Result<Arc<Conn>, StorageError> {
    prepare(connect_client(runtime, url, tls)?)
}

/// A client whose connection runs on `runtime`, its session set for the engine.
fn connect_client(
    runtime: &IoRuntime,
    url: &str,
    tls: &MakeRustlsConnect,
) -> Result<Client, StorageError> {
    let runtime = runtime.0.as_ref().expect("the runtime runs until dropped");
    let (url, tls) = (url.to_owned(), tls.clone());
    let target = url.clone();
    let unreachable = |e: String| super::connect::unreachable(&target, &e);
    let connected = runtime.spawn(async move { super::connect::connect(&url, tls).await });
    let client = wait(connected)
        .map_err(|e| unreachable(e.to_string()))?
        .map_err(|e| unreachable(describe(&e)))?;
    // Every statement of ours finds rows by the primary key (a key, or a range of one tree). A plan that
    // scans more (the planner's choice on a small table) would take SERIALIZABLE's predicate locks on all
    // it read, and concurrent creates would fail each other for nothing.
    wait(client.batch_execute(
        "SET default_transaction_isolation TO serializable; SET statement_timeout TO 0; \
         SET enable_seqscan TO off; SET enable_bitmapscan TO off",
    ))
    .map_err(|e| StorageError::Database(format!("cannot set up the session: {}", describe(&e))))?;
    Ok(client)
}

/// `client` with the engine's statements prepared.
fn prepare(client: Client) -> Result<Arc<Conn>, StorageError> {
    let failed = |e: tokio_postgres::Error| {
        StorageError::Database(format!("cannot prepare a statement: {}", describe(&e)))
    };
    let prepare = |sql: &str| wait(client.prepare(sql)).map_err(failed);
    let range = |order: &str, bounded: bool| {
        let upper = if bounded { "AND key < $3" } else { "" };
        let limit = if bounded { "$4" } else { "$3" };
        format!(
            "SELECT key, value FROM switchboard_kv WHERE tree = $1 AND key >= $2 {upper} \
             ORDER BY key {order} LIMIT {limit}"
        )
    };
    Ok(Arc::new(Conn {
        get: prepare("SELECT value FROM switchboard_kv WHERE tree = $1 AND key = $2")?,
        // Each key a lookup of its own by the primary key, the subquery run once per key: a join over
        // the array could be planned as a scan of a whole tree, which SERIALIZABLE would lock whole.
        get_many: prepare(
            "SELECT n, (SELECT value FROM switchboard_kv kv WHERE kv.tree = u.tree AND kv.key = u.key) \
             FROM unnest($1::text[], $2::bytea[]) WITH ORDINALITY AS u(tree, key, n)",
        )?,
        upsert: prepare(
            "WITH old AS (SELECT value FROM switchboard_kv WHERE tree = $1 AND key = $2), \
             new AS (INSERT INTO switchboard_kv (tree, key, value) VALUES ($1, $2, $3) \
             ON CONFLICT (tree, key) DO UPDATE SET value = EXCLUDED.value) \
             SELECT value FROM old",
        )?,
        delete: prepare("DELETE FROM switchboard_kv WHERE tree = $1 AND key = $2 RETURNING value")?,
        upsert_many: prepare(
            "INSERT INTO switchboard_kv (tree, key, value) \
             SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[]) \
             ON CONFLICT (tree, key) DO UPDATE SET value = EXCLUDED.value",
        )?,
        forward: prepare(&range("ASC", true))?,
        forward_open: prepare(&range("ASC", false))?,
        backward: prepare(&range("DESC", true))?,
        backward_open: prepare(&range("DESC", false))?,
        fence: prepare(
            "SELECT 1 FROM switchboard_lease \
             WHERE name = 'orchestrator' AND holder = $1 AND expires_at >= now()",
        )?,
        // The lease check of a transaction whose COMMIT leaves in the same round trip: an error (a
        // division by zero) rather than no row, so the transaction fails and the COMMIT commits nothing.
        fence_guard: prepare(
            "SELECT 1 / count(*)::int FROM switchboard_lease \
             WHERE name = 'orchestrator' AND holder = $1 AND expires_at >= now()",
        )?,
        // The check of the values a transaction guessed, in its own snapshot (so SERIALIZABLE tracks
        // these reads as any other), sent before its writes: an error when one differs.
        guess_guard: prepare(
            "SELECT 1 / bool_and(u.value IS NOT DISTINCT FROM \
                 (SELECT value FROM switchboard_kv kv WHERE kv.tree = u.tree AND kv.key = u.key))::int \
             FROM unnest($1::text[], $2::bytea[], $3::bytea[]) AS u(tree, key, value)",
        )?,
        audit_insert: prepare(audit_events::INSERT)?,
        audit_after: prepare(audit_events::AFTER)?,
        audit_at: prepare(audit_events::AT)?,
        audit_last: prepare(audit_events::LAST)?,
        requests_upsert: prepare(requests_table::UPSERT)?,
        requests_delete: prepare(requests_table::DELETE)?,
        client,
    }))
}
