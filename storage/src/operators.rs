//! Operators and the index from a token's digest to its operator. Every change is audited in the
//! transaction that makes it.

use std::cell::RefCell;
use std::sync::Mutex;

use crate::engine::TxTree;
use sled::transaction::ConflictableTransactionError;

use crate::audit::{self, NewEvent};
use crate::codec::{decode, encode};
use crate::{trees, OperatorRecord, StorageError, Store};

/// Held from the check of a new operator's name to the write that takes it, so two creations of one name
/// in different cases cannot both pass the check. A lock of the process is enough: one process writes a
/// store (sled locks its files; on PostgreSQL only the holder of the orchestrator lease serves the admin
/// API, the other nodes forward to it).
static NAMING: Mutex<()> = Mutex::new(());

impl Store {
    /// Every operator, by name.
    pub async fn operators(&self) -> Result<Vec<OperatorRecord>, StorageError> {
        let mut operators = Vec::new();
        for (name, stored) in self.operators.read_prefix([]).await? {
            // A record without this store's MAC names no one, here as at sign-in (`unbound` logs it).
            match self.unbound(trees::OPERATORS, &name, &stored) {
                Ok(bytes) => operators.push(decode(bytes)?),
                Err(StorageError::Unbound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(operators)
    }

    /// The operator whose token has the SHA-256 `digest` (hex). An index entry or a record without this
    /// store's MAC (written by someone without the master key) names no one: it is refused and logged.
    pub async fn operator_by_token_digest(
        &self,
        digest: &str,
    ) -> Result<Option<OperatorRecord>, StorageError> {
        let Some(stored) = self.operator_tokens.get_async(digest).await? else {
            return Ok(None);
        };
        let name = match self.unbound(trees::OPERATOR_TOKENS, digest.as_bytes(), &stored) {
            Ok(name) => name,
            Err(StorageError::Unbound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(stored) = self.operators.get_async(name).await? else {
            return Ok(None);
        };
        let record: OperatorRecord = match self.unbound(trees::OPERATORS, name, &stored) {
            Ok(record) => decode(record)?,
            Err(StorageError::Unbound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        // Both halves are bound, and must name each other.
        Ok((record.token_digest == digest).then_some(record))
    }

    /// Creates `operator` with `event`, durably; [`StorageError::OperatorExists`] (with the name as stored)
    /// when the name is taken in any case: the audit log names operators by name, so `Alice` must not pass
    /// for `alice`.
    pub async fn create_operator(
        &self,
        operator: &OperatorRecord,
        event: NewEvent,
    ) -> Result<(), StorageError> {
        {
            let _naming = NAMING
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            // By the names the tree is keyed by, not the records: a record that fails its MAC (one
            // written without the master key) must not keep every other operator from being created.
            for entry in self.operators.iter() {
                let (name, _) = entry?;
                let name = String::from_utf8_lossy(&name);
                if name.eq_ignore_ascii_case(&operator.name) {
                    return Err(StorageError::OperatorExists(name.into_owned()));
                }
            }
            self.create_operator_record(operator, event)?;
        }
        self.durable().await
    }

    /// Writes `operator` and its token's index entry with `event`; refuses a name taken in this very case.
    fn create_operator_record(
        &self,
        operator: &OperatorRecord,
        event: NewEvent,
    ) -> Result<(), StorageError> {
        let name = operator.name.as_bytes();
        let digest = operator.token_digest.as_bytes();
        let record = self.bound(trees::OPERATORS, name, &encode(operator));
        let index = self.bound(trees::OPERATOR_TOKENS, digest, name);
        self.audited(
            &[&self.operators, &self.operator_tokens],
            &[event],
            |trees| {
                let (operators, tokens) = (&trees[0], &trees[1]);
                if operators.get(name)?.is_some() {
                    return Err(ConflictableTransactionError::Abort(
                        StorageError::OperatorExists(operator.name.clone()),
                    ));
                }
                operators.insert(name, record.clone())?;
                tokens.insert(digest, index.clone())?;
                Ok(())
            },
        )
    }

    /// Deletes the operator `name` and its token with `event`, durably; answers whether there was one.
    pub async fn delete_operator(&self, name: &str, event: NewEvent) -> Result<bool, StorageError> {
        let deleted = self.audited(
            &[&self.operators, &self.operator_tokens],
            &[event],
            |trees| {
                let (operators, tokens) = (&trees[0], &trees[1]);
                let Some(bytes) = operators.remove(name.as_bytes())? else {
                    // Nothing changed: the event is not kept either.
                    return Err(ConflictableTransactionError::Abort(
                        StorageError::OperatorMissing,
                    ));
                };
                let record: OperatorRecord = self
                    .unbound(trees::OPERATORS, name.as_bytes(), &bytes)
                    .and_then(decode)
                    .map_err(ConflictableTransactionError::Abort)?;
                tokens.remove(record.token_digest.as_bytes())?;
                Ok(())
            },
        );
        match deleted {
            Ok(()) => {
                self.durable().await?;
                Ok(true)
            }
            Err(StorageError::OperatorMissing) => Ok(false),
            Err(e) => Err(e),
        }
    }

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
