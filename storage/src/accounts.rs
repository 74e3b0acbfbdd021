//! Accounts and their API-key index: bound, checked and cached here, kept by the engine
//! ([`crate::engine::operations::Operations`]).

use std::sync::Arc;

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::engine::operations::{AccountEntry, Accounts, KeyEntry};
use crate::{trees, AccountRecord, CredentialRecord, StorageError, Store};

impl Store {
    /// Reads one account.
    pub async fn account(&self, id: &str) -> Result<Option<AccountRecord>, StorageError> {
        Ok(self.shared_account(id).await?.map(Arc::unwrap_or_clone))
    }

    /// The account `id` if it is kept as last read and no account was written since: what a caller's
    /// every call finds without a lookup in the store.
    pub fn cached_account(&self, id: &str) -> Option<Arc<AccountRecord>> {
        self.current_accounts.cached(id)
    }

    /// Reads one account without copying it: the record is shared until the next account write.
    pub async fn shared_account(
        &self,
        id: &str,
    ) -> Result<Option<Arc<AccountRecord>>, StorageError> {
        self.current_accounts
            .get(id, || async {
                match self.engine().account(id).await? {
                    Some(bytes) => self.account_stored(id, &bytes).map(Some),
                    None => Ok(None),
                }
            })
            .await
    }

    /// The account `stored` under `id`, checked, decoded and opened: once per account write, as what this
    /// answers is kept until the next one.
    fn account_stored(&self, id: &str, stored: &[u8]) -> Result<Arc<AccountRecord>, StorageError> {
        let record = self.unbound(trees::ACCOUNTS, id.as_bytes(), stored)?;
        let decoded = self
            .decoded_accounts
            .get(id.as_bytes(), crate::engine::Bytes::from(record))?;
        Ok(Arc::new(
            self.opened_account(Arc::unwrap_or_clone(decoded))?,
        ))
    }

    /// Every account, in id order.
    pub async fn accounts(&self) -> Result<Vec<AccountRecord>, StorageError> {
        self.engine()
            .accounts()
            .await?
            .into_iter()
            .map(|(id, stored)| self.opened_account(self.stored_account(&id, &stored)?))
            .collect()
    }

    /// The account that issued `api_key`. An index entry or an account without this store's MAC
    /// (written by someone without the master key) names no one: it is refused and logged.
    pub async fn account_by_key(
        &self,
        api_key: &str,
    ) -> Result<Option<AccountRecord>, StorageError> {
        let Some(stored) = self.engine().account_key(api_key).await? else {
            return Ok(None);
        };
        let found = match self.unbound(trees::CREDENTIAL_KEYS, api_key.as_bytes(), &stored) {
            Ok(account_id) => self.account(&String::from_utf8_lossy(account_id)).await,
            Err(e) => Err(e),
        };
        match found {
            Ok(account) => Ok(account),
            Err(StorageError::Unbound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Creates or replaces an account together with its key index, atomically and durably. Fails with
    /// [`StorageError::CredentialKeyTaken`] if one of its keys belongs to another account.
    /// `events` (its `account.change`) are audited in the same transaction.
    pub async fn put_account(
        &self,
        account: &AccountRecord,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        let entry = self.account_entry(account, self.account_bytes(account));
        let engine = self.engine();
        self.current_accounts
            .changed_after(engine.put_account(&entry, events))
            .await
    }

    /// Deletes an account and its keys, with `events` when it existed. Returns whether it existed.
    pub async fn delete_account(
        &self,
        id: &str,
        events: &[NewEvent],
    ) -> Result<bool, StorageError> {
        let engine = self.engine();
        self.current_accounts
            .changed_after(engine.delete_account(id, events))
            .await
    }

    /// Adds a credential to an existing account.
    pub async fn add_credential(
        &self,
        account_id: &str,
        credential: CredentialRecord,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        let change = |current: &[u8]| {
            let mut account = self.stored_account(account_id, current)?;
            account.credentials.push(credential.clone());
            let record = encode(&account);
            Ok(self.account_entry(&account, record))
        };
        let engine = self.engine();
        self.current_accounts
            .changed_after(engine.change_account(account_id, &change, events))
            .await
    }

    /// What the engine keeps of `account`, whose encoded record (its webhook secret sealed) is `record`:
    /// the record and each key's index entry, bound.
    pub(crate) fn account_entry(&self, account: &AccountRecord, record: Vec<u8>) -> AccountEntry {
        let id = account.id.as_bytes();
        AccountEntry {
            id: account.id.clone(),
            record: self.bound(trees::ACCOUNTS, id, &record),
            keys: account
                .credentials
                .iter()
                .map(|credential| KeyEntry {
                    api_key: credential.key.clone(),
                    record: self.bound(trees::CREDENTIAL_KEYS, credential.key.as_bytes(), id),
                })
                .collect(),
        }
    }

    /// The account record `stored` under `id`, as stored (its webhook secret sealed), checked.
    pub(crate) fn stored_account(
        &self,
        id: &str,
        stored: &[u8],
    ) -> Result<AccountRecord, StorageError> {
        decode(self.unbound(trees::ACCOUNTS, id.as_bytes(), stored)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::suite::accounts::account;
    use crate::TestEngine;

    async fn replacing_an_account_moves_its_key_index_with_it(engine: TestEngine) {
        let (_dir, store) = engine.open_temp();
        store
            .put_account(&account("a", &["k1", "k2"]), &[])
            .await
            .unwrap();
        store
            .put_account(&account("a", &["k3"]), &[])
            .await
            .unwrap();
        assert!(store.account_by_key("k1").await.unwrap().is_none());
        assert_eq!(store.account_by_key("k3").await.unwrap().unwrap().id, "a");
    }

    async fn a_key_owned_by_another_account_aborts_the_whole_write(engine: TestEngine) {
        let (_dir, store) = engine.open_temp();
        store
            .put_account(&account("a", &["shared"]), &[])
            .await
            .unwrap();
        let err = store
            .put_account(&account("b", &["fresh", "shared"]), &[])
            .await
            .unwrap_err();
        assert!(matches!(err, StorageError::CredentialKeyTaken));
        assert!(
            store.account("b").await.unwrap().is_none(),
            "no half-created account"
        );
        assert!(
            store.account_by_key("fresh").await.unwrap().is_none(),
            "no half-written index"
        );
    }

    async fn deleting_an_account_removes_its_keys(engine: TestEngine) {
        let (_dir, store) = engine.open_temp();
        store.put_account(&account("a", &["k"]), &[]).await.unwrap();
        assert!(store.delete_account("a", &[]).await.unwrap());
        assert!(store.account_by_key("k").await.unwrap().is_none());
        assert!(!store.delete_account("a", &[]).await.unwrap());
    }

    async fn data_survives_reopening_the_store(engine: TestEngine) {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::StorageConfig::embedded(dir.path()).on(engine.choice());
        {
            let store = Store::open(&config).unwrap();
            store.put_account(&account("a", &["k"]), &[]).await.unwrap();
            store.close().unwrap();
        }
        let store = Store::open(&config).unwrap();
        assert_eq!(
            store.account("a").await.unwrap().unwrap().credentials.len(),
            1
        );
    }

    crate::on_both_engines!(
        replacing_an_account_moves_its_key_index_with_it,
        a_key_owned_by_another_account_aborts_the_whole_write,
        deleting_an_account_removes_its_keys,
        data_survives_reopening_the_store,
    );
}
