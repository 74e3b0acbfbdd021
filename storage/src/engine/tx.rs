//! Transactions across trees of one engine, and a tree as a transaction's body sees it.

use sled::transaction::{
    ConflictableTransactionError, TransactionError, TransactionalTree, UnabortableTransactionError,
};
use sled::Transactional;

use super::{postgres, Bytes, Tree};

/// A tree inside a transaction.
#[derive(Clone)]
pub(crate) enum TxTree {
    Sled(TransactionalTree),
    Postgres(postgres::PgTxTree),
}

/// What a transaction's read or write may fail with: a conflict (the body runs again) or the engine.
pub(crate) type TxResult<T> = Result<T, UnabortableTransactionError>;

impl TxTree {
    pub(crate) fn get(&self, key: impl AsRef<[u8]>) -> TxResult<Option<Bytes>> {
        match self {
            TxTree::Sled(tree) => tree.get(key),
            TxTree::Postgres(tree) => tree.get(key.as_ref()),
        }
    }

    /// Announces that the transaction will read `key`, so [`TxTree::fetch_wanted`] reads it ahead with
    /// the others. sled reads from memory and has nothing to gain.
    pub(crate) fn want(&self, key: impl AsRef<[u8]>) {
        if let TxTree::Postgres(tree) = self {
            tree.want(key.as_ref());
        }
    }

    /// Reads ahead every key the transaction wanted so far, in all of its trees, at once.
    pub(crate) fn fetch_wanted(&self) -> TxResult<()> {
        match self {
            TxTree::Sled(_) => Ok(()),
            TxTree::Postgres(tree) => tree.fetch_wanted(),
        }
    }

    pub(crate) fn insert(
        &self,
        key: impl AsRef<[u8]> + Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> TxResult<Option<Bytes>> {
        match self {
            TxTree::Sled(tree) => tree.insert(key, value),
            TxTree::Postgres(tree) => tree.insert(key.as_ref(), value.into()),
        }
    }

    /// [`TxTree::insert`] without the value it replaces: on PostgreSQL the write is sent with the
    /// transaction's others, without a read of its own.
    pub(crate) fn put(
        &self,
        key: impl AsRef<[u8]> + Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> TxResult<()> {
        match self {
            TxTree::Sled(tree) => tree.insert(key, value).map(drop),
            TxTree::Postgres(tree) => {
                tree.put(key.as_ref(), value.into());
                Ok(())
            }
        }
    }

    pub(crate) fn remove(&self, key: impl AsRef<[u8]> + Into<Bytes>) -> TxResult<Option<Bytes>> {
        match self {
            TxTree::Sled(tree) => tree.remove(key),
            TxTree::Postgres(tree) => tree.remove(key.as_ref()),
        }
    }
}

/// Runs `body` in one transaction over `trees` (all of one engine), from scratch again whenever the engine
/// reports a conflict; its writes are visible together or not at all.
pub(crate) fn transaction<T, E>(
    trees: &[&Tree],
    body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<E>>,
) -> Result<T, TransactionError<E>> {
    match trees.first() {
        Some(Tree::Postgres(first)) => {
            let names: Vec<&str> = trees
                .iter()
                .map(|tree| match tree {
                    Tree::Postgres(tree) => tree.name(),
                    Tree::Sled(_) => unreachable!("a transaction spans one engine"),
                })
                .collect();
            first.pg().transaction(&names, body)
        }
        _ => {
            let sled_trees: Vec<&sled::Tree> = trees
                .iter()
                .map(|tree| match tree {
                    Tree::Sled(tree) => tree,
                    Tree::Postgres(_) => unreachable!("a transaction spans one engine"),
                })
                .collect();
            sled_trees.as_slice().transaction(|views| {
                let views: Vec<TxTree> = views.iter().cloned().map(TxTree::Sled).collect();
                body(&views)
            })
        }
    }
}
