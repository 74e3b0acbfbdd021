//! Accounts and the index of their API keys.

use super::{on_engine, Engine};
use crate::audit::NewEvent;
use crate::StorageError;

/// An account as an engine keeps it: its bound record and the bound entries of its key index.
pub(crate) struct AccountEntry {
    pub(crate) id: String,
    pub(crate) record: Vec<u8>,
    pub(crate) keys: Vec<KeyEntry>,
}

/// One API key of an account: the key and its bound index entry (the account's id under the key's MAC).
pub(crate) struct KeyEntry {
    pub(crate) api_key: String,
    pub(crate) record: Vec<u8>,
}

/// How an account changes, given its bound record as stored: checked and re-bound by the store.
pub(crate) type AccountChange<'a> =
    &'a (dyn Fn(&[u8]) -> Result<AccountEntry, StorageError> + Sync);

/// What every engine does with accounts.
pub(crate) trait Accounts {
    /// The bound record of account `id`.
    async fn account(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError>;

    /// Every account's id and bound record, in id order.
    async fn accounts(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError>;

    /// The bound index entry of `api_key`: the id of the account that holds it.
    async fn account_key(&self, api_key: &str) -> Result<Option<Vec<u8>>, StorageError>;

    /// Creates or replaces an account: the keys it held go, its keys are claimed. Fails with
    /// [`StorageError::CredentialKeyTaken`], writing nothing, when another account holds one.
    async fn put_account(
        &self,
        account: &AccountEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError>;

    /// Replaces account `id` with what `change` makes of its record, as [`Operations::put_account`] does.
    /// [`StorageError::AccountMissing`] when there is none.
    async fn change_account(
        &self,
        id: &str,
        change: AccountChange<'_>,
        events: &[NewEvent],
    ) -> Result<(), StorageError>;

    /// Deletes account `id` and its keys; `false` (and nothing audited) when there was none.
    async fn delete_account(&self, id: &str, events: &[NewEvent]) -> Result<bool, StorageError>;

    /// Rewrites the record of account `id`, its keys unchanged, unaudited: a layout conversion of
    /// `switchboard migrate`, which reports what it did.
    async fn rewrite_account(&self, id: &str, record: Vec<u8>) -> Result<(), StorageError>;
}

impl Accounts for Engine<'_> {
    async fn account(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.account(id))
    }

    async fn accounts(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        on_engine!(self, e => e.accounts())
    }

    async fn account_key(&self, api_key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.account_key(api_key))
    }

    async fn put_account(
        &self,
        account: &AccountEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        on_engine!(self, e => e.put_account(account, events))
    }

    async fn change_account(
        &self,
        id: &str,
        change: AccountChange<'_>,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        on_engine!(self, e => e.change_account(id, change, events))
    }

    async fn delete_account(&self, id: &str, events: &[NewEvent]) -> Result<bool, StorageError> {
        on_engine!(self, e => e.delete_account(id, events))
    }

    async fn rewrite_account(&self, id: &str, record: Vec<u8>) -> Result<(), StorageError> {
        on_engine!(self, e => e.rewrite_account(id, record))
    }
}
