//! Process-wide settings kept in the store.

use chrono::{DateTime, Utc};

use crate::seal::Sealed;
use crate::{trees, StorageError, Store};

pub(crate) const TOKEN_SECRET: &[u8] = b"token_secret";

impl Store {
    /// The bearer-token signing secret as stored, `None` until a first start made it: what a node that
    /// writes nothing (a standby) verifies and issues tokens with.
    pub async fn token_secret(&self) -> Result<Option<Vec<u8>>, StorageError> {
        match self.meta.get_async(TOKEN_SECRET).await? {
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
        if let Some(existing) = self.meta.get(TOKEN_SECRET)? {
            return self.sealer.open(Sealed::Meta, TOKEN_SECRET, &existing);
        }
        let fresh = generate();
        // Sealed: whoever reads the secret off a disk could mint tokens for any account.
        let sealed = self.sealer.seal(Sealed::Meta, TOKEN_SECRET, &fresh);
        // Two concurrent first starts cannot happen (sled locks the directory), but compare-and-swap keeps
        // the first secret if this ever runs twice.
        let open = self.group.gate.read().expect("write gate");
        let stored = match self.meta.compare_and_swap(
            TOKEN_SECRET,
            None as Option<&[u8]>,
            Some(sealed.as_slice()),
        )? {
            Ok(()) => fresh,
            Err(conflict) => match conflict.current {
                Some(current) => self.sealer.open(Sealed::Meta, TOKEN_SECRET, &current)?,
                None => fresh,
            },
        };
        drop(open);
        self.durable().await?;
        Ok(stored)
    }
}

const PROVISIONED: &str = "provisioned:";

impl Store {
    /// The fingerprint of the declaration last provisioned under `key` (e.g. `account:acme`).
    pub async fn provisioned_fingerprint(&self, key: &str) -> Result<Option<String>, StorageError> {
        let key = format!("{PROVISIONED}{key}");
        let Some(stored) = self.meta.get_async(&key).await? else {
            return Ok(None);
        };
        let fingerprint = self.unbound(trees::META, key.as_bytes(), &stored)?;
        Ok(Some(String::from_utf8_lossy(fingerprint).into_owned()))
    }

    /// Records the fingerprint of a declaration just provisioned.
    pub async fn set_provisioned_fingerprint(
        &self,
        key: &str,
        fingerprint: &str,
    ) -> Result<(), StorageError> {
        {
            let _open = self.group.gate.read().expect("write gate");
            let key = format!("{PROVISIONED}{key}");
            let stored = self.bound(trees::META, key.as_bytes(), fingerprint.as_bytes());
            self.meta.insert(key, stored)?;
        }
        self.durable().await
    }
}

/// The instant a manual clock was last moved to (microseconds since the epoch, big-endian).
const MANUAL_CLOCK: &[u8] = b"manual_clock";

impl Store {
    /// Where a manual clock stood when it was last moved, if it ever was.
    pub async fn manual_clock(&self) -> Result<Option<DateTime<Utc>>, StorageError> {
        let Some(stored) = self.meta.get_async(MANUAL_CLOCK).await? else {
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
        {
            let _open = self.group.gate.read().expect("write gate");
            self.meta.update_and_fetch(MANUAL_CLOCK, |stored| {
                // A stored instant without this store's MAC is refused (and logged) like unreadable bytes.
                let stored = stored
                    .and_then(|bytes| self.unbound(trees::META, MANUAL_CLOCK, bytes).ok())
                    .and_then(stored_micros)
                    .unwrap_or(i64::MIN);
                let moved = stored.max(micros).to_be_bytes();
                Some(self.bound(trees::META, MANUAL_CLOCK, &moved))
            })?;
        }
        self.durable().await
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
