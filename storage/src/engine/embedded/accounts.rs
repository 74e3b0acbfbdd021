//! Accounts and their key index as two sled trees, written in one transaction with the audit chain.

use sled::transaction::ConflictableTransactionError;

use super::Embedded;
use crate::audit::NewEvent;
use crate::engine::operations::{AccountChange, AccountEntry, Accounts, KeyEntry};
use crate::engine::TxTree;
use crate::{trees, AccountRecord, StorageError};

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

impl Accounts for Embedded<'_> {
    async fn account(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.0.accounts.get_async(id).await?.map(|v| v.to_vec()))
    }

    async fn accounts(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let entries = self.0.accounts.read_prefix([]).await?;
        Ok(entries
            .into_iter()
            .map(|(id, record)| (String::from_utf8_lossy(&id).into_owned(), record.to_vec()))
            .collect())
    }

    async fn account_key(&self, api_key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self
            .0
            .credential_keys
            .get_async(api_key)
            .await?
            .map(|v| v.to_vec()))
    }

    async fn put_account(
        &self,
        account: &AccountEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.write(events, |accounts, keys| self.put(accounts, keys, account))?;
        self.0.durable().await
    }

    async fn change_account(
        &self,
        id: &str,
        change: AccountChange<'_>,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.write(events, |accounts, keys| {
            let Some(current) = accounts.get(id.as_bytes())? else {
                return Err(ConflictableTransactionError::Abort(
                    StorageError::AccountMissing(id.to_owned()),
                ));
            };
            let changed = change(&current).map_err(ConflictableTransactionError::Abort)?;
            self.put(accounts, keys, &changed)
        })?;
        self.0.durable().await
    }

    async fn delete_account(&self, id: &str, events: &[NewEvent]) -> Result<bool, StorageError> {
        let deleted = self.write(events, |accounts, keys| {
            let Some(previous) = accounts.remove(id.as_bytes())? else {
                // Nothing changed, so nothing is audited either.
                return Err(ConflictableTransactionError::Abort(
                    StorageError::AccountMissing(id.to_owned()),
                ));
            };
            for credential in &self.stored_account(id, &previous)?.credentials {
                keys.remove(credential.key.as_bytes())?;
            }
            Ok(())
        });
        match deleted {
            Ok(()) => {
                self.0.durable().await?;
                Ok(true)
            }
            Err(StorageError::AccountMissing(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    async fn rewrite_account(&self, id: &str, record: Vec<u8>) -> Result<(), StorageError> {
        let _open = self.0.group.gate.read().expect("write gate");
        self.0.accounts.insert(id, record)?;
        Ok(())
    }
}

impl Embedded<'_> {
    /// One transaction over the accounts and their key index, audited with `events`.
    fn write<T>(
        &self,
        events: &[NewEvent],
        body: impl Fn(&TxTree, &TxTree) -> TxResult<T>,
    ) -> Result<T, StorageError> {
        let store = self.0;
        store.audited(
            &[&store.accounts, &store.credential_keys],
            events,
            |trees| body(&trees[0], &trees[1]),
        )
    }

    /// Writes `account` in place of whatever its id held, its previous keys released.
    fn put(&self, accounts: &TxTree, keys: &TxTree, account: &AccountEntry) -> TxResult<()> {
        if let Some(previous) = accounts.get(account.id.as_bytes())? {
            for credential in &self.stored_account(&account.id, &previous)?.credentials {
                keys.remove(credential.key.as_bytes())?;
            }
        }
        for key in &account.keys {
            self.claim(keys, key, &account.id)?;
        }
        accounts.insert(account.id.as_bytes(), account.record.clone())?;
        Ok(())
    }

    /// Claims `key` for `account_id`; taken when another account holds it.
    fn claim(&self, keys: &TxTree, key: &KeyEntry, account_id: &str) -> TxResult<()> {
        if let Some(stored) = keys.get(key.api_key.as_bytes())? {
            let owner = self
                .0
                .unbound(trees::CREDENTIAL_KEYS, key.api_key.as_bytes(), &stored)
                .map_err(ConflictableTransactionError::Abort)?;
            if owner != account_id.as_bytes() {
                return Err(ConflictableTransactionError::Abort(
                    StorageError::CredentialKeyTaken,
                ));
            }
        }
        keys.insert(key.api_key.as_bytes(), key.record.clone())?;
        Ok(())
    }

    /// The account record `stored` under `id`, as stored (its webhook secret sealed), checked.
    fn stored_account(&self, id: &str, stored: &[u8]) -> TxResult<AccountRecord> {
        self.0
            .stored_account(id, stored)
            .map_err(ConflictableTransactionError::Abort)
    }
}
