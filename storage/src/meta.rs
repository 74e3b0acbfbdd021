//! Process-wide settings kept in the store: sealed or bound here, kept by the engine
//! ([`crate::engine::operations::Settings`]).

use chrono::{DateTime, Utc};

use crate::engine::operations::{self, Settings};
use crate::seal::Sealed;
use crate::{trees, StorageError, Store};

pub(crate) const TOKEN_SECRET: &[u8] = operations::TOKEN_SECRET.as_bytes();

impl Store {
    /// The bearer-token signing secret as stored, `None` until a first start made it: what a node that
    /// writes nothing (a standby) verifies and issues tokens with.
    pub async fn token_secret(&self) -> Result<Option<Vec<u8>>, StorageError> {
        match self.engine().token_secret().await? {
            Some(existing) => self
                .sealer
                .open(Sealed::Meta, TOKEN_SECRET, &existing)
                .map(Some),
            None => Ok(None),
        }
    }

    /// The bearer-token signing secret, created from `generate` and made durable on first use, so tokens
    /// survive restarts without the operator configuring one.
    pub async fn token_secret_or_init(
        &self,
        generate: impl FnOnce() -> Vec<u8>,
    ) -> Result<Vec<u8>, StorageError> {
        if let Some(existing) = self.token_secret().await? {
            return Ok(existing);
        }
        // Sealed: whoever reads the secret off a disk could mint tokens for any account.
        let sealed = self.sealer.seal(Sealed::Meta, TOKEN_SECRET, &generate());
        // Two first starts at once keep the first secret stored: every node signs with the same one.
        let kept = self.engine().keep_token_secret(sealed).await?;
        self.sealer.open(Sealed::Meta, TOKEN_SECRET, &kept)
    }
}

impl Store {
    /// The fingerprint of the declaration last provisioned under `key` (e.g. `account:acme`).
    pub async fn provisioned_fingerprint(&self, key: &str) -> Result<Option<String>, StorageError> {
        let Some(stored) = self.engine().provisioned(key).await? else {
            return Ok(None);
        };
        let name = format!("{}{key}", operations::PROVISIONED);
        let fingerprint = self.unbound(trees::META, name.as_bytes(), &stored)?;
        Ok(Some(String::from_utf8_lossy(fingerprint).into_owned()))
    }

    /// Records the fingerprint of a declaration just provisioned.
    pub async fn set_provisioned_fingerprint(
        &self,
        key: &str,
        fingerprint: &str,
    ) -> Result<(), StorageError> {
        let name = format!("{}{key}", operations::PROVISIONED);
        let stored = self.bound(trees::META, name.as_bytes(), fingerprint.as_bytes());
        self.engine().set_provisioned(key, stored).await
    }
}

/// The name of the manual clock's instant (microseconds since the epoch, big-endian).
const MANUAL_CLOCK: &[u8] = operations::MANUAL_CLOCK.as_bytes();

impl Store {
    /// Where a manual clock stood when it was last moved, if it ever was.
    pub async fn manual_clock(&self) -> Result<Option<DateTime<Utc>>, StorageError> {
        let Some(stored) = self.engine().manual_clock().await? else {
            return Ok(None);
        };
        stored_micros(self.unbound(trees::META, MANUAL_CLOCK, &stored)?)
            .and_then(DateTime::from_timestamp_micros)
            .map(Some)
            .ok_or_else(|| StorageError::Corrupt {
                kind: "manual clock",
                reason: format!("{} bytes that are no instant", stored.len()),
            })
    }

    /// Records, durably, that a manual clock is being moved to `instant`. The stored instant only ever moves
    /// forward, whatever the order concurrent moves arrive in.
    pub async fn record_manual_clock(&self, instant: DateTime<Utc>) -> Result<(), StorageError> {
        let micros = instant.timestamp_micros();
        // Unreadable stored bytes are replaced: the move being recorded is the one instant known for sure.
        let moved = |stored: Option<&[u8]>| {
            // A stored instant without this store's MAC is refused (and logged) like unreadable bytes.
            let stored = stored
                .and_then(|bytes| self.unbound(trees::META, MANUAL_CLOCK, bytes).ok())
                .and_then(stored_micros)
                .unwrap_or(i64::MIN);
            self.bound(trees::META, MANUAL_CLOCK, &stored.max(micros).to_be_bytes())
        };
        self.engine().move_manual_clock(&moved).await
    }
}

/// The stored manual clock's microseconds, if the bytes are eight.
fn stored_micros(bytes: &[u8]) -> Option<i64> {
    <[u8; 8]>::try_from(bytes).ok().map(i64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_stored_manual_clock_only_moves_forward() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        assert_eq!(store.manual_clock().await.unwrap(), None);
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        store
            .record_manual_clock(at("2026-11-25T10:00:00.000001Z"))
            .await
            .unwrap();
        // A move that arrives late, behind one already stored, leaves it.
        store
            .record_manual_clock(at("2026-11-24T00:00:00Z"))
            .await
            .unwrap();
        assert_eq!(
            store.manual_clock().await.unwrap(),
            Some(at("2026-11-25T10:00:00.000001Z"))
        );
    }
}
