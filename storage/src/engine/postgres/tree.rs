//! A tree of the PostgreSQL engine: its rows of `switchboard_kv`, outside a transaction and inside one.

use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use sled::transaction::TransactionError;
use sled::CompareAndSwapError;

use super::range::PgIter;
use super::{engine_error, is_conflict, tx_error, wait, Conn, Pg};
use crate::engine::{Bytes, TxResult, TxTree};

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

    pub(super) fn page(
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
    pub(super) conn: Arc<Conn>,
    pub(super) name: Arc<str>,
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
