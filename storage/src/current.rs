//! Records as last read from a tree that changes rarely (accounts), valid until the next write to that
//! tree. Every API call reads its caller's account to check the credential is still live; with this, it
//! does so without a lookup in the store, which cost a GET more than its audit event's hash.
//!
//! The writes to the tree bump a generation after they have committed ([`Current::changed`]); an entry
//! answers only while the generation it was read under is the current one. A reader that raced a write
//! keeps what it read under the generation it started with, which the write's bump has already retired,
//! so it is never answered again. Between a write's commit and its bump, readers may still get the record
//! from before: the write has not returned to its caller yet.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Entries kept before the map starts over.
const CAPACITY: usize = 4096;

pub(crate) struct Current<R> {
    /// Whether anything is kept: not on a standby, which does not see the holder's writes.
    keeps: bool,
    generation: AtomicU64,
    entries: RwLock<HashMap<String, (u64, Arc<R>), foldhash::fast::RandomState>>,
}

impl<R> Current<R> {
    #[cfg(test)]
    pub(crate) fn new() -> Current<R> {
        Current::keeping(true)
    }

    /// `keeps`: whether records are kept between reads at all. A node that does not make the writes to the
    /// tree (a standby: the holder makes them) keeps nothing, and every read goes to the engine.
    pub(crate) fn keeping(keeps: bool) -> Current<R> {
        Current {
            keeps,
            generation: AtomicU64::new(0),
            entries: RwLock::new(HashMap::default()),
        }
    }

    /// The record under `key` if one is kept and no write has committed since it was read.
    pub(crate) fn cached(&self, key: &str) -> Option<Arc<R>> {
        let generation = self.generation.load(Ordering::Acquire);
        let entries = self.entries.read().expect("current lock");
        match entries.get(key) {
            Some((read_under, record)) if *read_under == generation => Some(Arc::clone(record)),
            _ => None,
        }
    }

    /// The record under `key`: the one kept if no write has committed since it was read, else what `read`
    /// finds (kept for the next reader). No lock is held while `read` awaits the engine.
    pub(crate) async fn get<E, F>(
        &self,
        key: &str,
        read: impl FnOnce() -> F,
    ) -> Result<Option<Arc<R>>, E>
    where
        F: std::future::Future<Output = Result<Option<Arc<R>>, E>>,
    {
        let generation = self.generation.load(Ordering::Acquire);
        if let Some(record) = self.cached(key) {
            return Ok(Some(record));
        }
        let record = read().await?;
        if let Some(record) = &record {
            self.keep(key, generation, record);
        }
        Ok(record)
    }

    fn keep(&self, key: &str, generation: u64, record: &Arc<R>) {
        if !self.keeps {
            return;
        }
        let mut entries = self.entries.write().expect("current lock");
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(key.to_owned(), (generation, Arc::clone(record)));
    }

    /// Runs `write`, which changes the tree, then retires every record kept, whatever `write` answered: a
    /// write that failed may still have committed.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn changed<T>(&self, write: impl FnOnce() -> T) -> T {
        let answer = write();
        self.generation.fetch_add(1, Ordering::AcqRel);
        answer
    }

    /// [`Current::changed`] for a write that awaits its engine.
    pub(crate) async fn changed_after<T>(&self, write: impl std::future::Future<Output = T>) -> T {
        let answer = write.await;
        self.generation.fetch_add(1, Ordering::AcqRel);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn read(value: &str, reads: &Cell<u32>) -> Result<Option<Arc<String>>, ()> {
        reads.set(reads.get() + 1);
        Ok(Some(Arc::new(value.to_owned())))
    }

    /// What `current` answers for `key` when a read would answer `value`.
    async fn got(current: &Current<String>, key: &str, value: &str, reads: &Cell<u32>) -> String {
        (*current
            .get(key, || async { read(value, reads) })
            .await
            .unwrap()
            .unwrap())
        .clone()
    }

    #[tokio::test]
    async fn a_record_is_read_again_only_after_a_write() {
        let current = Current::new();
        let reads = Cell::new(0);
        assert_eq!(got(&current, "a", "one", &reads).await, "one");
        assert_eq!(got(&current, "a", "two", &reads).await, "one");
        assert_eq!(reads.get(), 1, "kept between writes");
        current.changed(|| ());
        assert_eq!(got(&current, "a", "two", &reads).await, "two");
        assert_eq!(reads.get(), 2);
    }

    #[tokio::test]
    async fn a_read_that_raced_a_write_is_not_answered_again() {
        let current = Current::new();
        let reads = Cell::new(0);
        // The write commits and bumps while the reader is between the generation and the tree.
        let old = current
            .get("a", || async {
                current.changed(|| ());
                read("old", &reads)
            })
            .await;
        assert_eq!(*old.unwrap().unwrap(), "old");
        assert_eq!(got(&current, "a", "new", &reads).await, "new");
    }

    #[tokio::test]
    async fn an_awaited_read_is_kept_like_another_and_retired_by_a_write() {
        let current = Current::new();
        let reads = Cell::new(0);
        let first = current.get("a", || async { read("one", &reads) }).await;
        assert_eq!(*first.unwrap().unwrap(), "one");
        assert_eq!(*current.cached("a").unwrap(), "one");
        assert_eq!(
            got(&current, "a", "two", &reads).await,
            "one",
            "kept for the next reader"
        );
        current.changed(|| ());
        assert!(current.cached("a").is_none(), "retired by the write");
        let again = current.get("a", || async { read("two", &reads) }).await;
        assert_eq!(*again.unwrap().unwrap(), "two");
        assert_eq!(reads.get(), 2);
    }

    #[tokio::test]
    async fn a_map_that_keeps_nothing_reads_every_time() {
        let current = Current::keeping(false);
        let reads = Cell::new(0);
        assert_eq!(got(&current, "a", "one", &reads).await, "one");
        assert_eq!(got(&current, "a", "two", &reads).await, "two");
        assert!(current.cached("a").is_none());
        assert_eq!(reads.get(), 2);
    }

    #[tokio::test]
    async fn a_missing_record_and_an_error_are_not_kept() {
        let current: Current<String> = Current::new();
        let reads = Cell::new(0);
        assert!(current
            .get("a", || async { Ok::<_, ()>(None) })
            .await
            .unwrap()
            .is_none());
        assert_eq!(
            current
                .get("a", || async { Err::<Option<_>, _>("down") })
                .await,
            Err("down")
        );
        assert_eq!(got(&current, "a", "found", &reads).await, "found");
    }
}
