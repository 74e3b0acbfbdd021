//! The audited transaction over trees: a change and its audit events written together, for the families
//! still written against [`crate::engine::Tree`]. Families behind [`crate::engine::operations::Operations`]
//! append their events in the engine's own transactions.

use std::cell::RefCell;

use sled::transaction::ConflictableTransactionError;

use crate::audit::{self, NewEvent};
use crate::engine::TxTree;
use crate::{StorageError, Store};

impl Store {
    /// Runs `body` over `trees` in one transaction that also appends `events` to the audit log, so the
    /// change and its record are written together or not at all. Not durable until [`Store::durable`].
    pub(crate) fn audited<T>(
        &self,
        trees: &[&crate::engine::Tree],
        events: &[NewEvent],
        body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<StorageError>>,
    ) -> Result<T, StorageError> {
        self.audited_if_changed(trees, events, |views| Ok((body(views)?, true)))
    }

    /// [`Store::audited`] for a body that may change nothing (it answers whether it did): `events` are
    /// appended only with a change.
    pub(crate) fn audited_if_changed<T>(
        &self,
        trees: &[&crate::engine::Tree],
        events: &[NewEvent],
        body: impl Fn(&[TxTree]) -> Result<(T, bool), ConflictableTransactionError<StorageError>>,
    ) -> Result<T, StorageError> {
        let _open = self.group.gate.read().expect("write gate");
        let mut all: Vec<&crate::engine::Tree> = trees.to_vec();
        all.push(&self.audit);
        // Held until the transaction has committed, so the chain grows one transaction at a time.
        let mut head = self.group.chain.head();
        let appended = RefCell::new(None);
        let value = crate::engine::transaction(&all, |views| {
            let (audit_view, rest) = views.split_last().expect("the audit tree is last");
            let (value, changed) = body(rest)?;
            *appended.borrow_mut() = if changed {
                Some(audit::append(
                    audit_view,
                    &self.group.chain,
                    &head,
                    events.iter().cloned(),
                )?)
            } else {
                None
            };
            Ok(value)
        })?;
        if let Some(next) = appended.take() {
            *head = next;
        }
        Ok(value)
    }
}
