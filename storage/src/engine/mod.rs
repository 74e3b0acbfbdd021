//! The engines under the store. [`operations`] is the seam the store is moving to: Switchboard's
//! operations, a family at a time, each carried out by sled ([`embedded`]) or by PostgreSQL's own tables
//! ([`postgres::tables`]).
//!
//! The families not moved yet are still written once against ordered key/value trees with transactions
//! across trees (`Tree`, `TxTree`, [`transaction`]), a surface taken from sled, the engine the store was
//! built on. PostgreSQL maps it onto the rows of one table, `switchboard_kv (tree, key, value)`, and
//! serializable transactions that retry where sled's do (see [`postgres`]); its errors arrive as sled's
//! I/O error. This surface goes away once the last family has moved.

mod connect;
mod embedded;
mod iter;
pub(crate) mod lease;
pub(crate) mod operations;
pub(crate) mod postgres;
#[cfg(test)]
pub(crate) mod suite;
#[cfg(any(test, feature = "test-hooks"))]
pub mod testing;
mod tx;

use std::ops::{Bound, RangeBounds};

use sled::CompareAndSwapError;

pub(crate) use iter::Iter;
pub(crate) use tx::{transaction, TxResult, TxTree};

/// A stored key or value: a cheaply cloned byte buffer.
pub(crate) type Bytes = sled::IVec;

/// Which engine a store runs on.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum EngineChoice {
    /// sled in `{data_dir}/store`, the default.
    #[default]
    Sled,
    /// A PostgreSQL database, its schema made by `switchboard migrate`.
    Postgres {
        /// `postgres://user:password@host:port/database`, with `?sslmode=require` for TLS.
        url: String,
        /// A CA the database's certificate is signed by, beside the public roots.
        ca_file: Option<std::path::PathBuf>,
    },
}

/// Without the URL, which may carry a password.
impl std::fmt::Debug for EngineChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind())
    }
}

impl EngineChoice {
    /// `sled` or `postgres`, for logs and errors.
    pub fn kind(&self) -> &'static str {
        match self {
            EngineChoice::Sled => "sled",
            EngineChoice::Postgres { .. } => "postgres",
        }
    }
}

/// An open engine.
#[derive(Clone)]
pub(crate) enum Db {
    Sled(sled::Db),
    Postgres(postgres::Pg),
}

impl Db {
    pub(crate) fn open_tree(&self, name: &str) -> sled::Result<Tree> {
        Ok(match self {
            Db::Sled(db) => Tree::Sled(db.open_tree(name)?),
            Db::Postgres(pg) => Tree::Postgres(pg.tree(name)),
        })
    }

    /// Makes every write so far durable. A PostgreSQL commit already is.
    pub(crate) fn flush(&self) -> sled::Result<()> {
        match self {
            Db::Sled(db) => db.flush().map(drop),
            Db::Postgres(_) => Ok(()),
        }
    }

    /// From now on, commits only while `holder` holds the orchestrator lease (PostgreSQL; a sled store
    /// is one process's alone).
    pub(crate) fn fence_to(&self, holder: &str) {
        if let Db::Postgres(pg) = self {
            pg.fence_to(holder);
        }
    }

    /// Whether commits are durable when they return, so no flush needs to follow them.
    pub(crate) fn commits_are_durable(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// Whether a read waits on the network, so reading ahead ([`TxTree::want`]) pays.
    pub(crate) fn reads_over_network(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }
}

/// One tree: keys in byte order.
#[derive(Clone)]
pub(crate) enum Tree {
    Sled(sled::Tree),
    Postgres(postgres::PgTree),
}

impl Tree {
    pub(crate) fn get(&self, key: impl AsRef<[u8]>) -> sled::Result<Option<Bytes>> {
        match self {
            Tree::Sled(tree) => tree.get(key),
            Tree::Postgres(tree) => tree.get(key.as_ref()),
        }
    }

    /// [`Tree::get`] for a caller on an async path: on PostgreSQL the thread serves others while the
    /// statement is out, where `get` would hold it for the round trip. On sled it is `get`, ready at once.
    pub(crate) async fn get_async(&self, key: impl AsRef<[u8]>) -> sled::Result<Option<Bytes>> {
        match self {
            Tree::Sled(tree) => tree.get(key),
            Tree::Postgres(tree) => tree.get_async(key.as_ref()).await,
        }
    }

    pub(crate) fn contains_key(&self, key: impl AsRef<[u8]>) -> sled::Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    /// Writes `value` under `key`, answering what it replaced.
    pub(crate) fn insert(
        &self,
        key: impl AsRef<[u8]>,
        value: impl Into<Bytes>,
    ) -> sled::Result<Option<Bytes>> {
        match self {
            Tree::Sled(tree) => tree.insert(key, value),
            Tree::Postgres(tree) => tree.insert(key.as_ref(), &value.into()),
        }
    }

    /// Removes `key`, answering what it held.
    pub(crate) fn remove(&self, key: impl AsRef<[u8]>) -> sled::Result<Option<Bytes>> {
        match self {
            Tree::Sled(tree) => tree.remove(key),
            Tree::Postgres(tree) => tree.remove(key.as_ref()),
        }
    }

    pub(crate) fn first(&self) -> sled::Result<Option<(Bytes, Bytes)>> {
        self.iter().next().transpose()
    }

    pub(crate) fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }

    pub(crate) fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        match self {
            Tree::Sled(tree) => Iter::Sled(tree.range(range)),
            Tree::Postgres(tree) => Iter::Postgres(tree.range(
                bound_bytes(range.start_bound()),
                bound_bytes(range.end_bound()),
            )),
        }
    }

    pub(crate) fn scan_prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        match self {
            Tree::Sled(tree) => Iter::Sled(tree.scan_prefix(prefix)),
            Tree::Postgres(tree) => {
                let (start, end) = prefix_bounds(prefix.as_ref());
                Iter::Postgres(tree.range(start, end))
            }
        }
    }

    /// Up to `limit` entries of `range` in key order, from its end when `reverse`: [`Tree::range`] for a
    /// caller on an async path, which on PostgreSQL awaits each page where `range` holds the thread.
    pub(crate) async fn read_range<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &self,
        range: R,
        reverse: bool,
        limit: usize,
    ) -> sled::Result<Vec<(Bytes, Bytes)>> {
        match self {
            Tree::Sled(tree) if reverse => tree.range(range).rev().take(limit).collect(),
            Tree::Sled(tree) => tree.range(range).take(limit).collect(),
            Tree::Postgres(tree) => {
                let (start, end) = (
                    bound_bytes(range.start_bound()),
                    bound_bytes(range.end_bound()),
                );
                let (low, high) = postgres::half_open(start, end);
                tree.read_range(low, high, reverse, limit).await
            }
        }
    }

    /// Every entry whose key starts with `prefix`, in key order: [`Tree::scan_prefix`], awaited.
    pub(crate) async fn read_prefix(
        &self,
        prefix: impl AsRef<[u8]>,
    ) -> sled::Result<Vec<(Bytes, Bytes)>> {
        match self {
            Tree::Sled(tree) => tree.scan_prefix(prefix).collect(),
            Tree::Postgres(tree) => {
                let (start, end) = prefix_bounds(prefix.as_ref());
                let (low, high) = postgres::half_open(start, end);
                tree.read_range(low, high, false, usize::MAX).await
            }
        }
    }

    /// Applies every write of `batch` atomically.
    pub(crate) fn apply_batch(&self, batch: Batch) -> sled::Result<()> {
        match self {
            Tree::Sled(tree) => {
                let mut sled_batch = sled::Batch::default();
                for (key, value) in batch.0 {
                    match value {
                        Some(value) => sled_batch.insert(key, value),
                        None => sled_batch.remove(key),
                    }
                }
                tree.apply_batch(sled_batch)
            }
            Tree::Postgres(tree) => tree.apply_batch(batch.0),
        }
    }

    /// Writes `new` under `key` only if it holds `old` now (`None`: absent).
    pub(crate) fn compare_and_swap(
        &self,
        key: impl AsRef<[u8]>,
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> sled::Result<Result<(), CompareAndSwapError>> {
        match self {
            Tree::Sled(tree) => tree.compare_and_swap(key, old, new),
            Tree::Postgres(tree) => tree.compare_and_swap(key.as_ref(), old, new),
        }
    }

    /// Replaces the value under `key` with what `change` makes of it, atomically.
    pub(crate) fn update_and_fetch(
        &self,
        key: impl AsRef<[u8]>,
        change: impl FnMut(Option<&[u8]>) -> Option<Vec<u8>>,
    ) -> sled::Result<Option<Bytes>> {
        match self {
            Tree::Sled(tree) => tree.update_and_fetch(key, change),
            Tree::Postgres(tree) => tree.update_and_fetch(key.as_ref(), change),
        }
    }

    pub(crate) fn is_empty(&self) -> sled::Result<bool> {
        Ok(self.first()?.is_none())
    }
}

/// Writes applied together by [`Tree::apply_batch`].
#[derive(Default)]
pub(crate) struct Batch(Vec<(Bytes, Option<Bytes>)>);

impl Batch {
    pub(crate) fn insert(&mut self, key: impl Into<Bytes>, value: impl Into<Bytes>) {
        self.0.push((key.into(), Some(value.into())));
    }

    pub(crate) fn remove(&mut self, key: impl Into<Bytes>) {
        self.0.push((key.into(), None));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The bound as owned bytes.
fn bound_bytes<K: AsRef<[u8]>>(bound: Bound<&K>) -> Bound<Vec<u8>> {
    match bound {
        Bound::Included(key) => Bound::Included(key.as_ref().to_vec()),
        Bound::Excluded(key) => Bound::Excluded(key.as_ref().to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The range of the keys that start with `prefix`.
fn prefix_bounds(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let end = match prefix_end(prefix) {
        Some(end) => Bound::Excluded(end),
        None => Bound::Unbounded,
    };
    (Bound::Included(prefix.to_vec()), end)
}

/// The first key after every key that starts with `prefix`; `None` when no key is (all `0xff`).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod prefix_tests {
    use super::*;

    #[test]
    fn the_end_of_a_prefix_is_the_first_key_past_all_it_starts() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
        assert_eq!(prefix_end(b""), None);
    }
}
