//! Envelope encryption at rest: every stored value that carries request data, and every recording file,
//! is sealed with XChaCha20-Poly1305 under a data key; data keys derive from epoch keys; epoch keys are
//! wrapped by the master key in the [`keyring`].
//!
//! The key hierarchy, and why it is shaped for purging (ARCHITECTURE.md has the whole argument):
//! - the **master key** (the operator's) wraps the keyring and nothing else;
//! - an **epoch key** per hour of creation lives in the keyring, outside sled, where destroying it
//!   really overwrites it;
//! - a **data key** per batch (the requests of one POST booked on one day) is HKDF(epoch key, batch id):
//!   nothing per request is written on the create path, and the batch id names its epoch (a UUID v7 carries
//!   its creation time), so no read has to look anything up to find its key;
//! - the **system key** (in the keyring too) keys the hashes of client text used as store keys
//!   (`internalId`), seals process settings (the token secret) and keys the MACs that bind security
//!   records and the audit chain ([`binding`]).
//!
//! A sealed value is `MARK, epoch (u32 BE), nonce (24), ciphertext + tag`; its associated data names the
//! tree, the key it is stored under and the format, so a value copied under another key does not open.

pub(crate) mod binding;
mod bound_records;
mod follow;
mod keyring;
mod keyring_home;
mod master;
mod migrate;
pub(crate) mod overrides;
mod owner;

pub use keyring::FILE as KEYRING_FILE;
pub use master::{KeySource, MasterKey, BESIDE_DATA};

pub use bound_records::Bound;
pub(crate) use keyring::{Key, Keyring, VAULT_BASE};
pub(crate) use keyring_home::Home;
pub(crate) use migrate::seal_plaintext_store;
pub use migrate::Migrated;
pub(crate) use owner::{epoch_of, owner_of_request, Sealed};

use std::collections::HashMap;
use std::sync::RwLock;

use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::{RequestId, StorageError};

/// The first byte of a sealed value. Plain values of every record type start with their format version
/// (1 or 2), so the two can never be mistaken.
pub(crate) const MARK: u8 = 0xA5;
/// The first byte of a sealed recording file (a RIFF or MP3 header never starts with it).
const FILE_MARK: u8 = 0xA6;
/// The epoch number that stands for the system key.
const SYSTEM_EPOCH: u32 = u32::MAX;
const NONCE: usize = 24;
const TAG: usize = 16;
const HEAD: usize = 1 + 4 + NONCE;
/// Data keys kept derived before the map starts over.
const DERIVED: usize = 4096;

/// Seals and opens values; one per open store.
pub(crate) struct Sealer {
    pub(crate) keyring: Keyring,
    /// The MACs that bind security records and the audit chain to the keys ([`binding`]).
    pub(crate) binder: binding::Binder,
    index: Hmac<Sha256>,
    system: Zeroizing<[u8; 32]>,
    derived: RwLock<HashMap<Vec<u8>, Zeroizing<[u8; 32]>>>,
    /// Data keys kept wrapped since a purge ([`overrides`]).
    pub(crate) overrides: overrides::Overrides,
    /// Counts purges that changed keys: a value sealed before one and written after must be sealed again.
    generation: std::sync::atomic::AtomicU64,
    /// A standby's `data_keys` tree, read again when a value does not open ([`follow`]).
    following: std::sync::OnceLock<crate::engine::Tree>,
}

impl Sealer {
    pub(crate) fn new(keyring: Keyring) -> Sealer {
        let index =
            <Hmac<Sha256> as Mac>::new_from_slice(derive(keyring.system(), b"index hash").as_ref())
                .expect("HMAC takes any key length");
        let system = derive(keyring.system(), b"settings");
        Sealer {
            binder: binding::Binder::new(keyring.system()),
            keyring,
            index,
            system,
            derived: RwLock::new(HashMap::new()),
            overrides: overrides::Overrides::default(),
            generation: std::sync::atomic::AtomicU64::new(0),
            following: std::sync::OnceLock::new(),
        }
    }

    /// How many key changes purges have made so far.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Forgets every derived key after a purge changed keys.
    pub(crate) fn keys_changed(&self) {
        self.derived.write().expect("derived keys").clear();
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// The data key `owner` derives from the current key of `epoch` (for re-homing it).
    pub(crate) fn derived_key(&self, epoch: u32, owner: &[u8]) -> Result<Key, StorageError> {
        let mut info = b"data key\0".to_vec();
        info.extend_from_slice(owner);
        let epoch_key = self.keyring.epoch(epoch)?;
        Ok(derive(&epoch_key, &info))
    }

    /// `plain` sealed for the value under `key` in `tree` with the explicit data key `data_key` named by
    /// vault `epoch` (a batch re-keyed by a purge, before its entry is committed).
    pub(crate) fn seal_under(
        &self,
        tree: Sealed,
        key: &[u8],
        plain: &[u8],
        epoch: u32,
        data_key: &Key,
    ) -> Vec<u8> {
        let cipher = XChaCha20Poly1305::new(data_key.as_ref().into());
        seal_with(&cipher, MARK, epoch, &aad(tree.name(), key, epoch), plain)
    }

    /// Copies the keyring of `dir` to `target`, consistent with every key minted so far.
    pub(crate) fn copy_keyring(
        &self,
        dir: &std::path::Path,
        target: &std::path::Path,
    ) -> std::io::Result<u64> {
        self.keyring.copy_to(dir, target)
    }

    /// The keyed hash that stands for client text in a store key (an `internalId`).
    pub(crate) fn index_hash(&self, text: &[u8]) -> [u8; 32] {
        let mut mac = self.index.clone();
        mac.update(text);
        mac.finalize().into_bytes().into()
    }

    /// `plain` sealed for the value under `key` in `tree`.
    pub(crate) fn seal(&self, tree: Sealed, key: &[u8], plain: &[u8]) -> Vec<u8> {
        let owner = tree.owner(key);
        let (epoch, cipher) = self
            .sealing_cipher(tree, &owner)
            .expect("an owner's key is minted on first use and a purge only replaces keys");
        seal_with(&cipher, MARK, epoch, &aad(tree.name(), key, epoch), plain)
    }

    /// The epoch and cipher new values of `owner` are sealed with: its kept key, or the one derived from its
    /// hour's epoch.
    fn sealing_cipher(
        &self,
        tree: Sealed,
        owner: &[u8],
    ) -> Result<(u32, XChaCha20Poly1305), StorageError> {
        if tree.by_system_key() {
            return Ok((SYSTEM_EPOCH, self.cipher(SYSTEM_EPOCH, owner)?));
        }
        if let Some(kept) = self.overrides.get(owner) {
            return Ok((kept.epoch, XChaCha20Poly1305::new(kept.key.as_ref().into())));
        }
        let epoch = epoch_of(owner);
        Ok((epoch, self.cipher(epoch, owner)?))
    }

    /// [`Sealer::open`] with the keys held in memory.
    fn open_held(&self, tree: Sealed, key: &[u8], sealed: &[u8]) -> Result<Vec<u8>, StorageError> {
        let (epoch, _) = header(sealed, MARK).ok_or_else(|| unsealed(tree.name()))?;
        let owner = tree.owner(key);
        let aad = aad(tree.name(), key, epoch);
        // A kept key first; the derived one while a purge is re-sealing the owner's values (the one that
        // fails to open is the other).
        if !tree.by_system_key() {
            if let Some(kept) = self.overrides.get(&owner) {
                for key in std::iter::once(&kept.key).chain(kept.previous.as_ref()) {
                    let cipher = XChaCha20Poly1305::new(key.as_ref().into());
                    if let Some(plain) = open_with(&cipher, &aad, sealed) {
                        return Ok(plain);
                    }
                }
            }
        }
        let cipher = self.cipher(epoch, &owner)?;
        if let Some(plain) = open_with(&cipher, &aad, sealed) {
            return Ok(plain);
        }
        match self.overrides.get(&owner) {
            Some(kept) if !tree.by_system_key() => {
                let cipher = XChaCha20Poly1305::new(kept.key.as_ref().into());
                open_with(&cipher, &aad, sealed).ok_or_else(|| unsealed(tree.name()))
            }
            _ => Err(unsealed(tree.name())),
        }
    }

    /// A recording file's bytes sealed under the key of the request `owner`, for the file `name`. The file
    /// names its owner in the clear (an id), so it opens without a lookup.
    pub(crate) fn seal_file(&self, owner: &RequestId, name: &str, bytes: &[u8]) -> Vec<u8> {
        let owner = owner_of_request(owner.as_bytes());
        let (epoch, cipher) = self
            .sealing_cipher(Sealed::Requests, &owner)
            .expect("a live key for a new recording");
        sealed_file(&cipher, &owner, name, bytes, epoch)
    }

    /// [`Sealer::seal_file`] under `data_key`, the key the batch `owner` keeps wrapped under `epoch` (a
    /// purge gave it a new one).
    pub(crate) fn seal_file_under(
        &self,
        owner: &[u8],
        name: &str,
        bytes: &[u8],
        epoch: u32,
        data_key: &Key,
    ) -> Vec<u8> {
        let cipher = XChaCha20Poly1305::new(data_key.as_ref().into());
        sealed_file(&cipher, owner, name, bytes, epoch)
    }

    /// [`Sealer::open_file`] with the keys held in memory.
    fn open_file_held(&self, name: &str, file: &[u8]) -> Result<Vec<u8>, StorageError> {
        let refused = || unsealed("recording");
        let (&mark, rest) = file.split_first().ok_or_else(refused)?;
        let (&length, rest) = rest.split_first().ok_or_else(refused)?;
        if mark != FILE_MARK || rest.len() < usize::from(length) {
            return Err(refused());
        }
        let (owner, sealed) = rest.split_at(usize::from(length));
        let (epoch, _) = header(sealed, FILE_MARK).ok_or_else(refused)?;
        let aad = file_aad(name, owner, epoch);
        if let Some(kept) = self.overrides.get(owner) {
            let cipher = XChaCha20Poly1305::new(kept.key.as_ref().into());
            if let Some(audio) = open_with(&cipher, &aad, sealed) {
                return Ok(audio);
            }
        }
        let cipher = self.cipher(epoch, owner)?;
        open_with(&cipher, &aad, sealed).ok_or_else(refused)
    }

    fn cipher(&self, epoch: u32, owner: &[u8]) -> Result<XChaCha20Poly1305, StorageError> {
        if epoch == SYSTEM_EPOCH {
            return Ok(XChaCha20Poly1305::new(self.system.as_ref().into()));
        }
        let mut name = epoch.to_be_bytes().to_vec();
        name.extend_from_slice(owner);
        if let Some(key) = self.derived.read().expect("derived keys").get(&name) {
            return Ok(XChaCha20Poly1305::new(key.as_ref().into()));
        }
        let mut info = b"data key\0".to_vec();
        info.extend_from_slice(owner);
        let epoch_key = self.keyring.epoch(epoch)?;
        let key = derive(&epoch_key, &info);
        let cipher = XChaCha20Poly1305::new(key.as_ref().into());
        let mut derived = self.derived.write().expect("derived keys");
        if derived.len() >= DERIVED {
            derived.clear();
        }
        derived.insert(name, key);
        Ok(cipher)
    }
}

/// HKDF-SHA256 of `secret` for the purpose `info`.
pub(crate) fn derive(secret: &[u8; 32], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut out = Zeroizing::new([0u8; 32]);
    Hkdf::<Sha256>::new(Some(b"switchboard v1"), secret)
        .expand(info, out.as_mut())
        .expect("32 bytes is a valid HKDF length");
    out
}

fn aad(tree: &str, key: &[u8], epoch: u32) -> Vec<u8> {
    let mut aad = Vec::with_capacity(tree.len() + key.len() + 16);
    aad.extend_from_slice(b"value\0");
    aad.extend_from_slice(tree.as_bytes());
    aad.push(0);
    aad.extend_from_slice(key);
    aad.push(0);
    aad.push(MARK);
    aad.extend_from_slice(&epoch.to_be_bytes());
    aad
}

/// A recording file: its mark, its owner in the clear (an id, so it opens without a lookup), and the audio
/// sealed under `cipher`, the owner's key of `epoch`.
fn sealed_file(
    cipher: &XChaCha20Poly1305,
    owner: &[u8],
    name: &str,
    bytes: &[u8],
    epoch: u32,
) -> Vec<u8> {
    let mut file = vec![FILE_MARK, owner.len() as u8];
    file.extend_from_slice(owner);
    file.extend(seal_with(
        cipher,
        FILE_MARK,
        epoch,
        &file_aad(name, owner, epoch),
        bytes,
    ));
    file
}

fn file_aad(name: &str, owner: &[u8], epoch: u32) -> Vec<u8> {
    let mut aad = b"recording\0".to_vec();
    aad.extend_from_slice(name.as_bytes());
    aad.push(0);
    aad.extend_from_slice(owner);
    aad.push(0);
    aad.push(FILE_MARK);
    aad.extend_from_slice(&epoch.to_be_bytes());
    aad
}

fn seal_with(
    cipher: &XChaCha20Poly1305,
    mark: u8,
    epoch: u32,
    aad: &[u8],
    plain: &[u8],
) -> Vec<u8> {
    let mut nonce = [0u8; NONCE];
    // thread_rng is a CSPRNG seeded from the OS: a fresh 192-bit nonce without a system call per value.
    rand::thread_rng().fill_bytes(&mut nonce);
    let mut out = Vec::with_capacity(HEAD + plain.len() + TAG);
    out.push(mark);
    out.extend_from_slice(&epoch.to_be_bytes());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(plain);
    let tag = cipher
        .encrypt_in_place_detached(XNonce::from_slice(&nonce), aad, &mut out[HEAD..])
        .expect("sealing into memory cannot fail");
    out.extend_from_slice(&tag);
    out
}

fn open_with(cipher: &XChaCha20Poly1305, aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < HEAD + TAG {
        return None;
    }
    let (body, tag) = sealed[HEAD..].split_at(sealed.len() - HEAD - TAG);
    let mut plain = body.to_vec();
    cipher
        .decrypt_in_place_detached(
            XNonce::from_slice(&sealed[5..HEAD]),
            aad,
            &mut plain,
            tag.into(),
        )
        .ok()?;
    Some(plain)
}

/// The epoch a sealed value names, if `bytes` is one.
fn header(bytes: &[u8], mark: u8) -> Option<(u32, &[u8])> {
    if bytes.len() < HEAD + TAG || bytes[0] != mark {
        return None;
    }
    let epoch = u32::from_be_bytes(bytes[1..5].try_into().ok()?);
    Some((epoch, &bytes[HEAD..]))
}

/// Whether `bytes` is a sealed value (not necessarily one that opens).
pub(crate) fn is_sealed(bytes: &[u8]) -> bool {
    bytes.first() == Some(&MARK)
}

/// Whether `bytes` is a sealed recording file.
pub(crate) fn is_sealed_file(bytes: &[u8]) -> bool {
    bytes.first() == Some(&FILE_MARK)
}

fn unsealed(tree: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "sealed value",
        reason: format!(
            "a value in {tree} does not open with its key (not sealed here, or altered)"
        ),
    }
}

#[cfg(test)]
mod tests;
