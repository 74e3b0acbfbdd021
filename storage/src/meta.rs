//! Process-wide settings kept in the store.

use crate::{StorageError, Store};

const TOKEN_SECRET: &[u8] = b"token_secret";

impl Store {
    /// The bearer-token signing secret, created from `generate` and made durable on first use, so tokens
    /// survive restarts without the operator configuring one.
    pub async fn token_secret_or_init(
        &self,
        generate: impl FnOnce() -> Vec<u8>,
    ) -> Result<Vec<u8>, StorageError> {
        if let Some(existing) = self.meta.get(TOKEN_SECRET)? {
            return Ok(existing.to_vec());
        }
        let fresh = generate();
        // Two concurrent first starts cannot happen (sled locks the directory), but compare-and-swap keeps
        // the first secret if this ever runs twice.
        let stored = match self.meta.compare_and_swap(
            TOKEN_SECRET,
            None as Option<&[u8]>,
            Some(fresh.as_slice()),
        )? {
            Ok(()) => fresh,
            Err(conflict) => conflict.current.map(|v| v.to_vec()).unwrap_or(fresh),
        };
        self.durable().await?;
        Ok(stored)
    }
}

const PROVISIONED: &str = "provisioned:";

impl Store {
    /// The fingerprint of the declaration last provisioned under `key` (e.g. `account:acme`).
    pub fn provisioned_fingerprint(&self, key: &str) -> Result<Option<String>, StorageError> {
        let stored = self.meta.get(format!("{PROVISIONED}{key}"))?;
        Ok(stored.map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Records the fingerprint of a declaration just provisioned.
    pub async fn set_provisioned_fingerprint(
        &self,
        key: &str,
        fingerprint: &str,
    ) -> Result<(), StorageError> {
        self.meta
            .insert(format!("{PROVISIONED}{key}"), fingerprint.as_bytes())?;
        self.durable().await
    }
}
