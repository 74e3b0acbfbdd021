//! Where the keyring lives: a file in `data_dir` beside sled, or rows of the database every PostgreSQL
//! node shares (a node's `data_dir` is its own, and every node must open what any other sealed).
//!
//! In the file a slot is overwritten in place and synced, so a replaced key is gone from `data_dir`. In
//! the database a replaced key's row is updated; PostgreSQL keeps the old row version until VACUUM reuses
//! its space and the WAL segments that hold it are recycled (docs/security.md says what that means).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::engine::{Batch, Tree};
use crate::StorageError;

/// The keyring's file name in `data_dir`.
pub const FILE: &str = "keyring";

/// The header's key among the keyring's rows; each slot's key is `e` and its epoch (u32 BE).
const HEADER_ROW: &[u8] = b"header";

/// Where a keyring is kept.
#[derive(Clone)]
pub(crate) enum Home {
    /// `{dir}/keyring`.
    Dir(PathBuf),
    /// The `keyring` tree of the database.
    Database(Tree),
}

impl Home {
    /// For messages: the file, or the database.
    pub(crate) fn describe(&self) -> String {
        match self {
            Home::Dir(dir) => dir.join(FILE).display().to_string(),
            Home::Database(_) => "the database's keyring".to_owned(),
        }
    }

    pub(crate) fn exists(&self) -> Result<bool, StorageError> {
        match self {
            Home::Dir(dir) => Ok(dir.join(FILE).exists()),
            Home::Database(tree) => Ok(tree.get(HEADER_ROW)?.is_some()),
        }
    }

    /// The header followed by every slot.
    pub(crate) fn read(&self) -> Result<Vec<u8>, StorageError> {
        match self {
            Home::Dir(dir) => {
                let path = dir.join(FILE);
                std::fs::read(&path).map_err(|e| io("read", &path, e))
            }
            Home::Database(tree) => {
                let header = tree
                    .get(HEADER_ROW)?
                    .ok_or_else(|| StorageError::Keyring("the database holds no keyring".into()))?;
                let mut bytes = header.to_vec();
                for slot in tree.scan_prefix(b"e").values() {
                    bytes.extend_from_slice(&slot?);
                }
                Ok(bytes)
            }
        }
    }

    /// Writes a new keyring of `header` alone; in a database, only where none was written yet.
    pub(crate) fn create(&self, header: &[u8]) -> Result<(), StorageError> {
        match self {
            Home::Dir(_) => self.write_whole(header, &[]),
            Home::Database(tree) => {
                // Another node's keyring, written first, is the one every node opens.
                let _ = tree.compare_and_swap(HEADER_ROW, None, Some(header))?;
                Ok(())
            }
        }
    }

    /// Replaces the whole keyring at once: a new one, or one re-wrapped under another master key.
    pub(crate) fn write_whole(
        &self,
        header: &[u8],
        slots: &[(u32, Vec<u8>)],
    ) -> Result<(), StorageError> {
        match self {
            Home::Dir(dir) => {
                let path = dir.join(FILE);
                let partial: PathBuf = dir.join(format!("{FILE}.new"));
                let written = (|| {
                    let mut file = crate::private_files::create_file(&partial)?;
                    file.write_all(header)?;
                    for (_, slot) in slots {
                        file.write_all(slot)?;
                    }
                    file.sync_all()?;
                    std::fs::rename(&partial, &path)?;
                    File::open(dir)?.sync_all()
                })();
                written.map_err(|e| io("write", &path, e))
            }
            Home::Database(tree) => {
                let mut batch = Batch::default();
                batch.insert(HEADER_ROW, header);
                for (epoch, slot) in slots {
                    batch.insert(slot_row(*epoch).as_slice(), slot.as_slice());
                }
                Ok(tree.apply_batch(batch)?)
            }
        }
    }

    /// The handle slots are written through, for a keyring of `slots` slots in the order read.
    pub(crate) fn slots(&self, order: &[u32]) -> Result<Slots, StorageError> {
        Ok(match self {
            Home::Dir(dir) => {
                let path = dir.join(FILE);
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| io("open", &path, e))?;
                Slots::File {
                    file,
                    place: order
                        .iter()
                        .enumerate()
                        .map(|(slot, epoch)| (*epoch, slot as u64))
                        .collect(),
                    next: order.len() as u64,
                }
            }
            Home::Database(tree) => Slots::Rows(tree.clone()),
        })
    }
}

/// Writes slots where they lie.
pub(crate) enum Slots {
    File {
        file: File,
        place: HashMap<u32, u64>,
        next: u64,
    },
    Rows(Tree),
}

impl Slots {
    /// Writes a new epoch's slot, unless one was written for it already (by another node): then answers
    /// that one, to be used instead.
    pub(crate) fn mint(
        &mut self,
        epoch: u32,
        bytes: &[u8],
        header: usize,
    ) -> Result<Option<Vec<u8>>, StorageError> {
        match self {
            Slots::Rows(tree) => {
                match tree.compare_and_swap(slot_row(epoch), None, Some(bytes))? {
                    Ok(()) => Ok(None),
                    Err(taken) => Ok(taken.current.map(|bytes| bytes.to_vec())),
                }
            }
            Slots::File { .. } => {
                self.overwrite(epoch, bytes, header)?;
                Ok(None)
            }
        }
    }

    /// Writes `epoch`'s slot over what it held (a new slot if it had none), durably.
    pub(crate) fn overwrite(
        &mut self,
        epoch: u32,
        bytes: &[u8],
        header: usize,
    ) -> Result<(), StorageError> {
        match self {
            Slots::Rows(tree) => {
                tree.insert(slot_row(epoch), bytes)?;
                Ok(())
            }
            Slots::File { file, place, next } => {
                let slot = *place.entry(epoch).or_insert_with(|| {
                    *next += 1;
                    *next - 1
                });
                let at = header as u64 + slot * bytes.len() as u64;
                file.write_all_at(bytes, at)
                    .and_then(|()| file.sync_data())
                    .map_err(|e| StorageError::Keyring(format!("cannot write the keyring: {e}")))
            }
        }
    }

    /// `epoch`'s slot as the database holds it now, which another node may have written since this one
    /// read the keyring (`None` for a file, which is this node's alone, or a slot never written).
    pub(crate) fn read_slot(&self, epoch: u32) -> Result<Option<Vec<u8>>, StorageError> {
        match self {
            Slots::Rows(tree) => Ok(tree.get(slot_row(epoch))?.map(|bytes| bytes.to_vec())),
            Slots::File { .. } => Ok(None),
        }
    }

    /// Writes the header over the one in place (same size), durably.
    pub(crate) fn write_header(&mut self, header: &[u8]) -> Result<(), StorageError> {
        match self {
            Slots::Rows(tree) => {
                tree.insert(HEADER_ROW, header)?;
                Ok(())
            }
            Slots::File { file, .. } => file
                .write_all_at(header, 0)
                .and_then(|()| file.sync_data())
                .map_err(|e| StorageError::Keyring(format!("cannot write the keyring: {e}"))),
        }
    }

    /// Copies the keyring file to `target` (a backup; the database is backed up by its own means).
    pub(crate) fn copy_file(&self, dir: &Path, target: &Path) -> std::io::Result<u64> {
        match self {
            Slots::File { .. } => std::fs::copy(dir.join(FILE), target),
            Slots::Rows(_) => Err(std::io::Error::other(
                "the keyring is in the database: back the database up instead",
            )),
        }
    }
}

fn slot_row(epoch: u32) -> Vec<u8> {
    let mut key = b"e".to_vec();
    key.extend_from_slice(&epoch.to_be_bytes());
    key
}

fn io(what: &str, path: &Path, e: std::io::Error) -> StorageError {
    StorageError::Keyring(format!("cannot {what} {}: {e}", path.display()))
}
