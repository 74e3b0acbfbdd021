//! Recordings of calls, sealed like every record: files under `{data_dir}/recordings` with sled (a purged
//! recording's file is removed, and its key replaced), rows of the database with PostgreSQL, where every
//! node serves what any node downloaded.

use std::path::{Path, PathBuf};

use crate::engine::Tree;
use crate::{RequestId, StorageError, Store};

/// Where recordings are kept.
#[derive(Clone)]
pub(crate) enum Recordings {
    /// `{data_dir}/recordings`, a file per recording.
    Files(PathBuf),
    /// The `recordings` tree: file name -> sealed audio.
    Rows(Tree),
}

/// The directory of recording files in `data_dir`.
pub(crate) fn recordings_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("recordings")
}

impl Store {
    /// Keeps the audio of a call of request `owner` under `name` (`{callId}.{ext}`), sealed, durably: a
    /// file is written beside its name, synced, renamed and its directory synced, so a crash never leaves
    /// half of one, and the request's record, written next, never names a file the disk lost.
    pub async fn keep_recording(
        &self,
        owner: &RequestId,
        name: &str,
        audio: &[u8],
    ) -> Result<(), StorageError> {
        // A purged request's call may still end and download its audio: nothing is kept for it.
        if self.fetch_request(owner).await?.is_none() {
            return Err(StorageError::RequestMissing(owner.clone()));
        }
        self.write_recording(name, &self.sealer.seal_file(owner, name, audio))
    }

    /// The audio kept under `name`, opened; `None` when there is none. Audio that does not open with its
    /// key is an error.
    pub async fn recording(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let sealed = match &self.recordings {
            Recordings::Files(_) => return self.recording_under_gate(name),
            Recordings::Rows(tree) => match tree.get_async(name).await? {
                Some(bytes) => bytes.to_vec(),
                None => return Ok(None),
            },
        };
        self.sealer.open_file(name, &sealed).map(Some)
    }

    /// [`Store::recording`] inside a purge's rekey, which holds the write gate from start to end.
    pub(crate) fn recording_under_gate(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        let sealed = match &self.recordings {
            Recordings::Files(dir) => match std::fs::read(dir.join(name)) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(StorageError::from(sled::Error::Io(e))),
            },
            Recordings::Rows(tree) => match tree.get(name)? {
                Some(bytes) => bytes.to_vec(),
                None => return Ok(None),
            },
        };
        self.sealer.open_file(name, &sealed).map(Some)
    }

    /// Writes the recording `name` as `sealed`, durably, in place of any before it (a purge's rekey seals
    /// a batch-mate's audio again under the batch's new key).
    pub(crate) fn write_recording(&self, name: &str, sealed: &[u8]) -> Result<(), StorageError> {
        match &self.recordings {
            Recordings::Files(dir) => {
                let partial = dir.join(format!("{name}.part"));
                write_durably(dir, &partial, &dir.join(name), sealed)
                    .map_err(|e| StorageError::from(sled::Error::Io(e)))
            }
            Recordings::Rows(tree) => {
                tree.insert(name, sealed)?;
                Ok(())
            }
        }
    }

    /// Removes the recording kept under `name`, if there is one: a purged request's, also one kept while
    /// its request was being purged.
    pub async fn remove_recording(&self, name: &str) -> Result<(), StorageError> {
        match &self.recordings {
            Recordings::Files(dir) => match std::fs::remove_file(dir.join(name)) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(StorageError::from(sled::Error::Io(e))),
            },
            Recordings::Rows(tree) => {
                tree.remove(name)?;
                Ok(())
            }
        }
    }
}

/// Writes `bytes` to `partial`, then makes it `target`, each step on disk before the next.
fn write_durably(dir: &Path, partial: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    crate::private_files::create_dir_all(dir)?;
    let mut file = crate::private_files::create_file(partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(partial, target)?;
    std::fs::File::open(dir)?.sync_all()
}
