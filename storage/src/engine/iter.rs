//! Iteration over a range of a tree, in key order either way.

use super::postgres::PgIter;
use super::Bytes;

/// Pairs of a range, read as they are consumed.
pub(crate) enum Iter {
    Sled(sled::Iter),
    Postgres(PgIter),
}

impl Iter {
    /// Only the keys.
    pub(crate) fn keys(self) -> impl DoubleEndedIterator<Item = sled::Result<Bytes>> {
        self.map(|pair| pair.map(|(key, _)| key))
    }

    /// Only the values.
    pub(crate) fn values(self) -> impl DoubleEndedIterator<Item = sled::Result<Bytes>> {
        self.map(|pair| pair.map(|(_, value)| value))
    }
}

impl Iterator for Iter {
    type Item = sled::Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Sled(iter) => iter.next(),
            Iter::Postgres(iter) => iter.next(),
        }
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Sled(iter) => iter.next_back(),
            Iter::Postgres(iter) => iter.next_back(),
        }
    }
}
