//! A standby's keys stay current, with no query on a read that opens.
//!
//! The holder's purges replace keys: a batch that shared its key with a purged request gets a new one, kept
//! in `data_keys`, and its values are sealed again under it; the other owners of the purged hour get their
//! data keys kept there too; and the hour's epoch key in the keyring is replaced, so what the holder seals
//! for that hour from then on is under its new key. A standby writes none of them, and holds what it read
//! at opening. So when a value does not open with the keys it holds, it reads that owner's entry and the
//! value's epoch key again, and tries once more: only then is the value refused.

use super::{header, Sealed, Sealer, FILE_MARK, MARK, SYSTEM_EPOCH};
use crate::engine::Tree;
use crate::StorageError;

impl Sealer {
    /// Makes this sealer read keys again when a value does not open (a standby's), from `data_keys` and
    /// the keyring's rows.
    pub(crate) fn follow(&self, data_keys: Tree) {
        let _ = self.following.set(data_keys);
    }

    /// The plain bytes of the sealed value under `key` in `tree`. A value that is not sealed, was sealed
    /// for another place, or was altered does not open.
    pub(crate) fn open(
        &self,
        tree: Sealed,
        key: &[u8],
        sealed: &[u8],
    ) -> Result<Vec<u8>, StorageError> {
        let refused = match self.open_held(tree, key, sealed) {
            Ok(plain) => return Ok(plain),
            Err(refused) => refused,
        };
        match header(sealed, MARK) {
            Some((epoch, _))
                if !tree.by_system_key() && self.caught_up(&tree.owner(key), epoch)? =>
            {
                self.open_held(tree, key, sealed)
            }
            _ => Err(refused),
        }
    }

    /// The bytes of the sealed recording file `name`.
    pub(crate) fn open_file(&self, name: &str, file: &[u8]) -> Result<Vec<u8>, StorageError> {
        let refused = match self.open_file_held(name, file) {
            Ok(audio) => return Ok(audio),
            Err(refused) => refused,
        };
        match file_owner(file) {
            Some((owner, epoch)) if self.caught_up(owner, epoch)? => {
                self.open_file_held(name, file)
            }
            _ => Err(refused),
        }
    }

    /// Reads again the keys that open `owner`'s values sealed under `epoch`: its kept data key, and the
    /// epoch's key (the keys derived before are forgotten when it changed). `false` when this sealer does
    /// not follow the database: a holder's keys change only by its own purges, which it holds in memory.
    fn caught_up(&self, owner: &[u8], epoch: u32) -> Result<bool, StorageError> {
        let Some(data_keys) = self.following.get() else {
            return Ok(false);
        };
        self.overrides.reload(owner, data_keys, &self.keyring)?;
        if epoch != SYSTEM_EPOCH && self.keyring.reread(epoch)? {
            self.derived.write().expect("derived keys").clear();
        }
        Ok(true)
    }
}

/// The owner a sealed recording file names, and the epoch of its key.
fn file_owner(file: &[u8]) -> Option<(&[u8], u32)> {
    let (&length, rest) = file.get(1..)?.split_first()?;
    let owner = rest.get(..usize::from(length))?;
    let (epoch, _) = header(&rest[usize::from(length)..], FILE_MARK)?;
    Some((owner, epoch))
}
