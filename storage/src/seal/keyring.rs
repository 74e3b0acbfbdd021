//! The keyring: every key of the store wrapped by the master key, kept where [`Home`] says:
//! `{data_dir}/keyring` beside sled, or the database's rows on PostgreSQL.
//!
//! With sled it lives outside sled's files on purpose. sled appends every write to its log and reuses a segment only when
//! it is free, so a value removed from a tree stays readable in the files for as long as the segment lives.
//! A key destroyed here is overwritten in place and synced: gone from `data_dir`, and with it everything
//! it sealed, in whatever old log segment that may still sit.
//!
//! Layout (all fixed sizes, so a slot is overwritten where it lies):
//! - header: magic, the check value (a known text sealed by the master key: a wrong key is recognised
//!   before anything else is read or written; the text also says the store's layout, see
//!   [`crate::layout`], from which on its records and audit chain are bound to the keys, see
//!   [`super::binding`]), and the wrapped system key (index hashes, process settings, record and audit
//!   MACs);
//! - one slot per epoch key: the epoch number, live or destroyed, and the key wrapped by the master key.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, RwLock};

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::RngCore;
use zeroize::Zeroizing;

use super::keyring_home::{Home, Slots};
use super::master::MasterKey;
use crate::StorageError;

pub use super::keyring_home::FILE;
const MAGIC: &[u8; 8] = b"SBKEYS01";
/// The check value of a keyring whose store is at layout 0: its records are not bound yet.
const CHECK_TEXT: &[u8; 32] = b"switchboard keyring check value!";
/// The check value of a keyring whose store is at layout 1: every security record and its audit chain's
/// head bound (MAC'd) under keys derived from the system key. Only the master key can write a check value,
/// so whoever can write the store but lacks the key cannot make a store pass for one of another layout.
const CHECK_BOUND: &[u8; 32] = b"switchboard keyring bound record";
/// The check value of a keyring whose store is at layout 2 or later: this text, then the layout (u32 BE).
const CHECK_LAYOUT: &[u8; 28] = b"switchboard store at layout ";
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
    /// Where slots are written; held while one is.
    slots: Mutex<Slots>,
    /// The store's layout, as the header's check value says ([`crate::layout`]).
    layout: AtomicU32,
}

impl Keyring {
    /// Whether `home` holds a keyring.
    pub(crate) fn exists(home: &Home) -> Result<bool, StorageError> {
        home.exists()
    }

    /// A new keyring in `home` with a fresh system key and no epochs, written whole before it appears.
    /// In a database another node may have created one first: that one is opened instead.
    pub(crate) fn create(home: &Home, master: &MasterKey) -> Result<Keyring, StorageError> {
        let mut system = Zeroizing::new([0u8; KEY]);
        rand::rngs::OsRng.fill_bytes(system.as_mut());
        home.create(&header(&master.cipher(), &system, 0))?;
        Keyring::open(home, master)
    }

    /// The keyring in `home`, opened with `master`. A key that does not open the check value is refused
    /// before anything else is read.
    pub(crate) fn open(home: &Home, master: &MasterKey) -> Result<Keyring, StorageError> {
        let bytes = home.read()?;
        let (master, system, epochs, layout) = parse(&bytes, master, home)?;
        let mut order: Vec<(u64, u32)> = epochs.iter().map(|(e, (slot, _))| (*slot, *e)).collect();
        order.sort_unstable();
        let order: Vec<u32> = order.into_iter().map(|(_, epoch)| epoch).collect();
        // In the file, a slot cut short by a crash was never synced, so nothing was sealed under it: the
        // next slot written goes over it.
        let slots = home.slots(&order)?;
        Ok(Keyring {
            master,
            system,
            epochs: RwLock::new(epochs.into_iter().map(|(e, (_, k))| (e, k)).collect()),
            slots: Mutex::new(slots),
            layout: layout.into(),
        })
    }

    /// The layout of the store ([`crate::layout`]), as the keyring says it.
    pub(crate) fn layout(&self) -> u32 {
        self.layout.load(Ordering::Acquire)
    }

    /// Whether every security record and the audit chain's head of the store are bound to the keys
    /// (layout 1 on): from then on, a record or a head without a valid MAC is refused.
    pub(crate) fn bound(&self) -> bool {
        self.layout() >= crate::layout::BOUND
    }

    /// Records, durably, that the store is at `layout`: the header's check value is written again with the
    /// text that says so. Only `switchboard migrate` and the first opening of a new store call it.
    pub(crate) fn set_layout(&self, layout: u32) -> Result<(), StorageError> {
        let mut slots = self.slots.lock().expect("keyring slots");
        slots.write_header(&header(&self.master, &self.system, layout))?;
        self.layout.store(layout, Ordering::Release);
        Ok(())
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
        if let Some(theirs) =
            slots.mint(epoch, &slot_bytes(&self.master, epoch, Some(&key)), HEADER)?
        {
            // Another node minted this epoch first: its key is the epoch's.
            key = match parse_slot(&self.master, &theirs)? {
                (_, Epoch::Live(key)) => key,
                (_, Epoch::Destroyed) => return Err(StorageError::KeyDestroyed(epoch)),
            };
        }
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
        slots.overwrite(epoch, &slot_bytes(&self.master, epoch, Some(&key)), HEADER)?;
        self.epochs
            .write()
            .expect("keyring lock")
            .insert(epoch, Epoch::Live(key));
        Ok(())
    }

    /// Reads `epoch`'s key again from the database, for a node that writes no key (a standby): a purge on
    /// the holder replaces keys this node read before. Answers whether the key held in memory changed.
    pub(crate) fn reread(&self, epoch: u32) -> Result<bool, StorageError> {
        let Some(bytes) = self.slots.lock().expect("keyring slots").read_slot(epoch)? else {
            return Ok(false);
        };
        let (found, now) = parse_slot(&self.master, &bytes)?;
        if found != epoch {
            return Err(StorageError::Keyring(format!(
                "the keyring's row of epoch {epoch} holds epoch {found}"
            )));
        }
        let mut epochs = self.epochs.write().expect("keyring lock");
        let changed = match (epochs.get(&epoch), &now) {
            (Some(Epoch::Live(held)), Epoch::Live(read)) => held.as_ref() != read.as_ref(),
            (Some(Epoch::Destroyed), Epoch::Destroyed) => false,
            _ => true,
        };
        epochs.insert(epoch, now);
        Ok(changed)
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
        slots.overwrite(epoch, &slot_bytes(&self.master, epoch, None), HEADER)?;
        self.epochs
            .write()
            .expect("keyring lock")
            .insert(epoch, Epoch::Destroyed);
        Ok(())
    }

    /// Copies the keyring file of `dir` to `target` while no key is minted or destroyed (a backup).
    pub(crate) fn copy_to(&self, dir: &Path, target: &Path) -> std::io::Result<u64> {
        self.slots
            .lock()
            .expect("keyring slots")
            .copy_file(dir, target)
    }

    /// Wraps every key of the keyring in `home` under `new` instead of `old`, replacing it whole at once:
    /// afterwards `new` opens the store and `old` is refused. Answers the live epochs re-wrapped.
    pub(crate) fn rewrap(
        home: &Home,
        old: &MasterKey,
        new: &MasterKey,
    ) -> Result<usize, StorageError> {
        let bytes = home.read()?;
        let (_, system, epochs, layout) = parse(&bytes, old, home)?;
        let cipher = new.cipher();
        let mut ordered: Vec<_> = epochs.into_iter().collect();
        ordered.sort_by_key(|(_, (slot, _))| *slot);
        let mut slots = Vec::with_capacity(ordered.len());
        let mut live = 0;
        for (epoch, (_, key)) in &ordered {
            let key = match key {
                Epoch::Live(key) => {
                    live += 1;
                    Some(key)
                }
                Epoch::Destroyed => None,
            };
            slots.push((*epoch, slot_bytes(&cipher, *epoch, key)));
        }
        home.write_whole(&header(&cipher, &system, layout), &slots)?;
        Ok(live)
    }
}

fn live(epoch: Epoch, number: u32) -> Result<Key, StorageError> {
    match epoch {
        Epoch::Live(key) => Ok(key),
        Epoch::Destroyed => Err(StorageError::KeyDestroyed(number)),
    }
}

type Parsed = (XChaCha20Poly1305, Key, HashMap<u32, (u64, Epoch)>, u32);

fn parse(bytes: &[u8], master: &MasterKey, home: &Home) -> Result<Parsed, StorageError> {
    if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
        return Err(StorageError::Keyring(format!(
            "{} is not a Switchboard keyring",
            home.describe()
        )));
    }
    let cipher = master.cipher();
    let check = &bytes[MAGIC.len()..MAGIC.len() + WRAPPED];
    let layout = match unwrap(&cipher, b"check", 0, check) {
        Some(text) if text.as_slice() == CHECK_TEXT => 0,
        Some(text) if text.as_slice() == CHECK_BOUND => 1,
        Some(text) if text.starts_with(CHECK_LAYOUT) && text.len() == CHECK_LAYOUT.len() + 4 => {
            u32::from_be_bytes(text[CHECK_LAYOUT.len()..].try_into().expect("4 bytes"))
        }
        _ => return Err(StorageError::KeyRefused),
    };
    let system = unwrap(&cipher, b"system", 0, &bytes[MAGIC.len() + WRAPPED..HEADER])
        .and_then(|k| to_key(&k))
        .ok_or_else(|| StorageError::Keyring("the system key does not open".into()))?;
    let mut epochs = HashMap::new();
    for (slot, chunk) in bytes[HEADER..].chunks_exact(SLOT).enumerate() {
        let (epoch, state) = parse_slot(&cipher, chunk)?;
        epochs.insert(epoch, (slot as u64, state));
    }
    Ok((cipher, system, epochs, layout))
}

/// One slot: its epoch and key.
fn parse_slot(cipher: &XChaCha20Poly1305, chunk: &[u8]) -> Result<(u32, Epoch), StorageError> {
    if chunk.len() != SLOT {
        return Err(StorageError::Keyring(
            "a keyring slot of the wrong size".into(),
        ));
    }
    let epoch = u32::from_be_bytes(chunk[..4].try_into().expect("4 bytes"));
    let state = match chunk[4] {
        LIVE => Epoch::Live(
            unwrap(cipher, b"epoch", epoch, &chunk[5..])
                .and_then(|k| to_key(&k))
                .ok_or_else(|| {
                    StorageError::Keyring(format!("the key of epoch {epoch} does not open"))
                })?,
        ),
        _ => Epoch::Destroyed,
    };
    Ok((epoch, state))
}

fn header(cipher: &XChaCha20Poly1305, system: &Key, layout: u32) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER);
    bytes.extend_from_slice(MAGIC);
    let check = match layout {
        0 => CHECK_TEXT.to_vec(),
        1 => CHECK_BOUND.to_vec(),
        _ => [CHECK_LAYOUT.as_slice(), &layout.to_be_bytes()].concat(),
    };
    bytes.extend_from_slice(&wrap(cipher, b"check", 0, &check));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_survive_reopening_a_wrong_key_is_refused_and_a_destroyed_epoch_stays_gone() {
        let dir = tempfile::tempdir().unwrap();
        let master = MasterKey::generate();
        let ring = Keyring::create(&Home::Dir(dir.path().into()), &master).unwrap();
        let first = ring.epoch(7).unwrap();
        let second = ring.epoch(8).unwrap();
        assert_ne!(first.as_ref(), second.as_ref());
        ring.destroy(7).unwrap();
        drop(ring);

        let err = Keyring::open(&Home::Dir(dir.path().into()), &MasterKey::generate())
            .err()
            .expect("a wrong key is refused");
        assert!(matches!(err, StorageError::KeyRefused), "{err}");

        let ring = Keyring::open(&Home::Dir(dir.path().into()), &master).unwrap();
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
        let ring = Keyring::create(&Home::Dir(dir.path().into()), &old).unwrap();
        let key = ring.epoch(3).unwrap();
        let system = ring.system().clone();
        drop(ring);
        assert_eq!(
            Keyring::rewrap(&Home::Dir(dir.path().into()), &old, &new).unwrap(),
            1
        );
        assert!(matches!(
            Keyring::open(&Home::Dir(dir.path().into()), &old),
            Err(StorageError::KeyRefused)
        ));
        let ring = Keyring::open(&Home::Dir(dir.path().into()), &new).unwrap();
        assert_eq!(ring.epoch(3).unwrap().as_ref(), key.as_ref());
        assert_eq!(ring.system().as_ref(), system.as_ref());
    }

    #[test]
    fn a_keyrings_layout_stays_through_reopening_and_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::Dir(dir.path().into());
        let (old, new) = (MasterKey::generate(), MasterKey::generate());
        let ring = Keyring::create(&home, &old).unwrap();
        let key = ring.epoch(3).unwrap();
        assert!(!ring.bound());
        assert_eq!(ring.layout(), 0);
        for layout in [1, 2, 7] {
            ring.set_layout(layout).unwrap();
            assert_eq!(Keyring::open(&home, &old).unwrap().layout(), layout);
        }
        drop(ring);
        let ring = Keyring::open(&home, &old).unwrap();
        assert!(ring.bound());
        assert_eq!(ring.epoch(3).unwrap().as_ref(), key.as_ref(), "slots kept");
        drop(ring);
        Keyring::rewrap(&home, &old, &new).unwrap();
        assert_eq!(Keyring::open(&home, &new).unwrap().layout(), 7);
    }
}
