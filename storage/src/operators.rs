//! Operators and the index from a token's digest to its operator: bound and checked here, kept by the
//! engine ([`crate::engine::operations::Operators`]), every change audited in the transaction that makes
//! it.

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::engine::operations::{OperatorEntry, Operators, TokenEntry};
use crate::{trees, OperatorRecord, StorageError, Store};

impl Store {
    /// Every operator, by name.
    pub async fn operators(&self) -> Result<Vec<OperatorRecord>, StorageError> {
        let mut operators = Vec::new();
        for (name, stored) in self.engine().operators().await? {
            // A record without this store's MAC names no one, here as at sign-in (`unbound` logs it).
            match self.unbound(trees::OPERATORS, name.as_bytes(), &stored) {
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
        let Some(found) = self.engine().operator_by_token(digest).await? else {
            return Ok(None);
        };
        let name = match self.unbound(trees::OPERATOR_TOKENS, digest.as_bytes(), &found.token) {
            Ok(name) => name,
            Err(StorageError::Unbound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(stored) = found.operator else {
            return Ok(None);
        };
        // Bound under the name the entry names: a record of another operator does not verify here.
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
        let entry = self.operator_entry(operator);
        self.engine().create_operator(&entry, &[event]).await
    }

    /// Deletes the operator `name` and its token with `event`, durably; answers whether there was one.
    pub async fn delete_operator(&self, name: &str, event: NewEvent) -> Result<bool, StorageError> {
        let token_of = |stored: &[u8]| {
            let record: OperatorRecord =
                decode(self.unbound(trees::OPERATORS, name.as_bytes(), stored)?)?;
            Ok(record.token_digest)
        };
        self.engine()
            .delete_operator(name, &token_of, &[event])
            .await
    }

    /// `operator` bound as an engine keeps it, with its token's index entry.
    pub(crate) fn operator_entry(&self, operator: &OperatorRecord) -> OperatorEntry {
        let name = operator.name.as_bytes();
        OperatorEntry {
            name: operator.name.clone(),
            record: self.bound(trees::OPERATORS, name, &encode(operator)),
            token: TokenEntry {
                digest: operator.token_digest.clone(),
                operator: operator.name.clone(),
                record: self.bound(
                    trees::OPERATOR_TOKENS,
                    operator.token_digest.as_bytes(),
                    name,
                ),
            },
        }
    }
}
