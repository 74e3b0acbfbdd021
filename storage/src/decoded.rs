//! Decoded copies of hot records (accounts, schema versions, and the requests read most recently), so a
//! read that finds the same bytes in the tree skips decoding them again.
//!
//! An entry is valid exactly while the tree still holds the bytes it was decoded from: every read fetches
//! the value from sled (a page-cache hit) and compares. So no write path has to remember to invalidate, and
//! a record changed by any means is decoded afresh. A write path may also hand over what it wrote
//! ([`Decoded::put`]) and take a record out to change it ([`Decoded::take`]); an entry for bytes a
//! transaction then did not commit is never matched. Bounded: each map is cleared when it reaches its
//! capacity ([`CAPACITY`] for operator-provisioned data, far fewer for requests).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::engine::Bytes;

use crate::codec::{Record, Storing};
use crate::StorageError;

/// Entries kept before the map starts over.
const CAPACITY: usize = 4096;

pub(crate) struct Decoded<R> {
    entries: RwLock<HashMap<Bytes, (Bytes, Arc<R>), foldhash::fast::RandomState>>,
    capacity: usize,
    /// How the tree's values are stored (sealed for request data).
    storing: Storing,
}

impl<R: Record> Decoded<R> {
    pub(crate) fn new() -> Decoded<R> {
        Decoded::with_capacity(CAPACITY, Storing::Plain)
    }

    /// A map that starts over at `capacity` entries, over a tree whose values are stored as `storing` says.
    pub(crate) fn with_capacity(capacity: usize, storing: Storing) -> Decoded<R> {
        Decoded {
            entries: RwLock::new(HashMap::default()),
            capacity,
            storing,
        }
    }

    /// The record stored under `key`, decoded from `bytes` unless those bytes were decoded before.
    pub(crate) fn get(&self, key: &[u8], bytes: Bytes) -> Result<Arc<R>, StorageError> {
        if let Some(record) = self.seen(key, &bytes) {
            return Ok(record);
        }
        let record = Arc::new(self.storing.read::<R>(key, &bytes)?);
        self.put(key, bytes, Arc::clone(&record));
        Ok(record)
    }

    /// [`Decoded::get`] for a write about to replace the record: a fresh decode is not remembered, since
    /// the write puts what it stores instead.
    pub(crate) fn peek(&self, key: &[u8], bytes: &Bytes) -> Result<Arc<R>, StorageError> {
        match self.seen(key, bytes) {
            Some(record) => Ok(record),
            None => Ok(Arc::new(self.storing.read::<R>(key, bytes)?)),
        }
    }

    /// The record stored under `key` as a value of its own, for a write that changes it: the decoded copy
    /// is taken out of the map when it matches `bytes` (copied only if a reader still holds it), else
    /// `bytes` are decoded.
    pub(crate) fn take(&self, key: &[u8], bytes: &Bytes) -> Result<R, StorageError>
    where
        R: Clone,
    {
        let taken = {
            let mut entries = self.entries.write().expect("decoded lock");
            match entries.get(key) {
                Some((seen, _)) if same(seen, bytes) => {
                    entries.remove(key).map(|(_, record)| record)
                }
                _ => None,
            }
        };
        match taken {
            Some(record) => Ok(Arc::unwrap_or_clone(record)),
            None => self.storing.read(key, bytes),
        }
    }

    /// Records that `record` is what `bytes`, just written under `key`, decode to: the next read of those
    /// bytes (or the next write over them) skips decoding.
    pub(crate) fn put(&self, key: &[u8], bytes: Bytes, record: Arc<R>) {
        let mut entries = self.entries.write().expect("decoded lock");
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(Bytes::from(key), (bytes, record));
    }

    fn seen(&self, key: &[u8], bytes: &Bytes) -> Option<Arc<R>> {
        let entries = self.entries.read().expect("decoded lock");
        let (seen, record) = entries.get(key)?;
        same(seen, bytes).then(|| Arc::clone(record))
    }
}

/// Whether `seen` and `read` hold the same bytes. sled hands out clones of the value it holds, so an
/// unchanged record is usually the very allocation kept in `seen`; that allocation stays alive while
/// `seen` holds it, so no other value can sit at its address. Otherwise (a page read back from disk) the
/// bytes are compared.
fn same(seen: &Bytes, read: &Bytes) -> bool {
    (seen.as_ptr() == read.as_ptr() && seen.len() == read.len()) || seen == read
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::codec::encode;

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
    }

    impl Record for Sample {
        const KIND: &'static str = "sample";
        const VERSION: u8 = 1;
    }

    fn bytes(name: &str) -> Bytes {
        Bytes::from(encode(&Sample { name: name.into() }))
    }

    #[test]
    fn unchanged_bytes_reuse_the_decoded_record_and_changed_bytes_are_decoded_again() {
        let cache = Decoded::<Sample>::new();
        let a = cache.get(b"key", bytes("first")).unwrap();
        let b = cache.get(b"key", bytes("first")).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(cache.get(b"key", bytes("second")).unwrap().name, "second");
        assert_eq!(cache.get(b"other", bytes("third")).unwrap().name, "third");
    }

    #[test]
    fn a_write_takes_the_matching_copy_and_hands_over_what_it_wrote() {
        let cache = Decoded::<Sample>::new();
        let first = bytes("first");
        cache.get(b"key", first.clone()).unwrap();
        let mut taken = cache.take(b"key", &first).unwrap();
        assert_eq!(taken.name, "first");
        assert!(
            cache.entries.read().unwrap().is_empty(),
            "taken out, not copied"
        );
        taken.name = "second".into();
        let written = bytes("second");
        let record = Arc::new(taken);
        cache.put(b"key", written.clone(), Arc::clone(&record));
        assert!(Arc::ptr_eq(&record, &cache.get(b"key", written).unwrap()));
        // Bytes the map has not seen (a transaction that did not commit left the old ones) are decoded.
        assert_eq!(cache.take(b"key", &first).unwrap().name, "first");
    }

    #[test]
    fn a_full_map_starts_over() {
        let cache = Decoded::<Sample>::with_capacity(2, Storing::Plain);
        let a = cache.get(b"a", bytes("a")).unwrap();
        cache.get(b"b", bytes("b")).unwrap();
        cache.get(b"c", bytes("c")).unwrap();
        assert_eq!(cache.entries.read().unwrap().len(), 1);
        assert!(!Arc::ptr_eq(&a, &cache.get(b"a", bytes("a")).unwrap()));
    }
}
