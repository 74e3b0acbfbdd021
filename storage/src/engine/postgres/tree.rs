//! A tree of the PostgreSQL engine: its rows of `switchboard_kv`, outside a transaction and inside one.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use sled::transaction::TransactionError;
use sled::CompareAndSwapError;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use super::holder_cache::{HolderCache, Lookup};
use super::range::PgIter;
use super::transaction::{Opening, Phase, Unsettled};
use super::{engine_error, is_conflict, wait, Conn, Pg};
use crate::engine::{Bytes, TxResult, TxTree};
use tokio_postgres::error::SqlState;

/// One tree outside a transaction: each call is a statement of its own, retried after a conflict.
#[derive(Clone)]
pub(crate) struct PgTree {
    pg: Pg,
    name: Arc<str>,
}

impl PgTree {
    pub(super) fn new(pg: Pg, name: &str) -> PgTree {
        PgTree {
            pg,
            name: Arc::from(name),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn pg(&self) -> &Pg {
        &self.pg
    }

    fn conn(&self) -> Arc<Conn> {
        self.pg.shared()
    }

    /// Runs a statement, again after a conflict with a transaction, and once more on a new connection
    /// when it met a connection that had just been lost.
    pub(super) fn retried<T>(
        &self,
        run: impl Fn(&Conn) -> Result<T, tokio_postgres::Error>,
    ) -> sled::Result<T> {
        let mut reconnected = false;
        loop {
            match run(&self.conn()) {
                Err(e) if is_conflict(&e) => std::thread::sleep(Duration::from_millis(1)),
                Err(e) if super::is_lost(&e) && !reconnected => reconnected = true,
                other => return other.map_err(engine_error),
            }
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> sled::Result<Option<Bytes>> {
        wait(self.get_async(key))
    }

    /// One row, awaited: the client's future needs no runtime of ours, only its connection's task on the
    /// I/O thread.
    ///
    /// On the node holding the lease, a key of a tree it keeps is answered from memory once known
    /// ([`super::holder_cache`]).
    pub(crate) async fn get_async(&self, key: &[u8]) -> sled::Result<Option<Bytes>> {
        let cache = self.pg.cache();
        let sent = match cache.lookup(&self.name, key) {
            Lookup::Known(value) => return Ok(value),
            Lookup::Read(sent) => Some(sent),
            Lookup::Bypass => None,
        };
        let name = &*self.name;
        let value = self
            .retried_async(|conn| async move {
                let row = conn.client.query_opt(&conn.get, &[&name, &key]).await?;
                Ok(row.as_ref().map(|row| column(row, 0)))
            })
            .await?;
        if let Some(sent) = sent {
            cache.fill(&self.name, key, value.as_ref(), sent);
        }
        Ok(value)
    }

    /// A read awaited, retried like [`PgTree::retried`] without its pause: a single read meets a
    /// conflict only in corner cases of SERIALIZABLE, and no writer waits on it to go away.
    pub(super) async fn retried_async<T, F>(&self, run: impl Fn(Arc<Conn>) -> F) -> sled::Result<T>
    where
        F: std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    {
        let mut reconnected = false;
        loop {
            match run(self.conn()).await {
                Err(e) if is_conflict(&e) => {}
                Err(e) if super::is_lost(&e) && !reconnected => reconnected = true,
                other => return other.map_err(engine_error),
            }
        }
    }

    pub(crate) fn insert(&self, key: &[u8], value: &[u8]) -> sled::Result<Option<Bytes>> {
        if self.pg.fenced() {
            // A fenced engine writes only in transactions: they check the lease.
            return self.transaction(|tree| tree.insert(key, value));
        }
        self.retried(|conn| {
            let row = wait(
                conn.client
                    .query_opt(&conn.upsert, &[&&*self.name, &key, &value]),
            )?;
            Ok(row.as_ref().map(|row| column(row, 0)))
        })
    }

    pub(crate) fn remove(&self, key: &[u8]) -> sled::Result<Option<Bytes>> {
        if self.pg.fenced() {
            return self.transaction(|tree| tree.remove(key));
        }
        self.retried(|conn| {
            let row = wait(conn.client.query_opt(&conn.delete, &[&&*self.name, &key]))?;
            Ok(row.as_ref().map(|row| column(row, 0)))
        })
    }

    pub(crate) fn range(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> PgIter {
        let (low, high) = half_open(start, end);
        PgIter::new(self.clone(), low, high)
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
}

/// A range as `[low, high)` (no end: `None`): the key right after `k` in byte order is `k` then a zero.
pub(crate) fn half_open(start: Bound<Vec<u8>>, end: Bound<Vec<u8>>) -> (Vec<u8>, Option<Vec<u8>>) {
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
    (low, high)
}

/// A `bytea` column of `row` (a key or a value).
pub(super) fn column(row: &Row, index: usize) -> Bytes {
    Bytes::from(row.get::<_, &[u8]>(index))
}

/// One tree inside a transaction: statements on the transaction's connection.
#[derive(Clone)]
pub(crate) struct PgTxTree {
    pub(super) conn: Arc<Conn>,
    pub(super) name: Arc<str>,
    /// The transaction's writes, across its trees, sent together before it commits.
    pub(super) writes: Writes,
    /// Audit events the transaction appends ([`super::audit_events`]).
    pub(super) audit: super::audit_events::AuditWrites,
    /// Rows of `requests` the transaction writes ([`super::requests_table`]).
    pub(super) requests: super::requests_table::RequestWrites,
    /// What the transaction read ahead, and what it asked to read ahead next.
    pub(super) ahead: ReadAhead,
    /// Which run of the transaction this is (the first is 1): a run after a conflict.
    pub(super) attempt: Rc<std::cell::Cell<u32>>,
    /// Whether its BEGIN was sent: it leaves with the first statement.
    pub(super) opening: Rc<super::transaction::Opening>,
}

/// A key of one tree.
pub(super) type Place = (Arc<str>, Bytes);

/// Reads a transaction announces before it needs them ([`PgTxTree::want`]), sent together in one round
/// trip ([`PgTxTree::fetch_wanted`]) instead of one round trip each: a group of 64 creates read its
/// idempotency keys and booking counts in one burst rather than 128 waits on the network.
#[derive(Clone, Default)]
pub(crate) struct ReadAhead {
    /// Read so far in this attempt, `None` for a key without a value. Writes shadow them.
    read: Rc<RefCell<HashMap<Place, Option<Bytes>>>>,
    wanted: Rc<RefCell<Vec<Place>>>,
}

impl ReadAhead {
    /// Forgets everything: what an attempt that met a conflict read is not the next attempt's.
    pub(super) fn clear(&self) {
        self.read.borrow_mut().clear();
        self.wanted.borrow_mut().clear();
    }
}

/// Writes of one transaction not sent yet, by tree and key: the last one of a key wins, `None` removes.
/// Buffered rather than sent one by one, a group of creates costs two statements of writes instead of a
/// round trip per key; the transaction's own reads see them first.
pub(crate) type Writes = Rc<RefCell<BTreeMap<(Arc<str>, Bytes), Option<Bytes>>>>;

/// Sends the buffered `writes` on `conn` and commits: one statement for every value, one per removal, then
/// COMMIT, all sent before the first answer is awaited. A failed write fails the transaction, so the COMMIT
/// behind it commits nothing; its error is the one answered. Every answer is awaited, the COMMIT's
/// included, so the transaction has ended when this returns, whatever it returns: a COMMIT that fails
/// rolls back, and one after a failed write answers ROLLBACK. The caller has nothing left to roll back.
pub(super) fn commit(
    conn: &Conn,
    cache: &HolderCache,
    opening: &Opening,
    writes: &Writes,
    audit: &super::audit_events::AuditWrites,
    requests: &super::requests_table::RequestWrites,
) -> Result<(), Unsettled> {
    let writes = std::mem::take(&mut *writes.borrow_mut());
    let audit = std::mem::take(&mut *audit.borrow_mut());
    let requests = std::mem::take(&mut *requests.borrow_mut());
    let guesses = std::mem::take(&mut *opening.guesses.borrow_mut());
    // Without a BEGIN sent, the attempt read nothing from the database: with nothing to write either,
    // it has nothing to send (what it guessed decided nothing that lasts). Otherwise the BEGIN leads
    // the writes in the same round trip, with the lease check and the check of the guesses, both of
    // which fail the transaction (so the COMMIT behind them rolls back) rather than answer a row that
    // would have to be read before the COMMIT leaves.
    let pending = opening.phase.get() == Phase::Pending;
    if pending && writes.is_empty() && audit.is_empty() && requests.is_empty() {
        return Ok(());
    }
    let begin = async {
        if pending {
            conn.client
                .batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
                .await
        } else {
            Ok(())
        }
    };
    let fence = async {
        match opening.fence.as_deref() {
            Some(holder) if pending => conn.client.execute(&conn.fence_guard, &[&holder]).await,
            _ => Ok(0),
        }
    };
    let guess_trees: Vec<&str> = guesses.iter().map(|((tree, _), _)| &**tree).collect();
    let guess_keys: Vec<&[u8]> = guesses.iter().map(|((_, key), _)| &key[..]).collect();
    let guess_values: Vec<Option<&[u8]>> =
        guesses.iter().map(|(_, value)| value.as_deref()).collect();
    let guessed = async {
        if guess_keys.is_empty() {
            return Ok(0);
        }
        let values: [&(dyn ToSql + Sync); 3] = [&guess_trees, &guess_keys, &guess_values];
        conn.client.execute(&conn.guess_guard, &values).await
    };
    let (mut put_trees, mut put_keys, mut put_values) = (Vec::new(), Vec::new(), Vec::new());
    let (mut del_trees, mut del_keys) = (Vec::new(), Vec::new());
    for ((tree, key), value) in &writes {
        match value {
            Some(value) => {
                put_trees.push(&**tree);
                put_keys.push(&key[..]);
                put_values.push(&value[..]);
            }
            None => {
                del_trees.push(&**tree);
                del_keys.push(&key[..]);
            }
        }
    }
    let puts = async {
        if put_keys.is_empty() {
            return Ok(0);
        }
        let values: [&(dyn ToSql + Sync); 3] = [&put_trees, &put_keys, &put_values];
        conn.client.execute(&conn.upsert_many, &values).await
    };
    // A statement per removal: removals are few (a run's end, a batch retired), and a plan over an array
    // of keys was seen reading a whole tree per call (a lookup of several keys at once, since taken out).
    let removals =
        futures::future::try_join_all(del_trees.iter().zip(&del_keys).map(
            |(tree, key)| async move { conn.client.execute(&conn.delete, &[tree, key]).await },
        ));
    let events = super::audit_events::insert(conn, &audit);
    let rows = super::requests_table::write(conn, requests);
    // The holder's copy of what it writes is marked before the writes leave and settled once the
    // COMMIT has answered, before its writer hears of it.
    cache.begin_commit(writes.keys());
    opening.exchanged();
    // Polled in this order, so sent in this order; the first error in that order is the cause.
    let (begun, fenced, checked, puts, removals, events, rows, committed) = wait(async {
        futures::join!(
            begin,
            fence,
            guessed,
            puts,
            removals,
            events,
            rows,
            conn.client.batch_execute("COMMIT")
        )
    });
    let refused = |e: &tokio_postgres::Error| e.code() == Some(&SqlState::DIVISION_BY_ZERO);
    let outcome = match (begun, fenced, checked) {
        (Err(e), _, _) => Err(Unsettled::Database(e)),
        (_, Err(e), _) if refused(&e) => Err(Unsettled::Refused),
        (_, Err(e), _) => Err(Unsettled::Database(e)),
        (_, _, Err(e)) if refused(&e) => Err(Unsettled::Missed),
        (_, _, Err(e)) => Err(Unsettled::Database(e)),
        _ => puts
            .map(drop)
            .and(removals.map(drop))
            .and(events.map(drop))
            .and(rows)
            .and(committed)
            .map_err(Unsettled::Database),
    };
    cache.end_commit(writes.iter(), outcome.is_ok());
    outcome
}

impl PgTxTree {
    /// Writes a row of `requests` (`None` deletes it), sent with the transaction's other writes.
    pub(crate) fn put_request_row(&self, id: &str, row: Option<super::requests_table::RequestRow>) {
        self.requests.borrow_mut().insert(id.to_owned(), row);
    }

    /// Appends audit events, sent with the transaction's other writes.
    pub(crate) fn put_audit_rows(&self, rows: Vec<super::audit_events::AuditRow>) {
        self.audit.borrow_mut().extend(rows);
    }

    pub(crate) fn get(&self, key: &[u8]) -> TxResult<Option<Bytes>> {
        let place = (Arc::clone(&self.name), Bytes::from(key));
        if let Some(written) = self.writes.borrow().get(&place) {
            return Ok(written.clone());
        }
        if let Some(read) = self.ahead.read.borrow().get(&place) {
            return Ok(read.clone());
        }
        let conn = &self.conn;
        let row = wait(self.opening.begun(
            conn,
            conn.client.query_opt(&conn.get, &[&&*self.name, &key]),
        ))?;
        Ok(row.as_ref().map(|row| column(row, 0)))
    }

    /// Announces a read of `key` that [`PgTxTree::fetch_wanted`] makes ahead, with others.
    pub(crate) fn want(&self, key: &[u8]) {
        let place = (Arc::clone(&self.name), Bytes::from(key));
        if !self.writes.borrow().contains_key(&place)
            && !self.ahead.read.borrow().contains_key(&place)
        {
            self.ahead.wanted.borrow_mut().push(place);
        }
    }

    /// Reads every key wanted so far, of any tree of the transaction, in one statement (and the
    /// transaction's BEGIN with it when it is the first): a group of 64 creates waits once, and the
    /// database plans and runs one statement rather than one per key.
    pub(crate) fn fetch_wanted(&self) -> TxResult<()> {
        let mut wanted = std::mem::take(&mut *self.ahead.wanted.borrow_mut());
        wanted.sort();
        wanted.dedup();
        // What the lease holder's copy answers is taken as a guess, checked with the COMMIT: a group of
        // creates whose booking counts are known and whose idempotency keys are new reads nothing.
        wanted.retain(|place| match self.opening.guess(place) {
            Some(value) => {
                self.ahead.read.borrow_mut().insert(place.clone(), value);
                false
            }
            None => true,
        });
        if wanted.is_empty() {
            return Ok(());
        }
        let conn = &self.conn;
        let trees: Vec<&str> = wanted.iter().map(|(tree, _)| &**tree).collect();
        let keys: Vec<&[u8]> = wanted.iter().map(|(_, key)| &key[..]).collect();
        let rows = wait(
            self.opening
                .begun(conn, conn.client.query(&conn.get_many, &[&trees, &keys])),
        )?;
        let mut read = self.ahead.read.borrow_mut();
        for row in rows {
            let at = row.get::<_, i64>(0) as usize - 1;
            let value = row.get::<_, Option<&[u8]>>(1).map(Bytes::from);
            read.insert(wanted[at].clone(), value);
        }
        Ok(())
    }

    /// Writes `value` under `key` with the transaction, answering what it replaces (which takes a read).
    pub(crate) fn insert(&self, key: &[u8], value: Bytes) -> TxResult<Option<Bytes>> {
        let old = self.get(key)?;
        self.put(key, value);
        Ok(old)
    }

    /// Removes `key` with the transaction, answering what it held (which takes a read).
    pub(crate) fn remove(&self, key: &[u8]) -> TxResult<Option<Bytes>> {
        let old = self.get(key)?;
        self.write(key, None);
        Ok(old)
    }

    /// Writes `value` under `key` with the transaction, without reading what it replaces.
    pub(crate) fn put(&self, key: &[u8], value: Bytes) {
        self.write(key, Some(value));
    }

    fn write(&self, key: &[u8], value: Option<Bytes>) {
        self.writes
            .borrow_mut()
            .insert((Arc::clone(&self.name), Bytes::from(key)), value);
    }
}
