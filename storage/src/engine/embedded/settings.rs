//! Settings as the sled tree `meta`, keyed by their names. Written one key at a time, outside the audit
//! chain: no setting is audited.

use super::Embedded;
use crate::engine::operations::{ClockMove, Settings, MANUAL_CLOCK, PROVISIONED, TOKEN_SECRET};
use crate::StorageError;

impl Settings for Embedded<'_> {
    async fn token_secret(&self) -> Result<Option<Vec<u8>>, StorageError> {
        self.setting(TOKEN_SECRET).await
    }

    async fn keep_token_secret(&self, sealed: Vec<u8>) -> Result<Vec<u8>, StorageError> {
        let open = self.0.group.gate.read().expect("write gate");
        let kept = match self.0.meta.compare_and_swap(
            TOKEN_SECRET,
            None as Option<&[u8]>,
            Some(sealed.as_slice()),
        )? {
            Ok(()) => sealed,
            Err(conflict) => conflict.current.map_or(sealed, |current| current.to_vec()),
        };
        drop(open);
        self.0.durable().await?;
        Ok(kept)
    }

    async fn manual_clock(&self) -> Result<Option<Vec<u8>>, StorageError> {
        self.setting(MANUAL_CLOCK).await
    }

    async fn move_manual_clock(&self, moved: ClockMove<'_>) -> Result<(), StorageError> {
        {
            let _open = self.0.group.gate.read().expect("write gate");
            self.0
                .meta
                .update_and_fetch(MANUAL_CLOCK, |stored| Some(moved(stored)))?;
        }
        self.0.durable().await
    }

    async fn provisioned(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.setting(&format!("{PROVISIONED}{key}")).await
    }

    async fn set_provisioned(&self, key: &str, record: Vec<u8>) -> Result<(), StorageError> {
        {
            let _open = self.0.group.gate.read().expect("write gate");
            self.0.meta.insert(format!("{PROVISIONED}{key}"), record)?;
        }
        self.0.durable().await
    }

    async fn settings(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let entries = self.0.meta.read_prefix([]).await?;
        Ok(entries
            .into_iter()
            .map(|(name, value)| (String::from_utf8_lossy(&name).into_owned(), value.to_vec()))
            .collect())
    }

    async fn rewrite_setting(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError> {
        let _open = self.0.group.gate.read().expect("write gate");
        self.0.meta.insert(name, record)?;
        Ok(())
    }
}

impl Embedded<'_> {
    async fn setting(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.0.meta.get_async(name).await?.map(|v| v.to_vec()))
    }
}
