//! The keyring: `{data_dir}/keyring`, a file of its own beside sled's, holding every key of the store
//! wrapped by the master key.
//!
//! It lives outside sled on purpose. sled appends every write to its log and reuses a segment only when
//! it is free, so a value removed from a tree stays readable in the files for as long as the segment lives.
//! A key destroyed here is overwritten in place and synced: gone from `data_dir`, and with it everything
//! it sealed, in whatever old log segment that may still sit.
//!
//! Layout (all fixed sizes, so a slot is overwritten where it lies):
//! - header: magic, the check value (a known text sealed by the master key: a wrong key is recognised
//!   before anything else is read or written), and the wrapped system key (index hashes, process
//!   settings);
//! - one slot per epoch key: the epoch number, live or destroyed, and the key wrapped by the master key.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use zeroize::Zeroizing;

use super::master::MasterKey;
use crate::StorageError;

/// The keyring's file name in `data_dir`.
pub const FILE: &str = "keyring";
const MAGIC: &[u8; 8] = b"SBKEYS01";
const CHECK_TEXT: &[u8; 32] = b"switchboard keyring check value!";
pub(crate) const KEY: usize = 32;
const NONCE: usize = 24;
const TAG: usize = 16;
const WRAPPED: usize = NONCE + KEY + TAG;
const HEADER: usize = MAGIC.len() + 2 * WRAPPED;
const SLOT: usize = 4 + 1 + WRAPPED;
const LIVE: u8 = 1;
const DESTROYED: u8 = 0;

pub(crate) type Key = Zeroizing<[u8; KEY]>;

/// Epoch numbers from here on are vaults, not hours (hours since 1970 stay far below for millennia).
pub(crate) const VAULT_BASE: u32 = 0x8000_0000;

/// An epoch's key, or the mark that it was destroyed (never minted again).
#[derive(Clone)]
enum Epoch {
    Live(Key),
    Destroyed,
}

pub(crate) struct Keyring {
    master: XChaCha20Poly1305,
    system: Key,
    epochs: RwLock<HashMap<u32, Epoch>>,
    /// The open file and where each epoch's slot lies; held while a slot is written.
    slots: Mutex<Slots>,
}

struct Slots {
    file: File,
    place: HashMap<u32, u64>,
    next: u64,
}

impl Keyring {
    /// Whether `dir` holds a keyring.
    pub(crate) fn exists(dir: &Path) -> bool {
        dir.join(FILE).exists()
    }

    /// A new keyring in `dir` with a fresh system key and no epochs, written whole before it appears
    /// under its name.
    pub(crate) fn create(dir: &Path, master: &MasterKey) -> Result<Keyring, StorageError> {
        let mut system = Zeroizing::new([0u8; KEY]);
        rand::rngs::OsRng.fill_bytes(system.as_mut());
        write_whole(dir, &header(&master.cipher(), &system), &[])?;
        Keyring::open(dir, master)
    }

    /// The keyring in `dir`, opened with `master`. A key that does not open the check value is refused
    /// before anything else is read.
    pub(crate) fn open(dir: &Path, master: &MasterKey) -> Result<Keyring, StorageError> {
        let path = dir.join(FILE);
        let bytes = std::fs::read(&path).map_err(|e| io("read", &path, e))?;
        let (master, system, epochs) = parse(&bytes, master, dir)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io("open", &path, e))?;
        let place = epochs
            .iter()
            .map(|(epoch, (slot, _))| (*epoch, *slot))
            .collect();
        // A slot cut short by a crash was never synced, so nothing was sealed under it: written over.
        let next = ((bytes.len() - HEADER) / SLOT) as u64;
        Ok(Keyring {
            master,
            system,
            epochs: RwLock::new(epochs.into_iter().map(|(e, (_, k))| (e, k)).collect()),
            slots: Mutex::new(Slots { file, place, next }),
        })
    }

    /// The system key: what index hashes and process settings derive their keys from.
    pub(crate) fn system(&self) -> &Key {
        &self.system
    }

    /// The key of `epoch`, minted (and synced to disk before it is handed out) the first time it is asked
    /// for. A destroyed epoch stays destroyed.
    pub(crate) fn epoch(&self, epoch: u32) -> Result<Key, StorageError> {
        if let Some(known) = self.epochs.read().expect("keyring lock").get(&epoch) {
            return live(known.clone(), epoch);
        }
        let mut slots = self.slots.lock().expect("keyring slots");
        if let Some(known) = self.epochs.read().expect("keyring lock").get(&epoch) {
            return live(known.clone(), epoch);
        }
        let mut key = Zeroizing::new([0u8; KEY]);
        rand::rngs::OsRng.fill_bytes(key.as_mut());
        let slot = slots.next;
        slots.write(slot, &slot_bytes(&self.master, epoch, Some(&key)))?;
        slots.next += 1;
        slots.place.insert(epoch, slot);
        self.epochs
            .write()
            .expect("keyring lock")
            .insert(epoch, Epoch::Live(key.clone()));
        Ok(key)
    }

    /// Replaces `epoch`'s key by a fresh one, overwriting its slot in place and syncing it: nothing the old
    /// key sealed opens again, from this store or any copy of `data_dir` taken afterwards, while values
    /// sealed from now on use the new key. A purge replaces the epochs of what it purges.
    pub(crate) fn replace(&self, epoch: u32) -> Result<(), StorageError> {
        let mut slots = self.slots.lock().expect("keyring slots");
        let mut key = Zeroizing::new([0u8; KEY]);
        rand::rngs::OsRng.fill_bytes(key.as_mut());
        let slot = match slots.place.get(&epoch) {
            Some(slot) => *slot,
            None => {
                let slot = slots.next;
                slots.next += 1;
                slots.place.insert(epoch, slot);
                slot
            }
        };
        slots.write(slot, &slot_bytes(&self.master, epoch, Some(&key)))?;
        self.epochs
            .write()
            .expect("keyring lock")
            .insert(epoch, Epoch::Live(key));
        Ok(())
    }

    /// A new epoch number for keys that are not an hour's (the vault of re-wrapped data keys).
    pub(crate) fn fresh_vault_epoch(&self) -> Result<u32, StorageError> {
        let highest = {
            let epochs = self.epochs.read().expect("keyring lock");
            epochs
                .keys()
                .copied()
                .filter(|e| *e >= VAULT_BASE && *e != u32::MAX)
                .max()
        };
        let epoch = highest.map_or(VAULT_BASE, |e| e + 1);
        self.epoch(epoch)?;
        Ok(epoch)
    }

    // A destroyed slot stays destroyed; purges replace keys instead, and only the tests destroy one.
    #[cfg(test)]
    /// Destroys `epoch`'s key: its slot is overwritten in place and synced, so nothing it sealed can be
    /// opened again, from this store or from any copy of `data_dir` taken afterwards.
    pub(crate) fn destroy(&self, epoch: u32) -> Result<(), StorageError> {
        let mut slots = self.slots.lock().expect("keyring slots");
        let slot = match slots.place.get(&epoch) {
            Some(slot) => *slot,
            None => {
                let slot = slots.next;
                slots.next += 1;
                slots.place.insert(epoch, slot);
                slot
            }
        };
        slots.write(slot, &slot_bytes(&self.master, epoch, None))?;
        self.epochs
            .write()
            .expect("keyring lock")
            .insert(epoch, Epoch::Destroyed);
        Ok(())
    }

    /// Copies the keyring file of `dir` to `target` while no key is minted or destroyed (a backup).
    pub(crate) fn copy_to(&self, dir: &Path, target: &Path) -> std::io::Result<u64> {
        let _slots = self.slots.lock().expect("keyring slots");
        std::fs::copy(dir.join(FILE), target)
    }

    /// Wraps every key of the keyring in `dir` under `new` instead of `old`, replacing the file in one
    /// rename: afterwards `new` opens the store and `old` is refused. Answers the live epochs re-wrapped.
    pub(crate) fn rewrap(
        dir: &Path,
        old: &MasterKey,
        new: &MasterKey,
    ) -> Result<usize, StorageError> {
        let path = dir.join(FILE);
        let bytes = std::fs::read(&path).map_err(|e| io("read", &path, e))?;
        let (_, system, epochs) = parse(&bytes, old, dir)?;
        let cipher = new.cipher();
        let mut ordered: Vec<_> = epochs.into_iter().collect();
        ordered.sort_by_key(|(_, (slot, _))| *slot);
        let mut body = Vec::with_capacity(ordered.len() * SLOT);
        let mut live = 0;
        for (epoch, (_, key)) in &ordered {
            let key = match key {
                Epoch::Live(key) => {
                    live += 1;
                    Some(key)
                }
                Epoch::Destroyed => None,
            };
            body.extend_from_slice(&slot_bytes(&cipher, *epoch, key));
        }
        write_whole(dir, &header(&cipher, &system), &body)?;
        Ok(live)
    }
}

impl Slots {
    fn write(&mut self, slot: u64, bytes: &[u8]) -> Result<(), StorageError> {
        let at = HEADER as u64 + slot * SLOT as u64;
        self.file
            .write_all_at(bytes, at)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| StorageError::Keyring(format!("cannot write the keyring: {e}")))
    }
}

fn live(epoch: Epoch, number: u32) -> Result<Key, StorageError> {
    match epoch {
        Epoch::Live(key) => Ok(key),
        Epoch::Destroyed => Err(StorageError::KeyDestroyed(number)),
    }
}

type Parsed = (XChaCha20Poly1305, Key, HashMap<u32, (u64, Epoch)>);

fn parse(bytes: &[u8], master: &MasterKey, dir: &Path) -> Result<Parsed, StorageError> {
    if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
        return Err(StorageError::Keyring(format!(
            "{} is not a Switchboard keyring",
            dir.join(FILE).display()
        )));
    }
    let cipher = master.cipher();
    let check = &bytes[MAGIC.len()..MAGIC.len() + WRAPPED];
    match unwrap(&cipher, b"check", 0, check) {
        Some(text) if text.as_slice() == CHECK_TEXT => {}
        _ => return Err(StorageError::KeyRefused(dir.to_path_buf())),
    }
    let system = unwrap(&cipher, b"system", 0, &bytes[MAGIC.len() + WRAPPED..HEADER])
        .and_then(|k| to_key(&k))
        .ok_or_else(|| StorageError::Keyring("the system key does not open".into()))?;
    let mut epochs = HashMap::new();
    for (slot, chunk) in bytes[HEADER..].chunks_exact(SLOT).enumerate() {
        let epoch = u32::from_be_bytes(chunk[..4].try_into().expect("4 bytes"));
        let state = match chunk[4] {
            LIVE => Epoch::Live(
                unwrap(&cipher, b"epoch", epoch, &chunk[5..])
                    .and_then(|k| to_key(&k))
                    .ok_or_else(|| {
                        StorageError::Keyring(format!("the key of epoch {epoch} does not open"))
                    })?,
            ),
            _ => Epoch::Destroyed,
        };
        epochs.insert(epoch, (slot as u64, state));
    }
    Ok((cipher, system, epochs))
}

fn header(cipher: &XChaCha20Poly1305, system: &Key) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&wrap(cipher, b"check", 0, CHECK_TEXT));
    bytes.extend_from_slice(&wrap(cipher, b"system", 0, system.as_ref()));
    bytes
}

fn slot_bytes(cipher: &XChaCha20Poly1305, epoch: u32, key: Option<&Key>) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(SLOT);
    bytes.extend_from_slice(&epoch.to_be_bytes());
    match key {
        Some(key) => {
            bytes.push(LIVE);
            bytes.extend_from_slice(&wrap(cipher, b"epoch", epoch, key.as_ref()));
        }
        None => {
            bytes.push(DESTROYED);
            bytes.resize(SLOT, 0);
        }
    }
    bytes
}

/// What each wrapped key is bound to: its role and epoch, so no slot can stand in for another.
fn aad(label: &[u8], id: u32) -> Vec<u8> {
    let mut aad = b"switchboard keyring v1\0".to_vec();
    aad.extend_from_slice(label);
    aad.push(0);
    aad.extend_from_slice(&id.to_be_bytes());
    aad
}

fn wrap(cipher: &XChaCha20Poly1305, label: &[u8], id: u32, key: &[u8]) -> Vec<u8> {
    let mut nonce = [0u8; NONCE];
    rand::rngs::OsRng.fill_bytes(&mut nonce);
    let sealed = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: key,
                aad: &aad(label, id),
            },
        )
        .expect("sealing into memory cannot fail");
    let mut bytes = nonce.to_vec();
    bytes.extend_from_slice(&sealed);
    bytes
}

fn unwrap(
    cipher: &XChaCha20Poly1305,
    label: &[u8],
    id: u32,
    bytes: &[u8],
) -> Option<Zeroizing<Vec<u8>>> {
    let (nonce, sealed) = bytes.split_at(NONCE);
    cipher
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: &aad(label, id),
            },
        )
        .ok()
        .map(Zeroizing::new)
}

fn to_key(bytes: &[u8]) -> Option<Key> {
    let array: [u8; KEY] = bytes.try_into().ok()?;
    Some(Zeroizing::new(array))
}

/// Writes the keyring whole beside its name, syncs it, renames it into place and syncs the directory.
fn write_whole(dir: &Path, header: &[u8], body: &[u8]) -> Result<(), StorageError> {
    let path = dir.join(FILE);
    let partial: PathBuf = dir.join(format!("{FILE}.new"));
    let written = (|| {
        let mut file = File::create(&partial)?;
        file.write_all(header)?;
        file.write_all(body)?;
        file.sync_all()?;
        std::fs::rename(&partial, &path)?;
        File::open(dir)?.sync_all()
    })();
    written.map_err(|e| io("write", &path, e))
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StorageError {
    StorageError::Keyring(format!("cannot {what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_survive_reopening_a_wrong_key_is_refused_and_a_destroyed_epoch_stays_gone() {
        let dir = tempfile::tempdir().unwrap();
        let master = MasterKey::generate();
        let ring = Keyring::create(dir.path(), &master).unwrap();
        let first = ring.epoch(7).unwrap();
        let second = ring.epoch(8).unwrap();
        assert_ne!(first.as_ref(), second.as_ref());
        ring.destroy(7).unwrap();
        drop(ring);

        let err = Keyring::open(dir.path(), &MasterKey::generate())
            .err()
            .expect("a wrong key is refused");
        assert!(matches!(err, StorageError::KeyRefused(_)), "{err}");

        let ring = Keyring::open(dir.path(), &master).unwrap();
        assert_eq!(ring.epoch(8).unwrap().as_ref(), second.as_ref());
        assert!(matches!(ring.epoch(7), Err(StorageError::KeyDestroyed(7))));
        // The destroyed key's bytes are nowhere in the file any more.
        let file = std::fs::read(dir.path().join(FILE)).unwrap();
        assert!(!file.windows(KEY).any(|w| w == first.as_ref()));
    }

    #[test]
    fn rewrapping_moves_every_key_to_the_new_master_and_refuses_the_old() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (MasterKey::generate(), MasterKey::generate());
        let ring = Keyring::create(dir.path(), &old).unwrap();
        let key = ring.epoch(3).unwrap();
        let system = ring.system().clone();
        drop(ring);
        assert_eq!(Keyring::rewrap(dir.path(), &old, &new).unwrap(), 1);
        assert!(matches!(
            Keyring::open(dir.path(), &old),
            Err(StorageError::KeyRefused(_))
        ));
        let ring = Keyring::open(dir.path(), &new).unwrap();
        assert_eq!(ring.epoch(3).unwrap().as_ref(), key.as_ref());
        assert_eq!(ring.system().as_ref(), system.as_ref());
    }
}
