//! A bounded memo for pure, repeated computations on the request path (token signatures, payer-name
//! verdicts, phone-number checks): remembered answers up to a fixed count, then it starts over. Starting
//! over keeps memory bounded without the bookkeeping of an LRU; the hot keys come straight back.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;

/// How many answers each memo keeps before it starts over.
pub const MEMO_CAPACITY: usize = 4096;

/// Remembered answers of one pure function.
pub struct Memo<K, V> {
    // foldhash, seeded per process: every read hashes its bearer token (hundreds of bytes) here, and
    // SipHash took a percent of a read. A memo that starts over at a few thousand keys bounds what
    // colliding keys could cost.
    answers: Mutex<HashMap<K, V, foldhash::fast::RandomState>>,
    capacity: usize,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// An empty memo of [`MEMO_CAPACITY`] answers.
    pub fn new() -> Memo<K, V> {
        Memo::with_capacity(MEMO_CAPACITY)
    }

    /// An empty memo of `capacity` answers.
    pub fn with_capacity(capacity: usize) -> Memo<K, V> {
        Memo {
            answers: Mutex::new(HashMap::default()),
            capacity,
        }
    }

    /// The remembered answer for `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.answers.lock().expect("memo lock").get(key).cloned()
    }

    /// Remembers `value` for `key`, first forgetting everything if the memo is full.
    pub fn remember(&self, key: K, value: V) {
        let mut answers = self.answers.lock().expect("memo lock");
        if answers.len() >= self.capacity {
            answers.clear();
        }
        answers.insert(key, value);
    }

    /// The answer for `key`, computed by `compute` when it is not remembered. The lock is not held while
    /// computing, so two callers may compute the same answer once each.
    pub fn get_or_compute(&self, key: K, compute: impl FnOnce(&K) -> V) -> V {
        if let Some(value) = self.get(&key) {
            return value;
        }
        let value = compute(&key);
        self.remember(key, value.clone());
        value
    }

    /// How many answers are remembered.
    pub fn len(&self) -> usize {
        self.answers.lock().expect("memo lock").len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Eq + Hash, V: Clone> Default for Memo<K, V> {
    fn default() -> Self {
        Memo::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_answer_is_not_computed_again() {
        let memo: Memo<String, usize> = Memo::new();
        assert_eq!(memo.get_or_compute("abc".into(), |k| k.len()), 3);
        assert_eq!(
            memo.get_or_compute("abc".into(), |_| panic!("computed twice")),
            3
        );
        assert_eq!(memo.get("abc"), Some(3));
    }

    #[test]
    fn a_full_memo_starts_over_and_never_exceeds_its_capacity() {
        let memo: Memo<u32, u32> = Memo::with_capacity(8);
        for key in 0..8 {
            memo.remember(key, key);
        }
        assert_eq!(memo.len(), 8);
        memo.remember(8, 8);
        assert_eq!(memo.len(), 1, "the ninth answer starts it over");
        assert_eq!(memo.get(&8), Some(8));
        assert_eq!(memo.get(&0), None);
        for key in 0..1000 {
            memo.remember(key, key);
            assert!(memo.len() <= 8);
        }
    }
}
