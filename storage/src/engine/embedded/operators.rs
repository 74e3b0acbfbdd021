//! Operators and their token index as two sled trees, written in one transaction with the audit chain.

use std::sync::Mutex;

use sled::transaction::ConflictableTransactionError;

use super::Embedded;
use crate::audit::NewEvent;
use crate::engine::operations::{
    named_in, OperatorEntry, Operators, TokenEntry, TokenHolder, TokenOf,
};
use crate::StorageError;

/// Held from the check of a new operator's name to the write that takes it, so two creations of one name
/// in different cases cannot both pass the check: a sled store is one process's alone (sled locks its
/// files), so a lock of the process is enough.
static NAMING: Mutex<()> = Mutex::new(());

impl Operators for Embedded<'_> {
    async fn operators(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let entries = self.0.operators.read_prefix([]).await?;
        Ok(entries
            .into_iter()
            .map(|(name, record)| (String::from_utf8_lossy(&name).into_owned(), record.to_vec()))
            .collect())
    }

    async fn operator_by_token(&self, digest: &str) -> Result<Option<TokenHolder>, StorageError> {
        let Some(token) = self.0.operator_tokens.get_async(digest).await? else {
            return Ok(None);
        };
        let operator = self.0.operators.get_async(named_in(&token)).await?;
        Ok(Some(TokenHolder {
            token: token.to_vec(),
            operator: operator.map(|record| record.to_vec()),
        }))
    }

    async fn create_operator(
        &self,
        operator: &OperatorEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        {
            let _naming = NAMING
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            // By the names the tree is keyed by, not the records: a record that fails its MAC (one
            // written without the master key) must not keep every other operator from being created.
            for entry in self.0.operators.iter() {
                let (name, _) = entry?;
                let name = String::from_utf8_lossy(&name);
                if name.eq_ignore_ascii_case(&operator.name) {
                    return Err(StorageError::OperatorExists(name.into_owned()));
                }
            }
            let store = self.0;
            let name = operator.name.as_bytes();
            let token = &operator.token;
            store.audited(
                &[&store.operators, &store.operator_tokens],
                events,
                |trees| {
                    let (operators, tokens) = (&trees[0], &trees[1]);
                    if operators.get(name)?.is_some() {
                        return Err(ConflictableTransactionError::Abort(
                            StorageError::OperatorExists(operator.name.clone()),
                        ));
                    }
                    operators.insert(name, operator.record.clone())?;
                    tokens.insert(token.digest.as_bytes(), token.record.clone())?;
                    Ok(())
                },
            )?;
        }
        self.0.durable().await
    }

    async fn delete_operator(
        &self,
        name: &str,
        token_of: TokenOf<'_>,
        events: &[NewEvent],
    ) -> Result<bool, StorageError> {
        let store = self.0;
        let deleted = store.audited(
            &[&store.operators, &store.operator_tokens],
            events,
            |trees| {
                let (operators, tokens) = (&trees[0], &trees[1]);
                let Some(record) = operators.remove(name.as_bytes())? else {
                    // Nothing changed: the event is not kept either.
                    return Err(ConflictableTransactionError::Abort(
                        StorageError::OperatorMissing,
                    ));
                };
                let digest = token_of(&record).map_err(ConflictableTransactionError::Abort)?;
                tokens.remove(digest.as_bytes())?;
                Ok(())
            },
        );
        match deleted {
            Ok(()) => {
                store.durable().await?;
                Ok(true)
            }
            Err(StorageError::OperatorMissing) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn operator_tokens(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let entries = self.0.operator_tokens.read_prefix([]).await?;
        Ok(entries
            .into_iter()
            .map(|(digest, record)| {
                (
                    String::from_utf8_lossy(&digest).into_owned(),
                    record.to_vec(),
                )
            })
            .collect())
    }

    async fn rewrite_operator(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError> {
        let _open = self.0.group.gate.read().expect("write gate");
        self.0.operators.insert(name, record)?;
        Ok(())
    }

    async fn rewrite_operator_token(&self, token: &TokenEntry) -> Result<(), StorageError> {
        let _open = self.0.group.gate.read().expect("write gate");
        self.0
            .operator_tokens
            .insert(&token.digest, token.record.clone())?;
        Ok(())
    }
}
