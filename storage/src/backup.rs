//! Backups while serving: a consistent copy of the store taken between two group commits, writes held
//! for the time the copy takes.
//!
//! sled has no online backup, and copying its files while it writes gives a copy no recovery can trust
//! (each file copied at a different moment). So every write path holds the store's write gate for reading
//! (grouped writes with their flush, writes alone, audited changes, the attempt log, settings); a backup
//! takes it for writing, flushes, and copies sled's files, the keyring and a master key kept beside the
//! data while nothing can change. Recordings are copied after the gate is released: a recording's file is
//! written before any record names it, so every file the copy's records name is already there.

use std::path::Path;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use crate::opening::sled_dir;
use crate::private_files;
use crate::seal::{BESIDE_DATA, KEYRING_FILE};
use crate::{StorageError, Store};

/// What a backup copied.
#[derive(Debug)]
pub struct Backup {
    /// Bytes written into the backup's directory.
    pub bytes: u64,
    /// How long writes were held.
    pub paused: Duration,
}

/// The gate every write passes for reading and a backup takes for writing.
pub(crate) type WriteGate = RwLock<()>;

impl Store {
    /// Copies the store in `data_dir` (this store's directory) into `target`, a new directory: its parent
    /// must exist and it must not. The copy opens with the same master key; when that key is kept beside
    /// the data, it travels with the copy. Its directories are 0700 and its files 0600, whatever the
    /// umask and the modes of the originals.
    pub fn backup(&self, data_dir: &Path, target: &Path) -> Result<Backup, StorageError> {
        let fail = |what: &str, e: std::io::Error| StorageError::Backup(format!("{what}: {e}"));
        // Private from the start: nothing copied into it is ever readable by another user.
        private_files::create_dir(target)
            .map_err(|e| fail(&format!("cannot create {}", target.display()), e))?;
        let mut bytes = 0;
        let paused = {
            let _held = self.group.gate.write().expect("write gate");
            let began = Instant::now();
            self.flush_now()?;
            bytes += copy_tree(&sled_dir(data_dir), &sled_dir(target))
                .map_err(|e| fail("cannot copy the store", e))?;
            // Under the keyring's own lock: a key is minted outside the gate, before the write it seals.
            bytes += self
                .sealer
                .copy_keyring(data_dir, &target.join(KEYRING_FILE))
                .map_err(|e| fail("cannot copy the keyring", e))?;
            // The copy's own mark, of the head it was taken at: a copy rolled back later is refused too.
            let head = self.group.chain.head().clone();
            if head.seq > 0 {
                let mark = crate::audit::mark::Mark {
                    seq: head.seq,
                    hash: head.hash,
                };
                crate::audit::mark::write(
                    &target.join(crate::audit::mark::FILE),
                    &self.sealer.binder,
                    &mark,
                )
                .map_err(|e| fail("cannot write the copy's audit mark", e))?;
            }
            let beside = data_dir.join(BESIDE_DATA);
            if beside.exists() {
                bytes += std::fs::copy(&beside, target.join(BESIDE_DATA))
                    .map_err(|e| fail("cannot copy the master key kept beside the data", e))?;
            }
            began.elapsed()
        };
        let recordings = data_dir.join("recordings");
        if recordings.exists() {
            bytes += copy_tree(&recordings, &target.join("recordings"))
                .map_err(|e| fail("cannot copy the recordings", e))?;
        }
        private_files::restrict_tree(target)
            .map_err(|e| fail("cannot make the copy private", e))?;
        sync_tree(target).map_err(|e| fail("cannot sync the copy", e))?;
        Ok(Backup { bytes, paused })
    }
}

/// Copies the files under `from` into a new `to`, skipping what is half-written (`.part`, unfinished
/// snapshots); answers the bytes copied.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<u64> {
    private_files::create_dir_all(to)?;
    let mut bytes = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.ends_with(".part") || text.ends_with(".generating") {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            bytes += copy_tree(&path, &to.join(&name))?;
        } else {
            bytes += std::fs::copy(&path, to.join(&name))?;
        }
    }
    Ok(bytes)
}

/// fsyncs every file and directory under `dir`, so the backup is on disk when it is reported done.
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            std::fs::File::open(&path)?.sync_all()?;
        }
    }
    std::fs::File::open(dir)?.sync_all()
}
