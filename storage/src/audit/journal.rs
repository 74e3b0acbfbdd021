//! The read journal: audit read events that an idle store appends to sled without a flush of their own are
//! also written here and fsynced, so they reach the disk within their delay (operator contract: reads
//! within a second) even when nothing else is written. sled's next flush makes the journal's contents
//! redundant and empties it; an opening after a crash puts back into sled the blocks that sled lost.
//!
//! A file of its own rather than a sled flush: a flush on an idle store, twice a second, deadlocked sled
//! 0.34 against other stores' transactions in one process (its flush holds a process-wide lock).
//!
//! Each record is a block as the `audit` tree stores it: its first sequence number (u64 BE), its length
//! (u32 BE), its bytes. A record torn by a crash is where reading stops; a block is put back only if its
//! events chain from the head sled holds, hashes and MACs included, and the sealed head follows them.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::query::decode_block;
use super::{AuditChain, Head};
use crate::seal::binding::Binder;
use crate::StorageError;

/// The journal's file name, beside sled's files.
pub(crate) const FILE: &str = "audit-reads.journal";

/// The open journal.
pub(crate) struct ReadJournal {
    file: Mutex<Written>,
}

struct Written {
    file: File,
    /// Whether anything was written since the journal was last emptied.
    dirty: bool,
}

impl ReadJournal {
    /// Opens (or creates) the journal at `path`.
    pub(crate) fn open(path: &Path) -> Result<ReadJournal, StorageError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| io_error(path, &e))?;
        Ok(ReadJournal {
            file: Mutex::new(Written { file, dirty: false }),
        })
    }

    /// Appends `blocks` and waits until they are on disk.
    pub(crate) fn write(&self, blocks: &[(u64, Vec<u8>)]) -> std::io::Result<()> {
        let mut written = self.file.lock().expect("read journal");
        let mut bytes = Vec::with_capacity(blocks.iter().map(|(_, b)| b.len() + 12).sum());
        for (first, block) in blocks {
            bytes.extend_from_slice(&first.to_be_bytes());
            bytes.extend_from_slice(&(block.len() as u32).to_be_bytes());
            bytes.extend_from_slice(block);
        }
        written.dirty = true;
        written.file.write_all(&bytes)?;
        written.file.sync_data()
    }

    /// Empties the journal whatever it holds: at opening, once its blocks are back in sled.
    pub(crate) fn clear_all(&self) -> Result<(), StorageError> {
        self.file.lock().expect("read journal").dirty = true;
        self.clear()
            .map_err(|e| StorageError::from(sled::Error::Io(e)))
    }

    /// Empties the journal: sled has flushed everything it held.
    pub(crate) fn clear(&self) -> std::io::Result<()> {
        let mut written = self.file.lock().expect("read journal");
        if written.dirty {
            written.file.set_len(0)?;
            written.dirty = false;
        }
        Ok(())
    }
}

/// The journal's path in the sled directory `dir`.
pub(crate) fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Puts back into `tree` the journal's blocks that follow the chain's head, each only if its events chain
/// from it; answers how many events came back. The caller flushes before the journal is emptied.
pub(crate) fn replay(
    path: &Path,
    tree: &crate::engine::Tree,
    chain: &AuditChain,
) -> Result<u64, StorageError> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut file) => file
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(path, &e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_error(path, &e)),
    };
    let mut head = chain.head();
    let start = head.seq;
    let mut rest = bytes.as_slice();
    while let Some((first, block, after)) = record(rest) {
        rest = after;
        if first <= head.seq {
            continue;
        }
        match chained(&head, first, block, &chain.sealer.binder) {
            Some(next) => {
                tree.insert(first.to_be_bytes(), block)?;
                *head = next;
            }
            None => break,
        }
    }
    if head.seq > start {
        tree.insert(super::head::HEAD_KEY, head.record(&chain.sealer))?;
    }
    Ok(head.seq - start)
}

/// The first record of `bytes`, and what follows it; `None` at the end or at a torn record.
fn record(bytes: &[u8]) -> Option<(u64, &[u8], &[u8])> {
    let first = u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
    let len = u32::from_be_bytes(bytes.get(8..12)?.try_into().ok()?) as usize;
    let block = bytes.get(12..12 + len)?;
    Some((first, block, &bytes[12 + len..]))
}

/// The head after `block` if its events, numbered from `first`, chain from `head` and carry their MACs.
fn chained(head: &Head, first: u64, block: &[u8], binder: &Binder) -> Option<Head> {
    if first != head.seq + 1 {
        return None;
    }
    let mut next = head.clone();
    for event in decode_block(block).ok()? {
        if event.seq != next.seq + 1
            || event.prev_hash != next.hash
            || event.computed_hash() != event.hash
            || !event
                .mac
                .as_deref()
                .is_some_and(|mac| binder.event_mac_holds(event.seq, &event.hash, mac))
        {
            return None;
        }
        next = Head {
            seq: event.seq,
            hash: event.hash,
            ..next
        };
    }
    Some(next)
}

fn io_error(path: &Path, error: &std::io::Error) -> StorageError {
    StorageError::from(sled::Error::Io(std::io::Error::new(
        error.kind(),
        format!("{}: {error}", path.display()),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_read_up_to_a_torn_one() {
        let mut bytes = Vec::new();
        for (first, block) in [(7u64, &b"abc"[..]), (8, &b"defgh"[..])] {
            bytes.extend_from_slice(&first.to_be_bytes());
            bytes.extend_from_slice(&(block.len() as u32).to_be_bytes());
            bytes.extend_from_slice(block);
        }
        let (first, block, rest) = record(&bytes).unwrap();
        assert_eq!((first, block), (7, &b"abc"[..]));
        let (first, block, rest) = record(rest).unwrap();
        assert_eq!((first, block, rest.len()), (8, &b"defgh"[..], 0));
        // The second record cut short by a crash: only the first is read.
        let torn = &bytes[..bytes.len() - 2];
        let (_, _, rest) = record(torn).unwrap();
        assert!(record(rest).is_none());
    }

    #[test]
    fn a_block_that_does_not_chain_from_the_head_is_not_put_back() {
        let head = Head {
            seq: 4,
            ..Head::genesis()
        };
        let binder = Binder::new(&zeroize::Zeroizing::new([3; 32]));
        assert!(
            chained(&head, 6, b"", &binder).is_none(),
            "a gap after the head"
        );
        assert!(
            chained(&head, 5, b"not json", &binder).is_none(),
            "an unreadable block"
        );
    }
}
