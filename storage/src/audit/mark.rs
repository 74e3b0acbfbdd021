//! The node's audit mark: the newest event this node saw on disk, kept in `{data_dir}/audit.mark`, outside
//! the log and bound to the master key. The sealed head ([`super::head`]) lives in the store, so whoever
//! rolls the whole store back (truncating sled's files, writing an old database back) rolls the head back
//! with it; the mark does not follow, and an opening whose log ends before the mark, or differs at it, is
//! refused as tampered.
//!
//! The flusher writes the mark once a flush has made its head durable, at most once a second and at every
//! stop, so it never names an event a crash could lose. On sled the sealed head says once a mark exists
//! ([`Head::marked`]): removing the mark with the log is refused too. On PostgreSQL each node keeps its own
//! and a new node starts without one, so the head says nothing of it there.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::query::event_at;
use super::Head;
use crate::engine::Tree;
use crate::seal::binding::Binder;
use crate::StorageError;

/// The mark's file name, in `data_dir`.
pub(crate) const FILE: &str = "audit.mark";
/// What the mark's MAC is bound to, as a record's tree name is.
const DOMAIN: &str = "audit.mark";
const KEY: &[u8] = b"mark";
/// Longest a durable head waits for the mark while the store is writing.
const EVERY: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Mark {
    pub(crate) seq: u64,
    pub(crate) hash: String,
}

/// The mark of one open store, and when it was last written.
pub(crate) struct MarkFile {
    path: PathBuf,
    written: Mutex<Written>,
}

struct Written {
    seq: u64,
    at: Option<Instant>,
}

impl MarkFile {
    /// The mark in `dir`, checked against the log `tree` ends with (`head`): refused when the log ends
    /// before it or differs at it, and on sled (`required`) when a head that says a mark was written
    /// finds none.
    pub(crate) fn check(
        dir: &Path,
        tree: &Tree,
        head: &Head,
        binder: &Binder,
        required: bool,
    ) -> Result<MarkFile, StorageError> {
        let path = dir.join(FILE);
        let seq = match read(&path, binder)? {
            Some(mark) => {
                holds(tree, head, &mark)?;
                mark.seq
            }
            None if required && head.marked => {
                return Err(StorageError::AuditTampered(format!(
                "{} is gone while the log's sealed head says it was written: the mark was removed \
                     with the log rolled back (restore a backup, or keep the store as evidence)",
                path.display()
            )))
            }
            None => 0,
        };
        Ok(MarkFile {
            path,
            written: Mutex::new(Written { seq, at: None }),
        })
    }

    /// Writes `head` (durable now) as the mark, unless a mark was written less than a second ago and
    /// this is not the last flush before a stop. Answers whether it wrote.
    pub(crate) fn advance(&self, head: &Head, binder: &Binder, last: bool) -> bool {
        let mut written = self.written.lock().expect("audit mark");
        let recent = written.at.is_some_and(|at| at.elapsed() < EVERY);
        if head.seq <= written.seq || (recent && !last) {
            return false;
        }
        let mark = Mark {
            seq: head.seq,
            hash: head.hash.clone(),
        };
        match write(&self.path, binder, &mark) {
            Ok(()) => {
                *written = Written {
                    seq: head.seq,
                    at: Some(Instant::now()),
                };
                true
            }
            Err(e) => {
                // Tried again a second later at the soonest, so a full disk is not a line per flush.
                written.at = Some(Instant::now());
                tracing::error!(error.message = %e, "the audit mark could not be written");
                false
            }
        }
    }

    /// The mark as it stands on disk, checked.
    pub(crate) fn read(&self, binder: &Binder) -> Result<Option<Mark>, StorageError> {
        read(&self.path, binder)
    }
}

/// The event the mark names must be in the log, unchanged.
fn holds(tree: &Tree, head: &Head, mark: &Mark) -> Result<(), StorageError> {
    let rolled_back = |what: &str| {
        StorageError::AuditTampered(format!(
            "the log {what} event {}, which this node saw on disk (its audit mark): the store was \
             truncated or rolled back. After restoring a backup on purpose, remove {FILE} from data_dir \
             on each node; otherwise keep the store as evidence",
            mark.seq
        ))
    };
    if head.seq < mark.seq {
        return Err(rolled_back(&format!("ends at event {}, before", head.seq)));
    }
    match event_at(tree, mark.seq)? {
        Some(event) if event.hash == mark.hash => Ok(()),
        _ => Err(rolled_back("differs at")),
    }
}

/// The mark at `path`, `None` when there is none.
pub(crate) fn read(path: &Path, binder: &Binder) -> Result<Option<Mark>, StorageError> {
    let stored = match std::fs::read(path) {
        Ok(stored) => stored,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(StorageError::AuditTampered(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    binder
        .check(DOMAIN, KEY, &stored)
        .and_then(|text| serde_json::from_slice(text).ok())
        .map(Some)
        .ok_or_else(|| {
            StorageError::AuditTampered(format!(
                "{} was not written with this store's master key",
                path.display()
            ))
        })
}

/// Writes `mark` to `path` whole (a sibling file renamed over it), synced with its directory.
pub(crate) fn write(path: &Path, binder: &Binder, mark: &Mark) -> std::io::Result<()> {
    let text = serde_json::to_vec(mark).expect("a mark serializes");
    let part = path.with_extension("mark.part");
    {
        let mut file = crate::private_files::create_file(&part)?;
        std::io::Write::write_all(&mut file, &binder.bind(DOMAIN, KEY, &text))?;
        file.sync_all()?;
    }
    std::fs::rename(&part, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}
