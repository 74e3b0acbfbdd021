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

use std::collections::VecDeque;
use std::future::Future;
use std::ops::Bound;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use sled::transaction::{ConflictableTransactionError, TransactionError};
use sled::CompareAndSwapError;
use std::path::Path;
use tokio_postgres::error::SqlState;

use tokio_postgres::{Client, Statement};

use super::{Bytes, TxResult, TxTree};
use crate::StorageError;

/// The schema this binary reads and writes; `switchboard migrate` brings a database up to it.
pub const SCHEMA_VERSION: i32 = 1;

/// The statements that create (or upgrade to) [`SCHEMA_VERSION`], each idempotent.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS switchboard_schema (version integer NOT NULL)",
    "CREATE TABLE IF NOT EXISTS switchboard_kv (
        tree text NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (tree, key))",
    "CREATE SEQUENCE IF NOT EXISTS switchboard_ids",
    "CREATE TABLE IF NOT EXISTS switchboard_lease (
        name text PRIMARY KEY,
        holder text NOT NULL,
        expires_at timestamptz NOT NULL)",
];

/// Connections kept for transactions, beside the one shared by single statements. Transactions come from
/// the flusher's groups and the admin's changes, a few at a time.
const TRANSACTION_CONNECTIONS: usize = 8;

/// Rows read by the first page of a range, doubled at each next page up to [`MAX_PAGE`]: a range read for
/// its first or last key reads a handful, a scan reads big pages.
const FIRST_PAGE: i64 = 16;
const MAX_PAGE: i64 = 1024;

/// An open PostgreSQL engine; cheap to clone.
#[derive(Clone)]
pub(crate) struct Pg(Arc<Inner>);

struct Inner {
    /// Single statements, pipelined by the client from any number of threads.
    shared: Arc<Conn>,
    /// Connections free for a transaction.
    pool: Mutex<Vec<Arc<Conn>>>,
    returned: Condvar,
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
    upsert: Statement,
    delete: Statement,
    forward: Statement,
    forward_open: Statement,
    backward: Statement,
    backward_open: Statement,
    next_id: Statement,
}

/// A failure of the database, in the engines' shared vocabulary.
fn engine_error(e: tokio_postgres::Error) -> sled::Error {
    sled::Error::Io(std::io::Error::other(format!(
        "postgresql: {}",
        describe(&e)
    )))
}

/// What went wrong: the server's own message when it sent one (tokio-postgres shows only "db error").
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// Whether `e` means "run the transaction again": SERIALIZABLE found a conflict, or a deadlock was broken.
fn is_conflict(e: &tokio_postgres::Error) -> bool {
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

fn wait<F: Future>(future: F) -> F::Output {
    futures::executor::block_on(future)
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
        let shared = connect(&runtime, url, ca_file)?;
        check_schema(&shared.client)?;
        let pool = (0..TRANSACTION_CONNECTIONS)
            .map(|_| connect(&runtime, url, ca_file))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pg(Arc::new(Inner {
            _runtime: runtime,
            shared,
            pool: Mutex::new(pool),
            returned: Condvar::new(),
        })))
    }

    pub(crate) fn tree(&self, name: &str) -> PgTree {
        PgTree {
            pg: self.clone(),
            name: Arc::from(name),
        }
    }

    pub(crate) fn generate_id(&self) -> sled::Result<u64> {
        let row = wait(self.0.shared.client.query_one(&self.0.shared.next_id, &[]))
            .map_err(engine_error)?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    /// Runs `body` in a SERIALIZABLE transaction over the trees `names`, again from scratch after each
    /// conflict.
    pub(crate) fn transaction<T, E>(
        &self,
        names: &[&str],
        body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<E>>,
    ) -> Result<T, TransactionError<E>> {
        let conn = self.checkout();
        let result = run_transaction(&conn.0, names, body);
        drop(conn);
        result
    }

    fn checkout(&self) -> Checkout<'_> {
        let mut pool = self.0.pool.lock().expect("postgres pool");
        loop {
            if let Some(conn) = pool.pop() {
                return Checkout(conn, self);
            }
            pool = self.0.returned.wait(pool).expect("postgres pool");
        }
    }
}

/// A connection taken for one transaction, returned when dropped.
struct Checkout<'a>(Arc<Conn>, &'a Pg);

impl Drop for Checkout<'_> {
    fn drop(&mut self) {
        let inner = &self.1 .0;
        inner
            .pool
            .lock()
            .expect("postgres pool")
            .push(Arc::clone(&self.0));
        inner.returned.notify_one();
    }
}

fn run_transaction<T, E>(
    conn: &Arc<Conn>,
    names: &[&str],
    body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<E>>,
) -> Result<T, TransactionError<E>> {
    let views: Vec<TxTree> = names
        .iter()
        .map(|name| {
            TxTree::Postgres(PgTxTree {
                conn: Arc::clone(conn),
                name: Arc::from(*name),
            })
        })
        .collect();
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        if attempt > 3 {
            // Conflicts that keep coming are between transactions that keep meeting: let the others pass.
            std::thread::sleep(Duration::from_millis(u64::from(attempt.min(20))));
        }
        let storage = |e| TransactionError::Storage(engine_error(e));
        wait(
            conn.client
                .batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE"),
        )
        .map_err(storage)?;
        let outcome = body(&views);
        let rollback = || wait(conn.client.batch_execute("ROLLBACK")).map_err(storage);
        match outcome {
            Ok(value) => match wait(conn.client.batch_execute("COMMIT")) {
                Ok(()) => return Ok(value),
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(storage(e)),
            },
            Err(ConflictableTransactionError::Conflict) => {
                rollback()?;
            }
            Err(ConflictableTransactionError::Abort(e)) => {
                rollback()?;
                return Err(TransactionError::Abort(e));
            }
            Err(ConflictableTransactionError::Storage(e)) => {
                rollback()?;
                return Err(TransactionError::Storage(e));
            }
        }
    }
}

fn connect(
    runtime: &IoRuntime,
    url: &str,
    ca_file: Option<&Path>,
) -> Result<Arc<Conn>, StorageError> {
    let runtime = runtime.0.as_ref().expect("the runtime runs until dropped");
    let url = url.to_owned();
    let tls = super::connect::tls(ca_file)?;
    let unreachable = |e: tokio_postgres::Error| {
        StorageError::Database(format!("cannot connect to the database: {}", describe(&e)))
    };
    let connected = runtime.spawn(async move { super::connect::connect(&url, tls).await });
    let client = wait(connected)
        .map_err(|e| StorageError::Database(format!("cannot connect to the database: {e}")))?
        .map_err(unreachable)?;
    let failed = |e: tokio_postgres::Error| {
        StorageError::Database(format!("cannot prepare a statement: {}", describe(&e)))
    };
    wait(client.batch_execute(
        "SET default_transaction_isolation TO serializable; SET statement_timeout TO 0",
    ))
    .map_err(failed)?;
    let prepare = |sql: &str| wait(client.prepare(sql)).map_err(failed);
    // A missing table means an unmigrated database; `check_schema` says so before any statement runs.
    if !schema_exists(&client)? {
        return Err(outdated(None));
    }
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
        upsert: prepare(
            "WITH old AS (SELECT value FROM switchboard_kv WHERE tree = $1 AND key = $2), \
             new AS (INSERT INTO switchboard_kv (tree, key, value) VALUES ($1, $2, $3) \
             ON CONFLICT (tree, key) DO UPDATE SET value = EXCLUDED.value) \
             SELECT value FROM old",
        )?,
        delete: prepare("DELETE FROM switchboard_kv WHERE tree = $1 AND key = $2 RETURNING value")?,
        forward: prepare(&range("ASC", true))?,
        forward_open: prepare(&range("ASC", false))?,
        backward: prepare(&range("DESC", true))?,
        backward_open: prepare(&range("DESC", false))?,
        next_id: prepare("SELECT nextval('switchboard_ids')")?,
        client,
    }))
}

fn schema_exists(client: &Client) -> Result<bool, StorageError> {
    let row = wait(client.query_one(
        "SELECT to_regclass('switchboard_schema') IS NOT NULL AND to_regclass('switchboard_kv') IS NOT NULL",
        &[],
    ))
    .map_err(|e| StorageError::Database(format!("cannot read the schema: {}", describe(&e))))?;
    Ok(row.get(0))
}

/// The refusal of a database whose schema is not [`SCHEMA_VERSION`]'s.
pub(crate) fn outdated(found: Option<i32>) -> StorageError {
    let found = match found {
        Some(version) => format!("is at version {version}"),
        None => "has no Switchboard schema".to_owned(),
    };
    StorageError::Database(format!(
        "the database {found} and this Switchboard needs version {SCHEMA_VERSION}: \
         run `switchboard migrate --config PATH` first"
    ))
}

fn check_schema(client: &Client) -> Result<(), StorageError> {
    let row = wait(client.query_opt("SELECT max(version) FROM switchboard_schema", &[])).map_err(
        |e| StorageError::Database(format!("cannot read the schema version: {}", describe(&e))),
    )?;
    let found: Option<i32> = row.and_then(|row| row.get(0));
    match found {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(newer) if newer > SCHEMA_VERSION => Err(StorageError::Database(format!(
            "the database is at schema version {newer}, newer than this Switchboard's \
             {SCHEMA_VERSION}: run the release that migrated it"
        ))),
        older => Err(outdated(older)),
    }
}

/// Creates the schema in the database at `url`, or upgrades it to [`SCHEMA_VERSION`]; answers the version
/// it found (`None`: none).
pub fn migrate(url: &str, ca_file: Option<&Path>) -> Result<Option<i32>, StorageError> {
    // On a thread of its own: a caller inside a runtime could not block on another one.
    let url = url.to_owned();
    let tls = super::connect::tls(ca_file)?;
    std::thread::spawn(move || migrate_now(&url, tls))
        .join()
        .unwrap_or_else(|_| Err(StorageError::Database("the migration panicked".into())))
}

fn migrate_now(
    url: &str,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
) -> Result<Option<i32>, StorageError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| StorageError::Database(format!("cannot start: {e}")))?;
    let failed = |e: tokio_postgres::Error| {
        StorageError::Database(format!("migration failed: {}", describe(&e)))
    };
    runtime.block_on(async {
        let mut client = super::connect::connect(url, tls)
            .await
            .map_err(|e| StorageError::Database(format!("cannot connect to the database: {e}")))?;
        let transaction = client.transaction().await.map_err(failed)?;
        // One migration at a time, whichever node runs it.
        transaction
            .batch_execute("SELECT pg_advisory_xact_lock(7465737)")
            .await
            .map_err(failed)?;
        for statement in MIGRATIONS {
            transaction.batch_execute(statement).await.map_err(failed)?;
        }
        let found: Option<i32> = transaction
            .query_one("SELECT max(version) FROM switchboard_schema", &[])
            .await
            .map_err(failed)?
            .get(0);
        if let Some(newer) = found.filter(|found| *found > SCHEMA_VERSION) {
            return Err(StorageError::Database(format!(
                "the database is at schema version {newer}, newer than this Switchboard's {SCHEMA_VERSION}"
            )));
        }
        transaction
            .execute("DELETE FROM switchboard_schema", &[])
            .await
            .map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO switchboard_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .await
            .map_err(failed)?;
        transaction.commit().await.map_err(failed)?;
        Ok(found)
    })
}

/// One tree outside a transaction: each call is a statement of its own, retried after a conflict.
#[derive(Clone)]
pub(crate) struct PgTree {
    pg: Pg,
    name: Arc<str>,
}

impl PgTree {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn pg(&self) -> &Pg {
        &self.pg
    }

    fn conn(&self) -> &Conn {
        &self.pg.0.shared
    }

    /// Runs a statement, again after a conflict with a transaction.
    fn retried<T>(
        &self,
        run: impl Fn(&Conn) -> Result<T, tokio_postgres::Error>,
    ) -> sled::Result<T> {
        loop {
            match run(self.conn()) {
                Err(e) if is_conflict(&e) => std::thread::sleep(Duration::from_millis(1)),
                other => return other.map_err(engine_error),
            }
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> sled::Result<Option<Bytes>> {
        self.retried(|conn| {
            let row = wait(conn.client.query_opt(&conn.get, &[&&*self.name, &key]))?;
            Ok(row.map(|row| Bytes::from(row.get::<_, &[u8]>(0))))
        })
    }

    pub(crate) fn insert(&self, key: &[u8], value: &[u8]) -> sled::Result<Option<Bytes>> {
        self.retried(|conn| {
            let row = wait(
                conn.client
                    .query_opt(&conn.upsert, &[&&*self.name, &key, &value]),
            )?;
            Ok(row.map(|row| Bytes::from(row.get::<_, &[u8]>(0))))
        })
    }

    pub(crate) fn remove(&self, key: &[u8]) -> sled::Result<Option<Bytes>> {
        self.retried(|conn| {
            let row = wait(conn.client.query_opt(&conn.delete, &[&&*self.name, &key]))?;
            Ok(row.map(|row| Bytes::from(row.get::<_, &[u8]>(0))))
        })
    }

    pub(crate) fn range(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> PgIter {
        // Every range becomes [low, high): the key right after `k` in byte order is `k` then a zero.
        let after = |mut key: Vec<u8>| {
            key.push(0);
            key
        };
        let low = match start {
            Bound::Included(key) => key,
            Bound::Excluded(key) => after(key),
            Bound::Unbounded => Vec::new(),
        };
        let high = match end {
            Bound::Included(key) => Some(after(key)),
            Bound::Excluded(key) => Some(key),
            Bound::Unbounded => None,
        };
        PgIter {
            tree: self.clone(),
            low,
            high,
            front: VecDeque::new(),
            back: VecDeque::new(),
            front_page: FIRST_PAGE,
            back_page: FIRST_PAGE,
            front_done: false,
            back_done: false,
        }
    }

    fn transaction<T>(&self, body: impl Fn(&TxTree) -> TxResult<T>) -> sled::Result<T> {
        self.pg
            .transaction::<T, ()>(&[&self.name], |views| Ok(body(&views[0])?))
            .map_err(|e| match e {
                TransactionError::Storage(e) => e,
                TransactionError::Abort(()) => sled::Error::Unsupported("aborted".into()),
            })
    }

    pub(crate) fn apply_batch(&self, writes: Vec<(Bytes, Option<Bytes>)>) -> sled::Result<()> {
        self.transaction(|tree| {
            for (key, value) in &writes {
                match value {
                    Some(value) => tree.insert(key.clone(), value.clone())?,
                    None => tree.remove(key.clone())?,
                };
            }
            Ok(())
        })
    }

    pub(crate) fn compare_and_swap(
        &self,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> sled::Result<Result<(), CompareAndSwapError>> {
        self.transaction(|tree| {
            let current = tree.get(key)?;
            if current.as_deref() != old {
                return Ok(Err(CompareAndSwapError {
                    current,
                    proposed: new.map(Bytes::from),
                }));
            }
            match new {
                Some(new) => tree.insert(key, new)?,
                None => tree.remove(key)?,
            };
            Ok(Ok(()))
        })
    }

    pub(crate) fn update_and_fetch(
        &self,
        key: &[u8],
        change: impl FnMut(Option<&[u8]>) -> Option<Vec<u8>>,
    ) -> sled::Result<Option<Bytes>> {
        let change = std::cell::RefCell::new(change);
        self.transaction(|tree| {
            let current = tree.get(key)?;
            let next = (change.borrow_mut())(current.as_deref()).map(Bytes::from);
            match &next {
                Some(next) => tree.insert(key, next.clone())?,
                None => tree.remove(key)?,
            };
            Ok(next)
        })
    }

    fn page(
        &self,
        low: &[u8],
        high: Option<&[u8]>,
        forward: bool,
        limit: i64,
    ) -> sled::Result<Vec<(Bytes, Bytes)>> {
        self.retried(|conn| {
            let name = &*self.name;
            let rows = match (high, forward) {
                (Some(high), true) => wait(
                    conn.client
                        .query(&conn.forward, &[&name, &low, &high, &limit]),
                ),
                (None, true) => wait(
                    conn.client
                        .query(&conn.forward_open, &[&name, &low, &limit]),
                ),
                (Some(high), false) => wait(
                    conn.client
                        .query(&conn.backward, &[&name, &low, &high, &limit]),
                ),
                (None, false) => wait(
                    conn.client
                        .query(&conn.backward_open, &[&name, &low, &limit]),
                ),
            }?;
            Ok(rows
                .iter()
                .map(|row| {
                    (
                        Bytes::from(row.get::<_, &[u8]>(0)),
                        Bytes::from(row.get::<_, &[u8]>(1)),
                    )
                })
                .collect())
        })
    }
}

/// One tree inside a transaction: statements on the transaction's connection.
#[derive(Clone)]
pub(crate) struct PgTxTree {
    conn: Arc<Conn>,
    name: Arc<str>,
}

impl PgTxTree {
    pub(crate) fn get(&self, key: &[u8]) -> TxResult<Option<Bytes>> {
        let conn = &self.conn;
        let row =
            wait(conn.client.query_opt(&conn.get, &[&&*self.name, &key])).map_err(tx_error)?;
        Ok(row.map(|row| Bytes::from(row.get::<_, &[u8]>(0))))
    }

    pub(crate) fn insert(&self, key: &[u8], value: &[u8]) -> TxResult<Option<Bytes>> {
        let conn = &self.conn;
        let row = wait(
            conn.client
                .query_opt(&conn.upsert, &[&&*self.name, &key, &value]),
        )
        .map_err(tx_error)?;
        Ok(row.map(|row| Bytes::from(row.get::<_, &[u8]>(0))))
    }

    pub(crate) fn remove(&self, key: &[u8]) -> TxResult<Option<Bytes>> {
        let conn = &self.conn;
        let row =
            wait(conn.client.query_opt(&conn.delete, &[&&*self.name, &key])).map_err(tx_error)?;
        Ok(row.map(|row| Bytes::from(row.get::<_, &[u8]>(0))))
    }
}

/// A range read page by page, from either end.
pub(crate) struct PgIter {
    tree: PgTree,
    /// Keys at or after `low` and before `high` are still to come.
    low: Vec<u8>,
    high: Option<Vec<u8>>,
    front: VecDeque<(Bytes, Bytes)>,
    back: VecDeque<(Bytes, Bytes)>,
    front_page: i64,
    back_page: i64,
    front_done: bool,
    back_done: bool,
}

impl PgIter {
    fn within(&self, key: &[u8]) -> bool {
        key >= self.low.as_slice() && self.high.as_deref().is_none_or(|high| key < high)
    }

    fn fill(&mut self, forward: bool) -> sled::Result<()> {
        let limit = if forward {
            self.front_page
        } else {
            self.back_page
        };
        let page = self
            .tree
            .page(&self.low, self.high.as_deref(), forward, limit)?;
        let (done, size, buffer) = if forward {
            (&mut self.front_done, &mut self.front_page, &mut self.front)
        } else {
            (&mut self.back_done, &mut self.back_page, &mut self.back)
        };
        *done = (page.len() as i64) < limit;
        *size = (*size * 2).min(MAX_PAGE);
        buffer.extend(page);
        Ok(())
    }

    fn step(&mut self, forward: bool) -> Option<sled::Result<(Bytes, Bytes)>> {
        loop {
            let buffered = if forward {
                self.front.pop_front()
            } else {
                self.back.pop_front()
            };
            match buffered {
                Some((key, value)) => {
                    if !self.within(&key) {
                        // The other end has passed it already.
                        self.front_done = true;
                        self.back_done = true;
                        return None;
                    }
                    if forward {
                        let mut low = key.to_vec();
                        low.push(0);
                        self.low = low;
                    } else {
                        self.high = Some(key.to_vec());
                    }
                    return Some(Ok((key, value)));
                }
                None => {
                    let done = if forward {
                        self.front_done
                    } else {
                        self.back_done
                    };
                    if done {
                        return None;
                    }
                    if let Err(e) = self.fill(forward) {
                        self.front_done = true;
                        self.back_done = true;
                        return Some(Err(e));
                    }
                    let empty = if forward {
                        self.front.is_empty()
                    } else {
                        self.back.is_empty()
                    };
                    if empty {
                        return None;
                    }
                }
            }
        }
    }
}

impl Iterator for PgIter {
    type Item = sled::Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step(true)
    }
}

impl DoubleEndedIterator for PgIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(false)
    }
}
