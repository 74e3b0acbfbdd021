//! Data keys kept wrapped instead of derived: the `data_keys` tree, `owner -> epoch, nonce, wrapped key`.
//!
//! A purge replaces the epoch key that sealed what it purges. The other owners that epoch served keep their
//! data keys, now wrapped under a vault epoch here (re-homed: the same key bytes, their values untouched);
//! a batch that shared its key with the purged request gets a new random key and its values are sealed
//! again (re-keyed). An owner with an entry here is sealed and opened with that key only.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
use rand::RngCore;
use zeroize::Zeroizing;

use super::keyring::{Key, Keyring, KEY};
use crate::StorageError;

const NONCE: usize = 24;

/// An owner's data key and the vault epoch it is wrapped under.
#[derive(Clone)]
pub(crate) struct Override {
    pub(crate) epoch: u32,
    pub(crate) key: Key,
    /// The key the owner's values were sealed with before a re-key, while they are being sealed again
    /// (memory only: gone at the next opening, by when nothing sealed under it is live).
    pub(crate) previous: Option<Key>,
}

/// Every kept data key, in memory: loaded when the store opens and changed only by a purge, which holds
/// the write gate. Never read from sled while sealing, since sealing runs inside sled transactions. A
/// standby's, which the holder's purges change behind its back, reads an owner's entry again when a value
/// of that owner does not open ([`Overrides::reload`]).
#[derive(Default)]
pub(crate) struct Overrides {
    kept: RwLock<HashMap<Vec<u8>, Arc<Override>>>,
}

impl Overrides {
    /// Loads every entry of `tree`.
    pub(crate) fn load(
        &self,
        tree: &crate::engine::Tree,
        keyring: &Keyring,
    ) -> Result<(), StorageError> {
        let mut kept = self.kept.write().expect("overrides");
        kept.clear();
        for entry in tree.iter() {
            let (owner, bytes) = entry?;
            kept.insert(owner.to_vec(), Arc::new(decode(&owner, &bytes, keyring)?));
        }
        Ok(())
    }

    /// Reads `owner`'s entry of `tree` again, for a node whose purges do not change it (a standby: the
    /// holder's do), with its vault epoch's key too when the one held in memory no longer opens it.
    pub(crate) fn reload(
        &self,
        owner: &[u8],
        tree: &crate::engine::Tree,
        keyring: &Keyring,
    ) -> Result<(), StorageError> {
        let kept = match tree.get(owner)? {
            Some(bytes) => Some(match decode(owner, &bytes, keyring) {
                Ok(kept) => kept,
                Err(_) => {
                    if let Some(vault) = epoch_of_entry(&bytes) {
                        keyring.reread(vault)?;
                    }
                    decode(owner, &bytes, keyring)?
                }
            }),
            None => None,
        };
        self.set(owner, kept);
        Ok(())
    }

    /// The owner's kept key, if it has one.
    pub(crate) fn get(&self, owner: &[u8]) -> Option<Arc<Override>> {
        self.kept.read().expect("overrides").get(owner).cloned()
    }

    /// Records that `owner`'s key is now `kept` (or no longer kept, with `None`).
    pub(crate) fn set(&self, owner: &[u8], kept: Option<Override>) {
        let mut map = self.kept.write().expect("overrides");
        match kept {
            Some(kept) => map.insert(owner.to_vec(), Arc::new(kept)),
            None => map.remove(owner),
        };
    }
}

fn aad(owner: &[u8], epoch: u32) -> Vec<u8> {
    let mut aad = b"data key\0".to_vec();
    aad.extend_from_slice(owner);
    aad.push(0);
    aad.extend_from_slice(&epoch.to_be_bytes());
    aad
}

/// The stored form of `owner`'s `key` wrapped under vault `epoch`.
pub(crate) fn encode(
    owner: &[u8],
    epoch: u32,
    key: &Key,
    keyring: &Keyring,
) -> Result<Vec<u8>, StorageError> {
    let vault = keyring.epoch(epoch)?;
    let cipher = XChaCha20Poly1305::new(vault.as_ref().into());
    let mut nonce = [0u8; NONCE];
    rand::thread_rng().fill_bytes(&mut nonce);
    let wrapped = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: key.as_ref(),
                aad: &aad(owner, epoch),
            },
        )
        .expect("sealing into memory cannot fail");
    let mut bytes = epoch.to_be_bytes().to_vec();
    bytes.extend_from_slice(&nonce);
    bytes.extend_from_slice(&wrapped);
    Ok(bytes)
}

pub(crate) fn decode(
    owner: &[u8],
    bytes: &[u8],
    keyring: &Keyring,
) -> Result<Override, StorageError> {
    let broken = || StorageError::Corrupt {
        kind: "data key",
        reason: "a wrapped data key does not open".into(),
    };
    if bytes.len() < 4 + NONCE {
        return Err(broken());
    }
    let epoch = u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes"));
    let vault = keyring.epoch(epoch)?;
    let cipher = XChaCha20Poly1305::new(vault.as_ref().into());
    let key = cipher
        .decrypt(
            XNonce::from_slice(&bytes[4..4 + NONCE]),
            Payload {
                msg: &bytes[4 + NONCE..],
                aad: &aad(owner, epoch),
            },
        )
        .map_err(|_| broken())?;
    let key: [u8; KEY] = key.as_slice().try_into().map_err(|_| broken())?;
    Ok(Override {
        epoch,
        key: Zeroizing::new(key),
        previous: None,
    })
}

/// The epoch of a stored entry, read without opening it.
pub(crate) fn epoch_of_entry(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?))
}
