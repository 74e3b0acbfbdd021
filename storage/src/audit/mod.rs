//! The audit log: who did what to which id, as a hash chain (each event's hash covers the one before), in
//! the `audit` tree. The chain is keyed: each event also carries a MAC of its hash under a key only the
//! master key unlocks, and the chain's head is sealed the same way ([`head`]), so whoever can write the
//! store but lacks the key can neither rewrite events (recomputing the hashes after them) nor remove the
//! last ones unnoticed. Checkpoints ([`Checkpoint`]) carry that proof outside the store.
//!
//! Changes are recorded by the transaction that makes them: a grouped write pushes its events onto its
//! [`crate::group::Txn`], and the group appends them with its own writes. Reads are many and change nothing,
//! so they wait in memory ([`Store::audit_read`]) and join the next group, which the flusher runs within
//! [`READ_DELAY`] of the first one waiting even when nothing is written.
//!
//! Events are stored in blocks, one value per group (key: the block's first sequence number), because a key
//! per event cost sled more than the event itself: a busy reader appends tens of thousands a second.

mod canonical;
mod event;
pub(crate) mod head;
pub(crate) mod journal;
pub(crate) mod mark;
mod query;
pub(crate) mod stored;
#[cfg(any(test, feature = "test-hooks"))]
mod tampering;

pub use event::{Actor, AuditEvent, NewEvent, Target, GENESIS};

use event::Hash;
pub(crate) use head::Head;
pub use query::{AuditFilter, AuditPage, Checkpoint, Verified};
pub(crate) use stored::rows_of_block;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::engine::TxTree;
use sled::transaction::UnabortableTransactionError;

use crate::seal::Sealer;
use crate::{StorageError, Store};

/// Events in one stored block at most: a busy reader's half second of reads is tens of thousands. A block
/// is zstd-compressed (its lines share nearly everything but the hashes: about a ninth of the bytes), and
/// this many keep a block, and a leaf of sled's holding sixteen of them, small enough for sled's log,
/// where larger ones go to blob files that each leaf rewrite copies again.
const BLOCK_EVENTS: u64 = 256;

/// Longest a read event waits in memory before the flusher writes it.
pub(crate) const READ_DELAY: Duration = Duration::from_millis(500);

/// The chain's head and the read events waiting for a group.
pub(crate) struct AuditChain {
    head: Mutex<Head>,
    /// A copy of the head, never held across I/O ([`AuditChain::head_now`]).
    seen: Mutex<Head>,
    /// Keys the events' MACs and seals the head.
    pub(crate) sealer: Arc<Sealer>,
    reads: Mutex<Reads>,
    /// Where read events appended without a flush are made durable ([`journal`]); none in stores
    /// opened for tests of the flusher alone.
    journal: std::sync::OnceLock<journal::ReadJournal>,
    /// This node's mark of the newest durable event ([`mark`]); none in stores opened for tests of the
    /// flusher alone.
    mark: std::sync::OnceLock<mark::MarkFile>,
    required_mark: std::sync::atomic::AtomicBool,
    /// Whether every append reads the log's tip first: a standby's store, whose head in memory the
    /// holder's appends leave behind at once. The holder's appends chain after the head in memory and
    /// read the tip only after another node's append took the number they meant to use ([`append`]).
    read_tip: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct Reads {
    events: Vec<NewEvent>,
    since: Option<Instant>,
}

impl AuditChain {
    /// The chain as `tree` holds it; refused when its sealed head is gone or forged ([`head::load`]).
    pub(crate) fn load(
        tree: &crate::engine::Tree,
        sealer: Arc<Sealer>,
    ) -> Result<AuditChain, StorageError> {
        let head = head::load(tree, &sealer)?;
        Ok(AuditChain {
            seen: Mutex::new(head.clone()),
            head: Mutex::new(head),
            sealer,
            reads: Mutex::new(Reads::default()),
            journal: std::sync::OnceLock::new(),
            mark: std::sync::OnceLock::new(),
            required_mark: std::sync::atomic::AtomicBool::new(false),
            read_tip: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Makes every append read the log's tip first (a standby's store).
    pub(crate) fn read_tip_always(&self) {
        self.read_tip
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The head to check the log against: the one in memory on sled, where this process alone appends;
    /// on PostgreSQL the sealed head as the database holds it now, other nodes' appends included.
    pub(crate) fn current_head(&self, tree: &crate::engine::Tree) -> Result<Head, StorageError> {
        match tree {
            crate::engine::Tree::Sled(_) => Ok(self.head().clone()),
            crate::engine::Tree::Postgres(_) => {
                let stored = head::load(tree, &self.sealer)?;
                let kept = self.head().clone();
                Ok(if stored.seq >= kept.seq { stored } else { kept })
            }
        }
    }

    /// Puts back what the read journal in the sled directory `dir` holds beyond the head (a crash lost it
    /// from sled), makes it durable, and keeps the journal open for the read events to come.
    pub(crate) fn keep_read_journal(
        &self,
        dir: &std::path::Path,
        tree: &crate::engine::Tree,
        db: &crate::engine::Db,
    ) -> Result<(), StorageError> {
        let path = journal::path(dir);
        let replayed = journal::replay(&path, tree, self)?;
        if replayed > 0 {
            tracing::info!(
                events = replayed,
                "audit read events put back from the read journal"
            );
            db.flush()?;
        }
        let opened = journal::ReadJournal::open(&path)?;
        opened.clear_all()?;
        let _ = self.journal.set(opened);
        Ok(())
    }

    /// Checks this node's audit mark in `dir` against the log in `tree` (see [`mark`]), and keeps it to
    /// advance as flushes make the head durable. `required`: the engine is this node's alone (sled), so
    /// a head that says a mark was written must find it.
    pub(crate) fn keep_mark(
        &self,
        dir: &std::path::Path,
        tree: &crate::engine::Tree,
        required: bool,
    ) -> Result<(), StorageError> {
        let head = self.head().clone();
        let kept = mark::MarkFile::check(dir, tree, &head, &self.sealer.binder, required)?;
        if required && kept.read(&self.sealer.binder)?.is_some() {
            self.head().marked = true;
        }
        let _ = self.mark.set(kept);
        self.required_mark
            .store(required, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Once a flush has made everything written before it durable, `head` (taken before the flush)
    /// included: empties the read journal, whose contents are on disk in sled now, and advances the
    /// mark (`last`: the flush before a stop, written whatever the time since the previous one).
    pub(crate) fn flushed(&self, head: &Head, last: bool) {
        if let Some(journal) = self.journal.get() {
            if let Err(e) = journal.clear() {
                tracing::error!(error.message = %e, "the audit read journal could not be emptied");
            }
        }
        let Some(kept) = self.mark.get() else {
            return;
        };
        if kept.advance(head, &self.sealer.binder, last)
            && self
                .required_mark
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            // The heads written from now on say a mark exists: removing it with the log is refused.
            self.head().marked = true;
        }
    }

    /// This node's mark, as it stands on disk.
    pub(crate) fn mark(&self) -> Result<Option<mark::Mark>, StorageError> {
        match self.mark.get() {
            Some(kept) => kept.read(&self.sealer.binder),
            None => Ok(None),
        }
    }

    /// Writes the sealed head as it stands: at the one-time binding of a store from an earlier release,
    /// whose last event becomes the anchor.
    pub(crate) fn seal_head(&self, tree: &crate::engine::Tree) -> Result<(), StorageError> {
        let head = self.head();
        tree.insert(head::HEAD_KEY, head.record(&self.sealer))?;
        Ok(())
    }

    /// The head, held while a transaction appends after it.
    pub(crate) fn head(&self) -> MutexGuard<'_, Head> {
        self.head.lock().expect("audit head")
    }

    /// Queues a read event for the next group.
    pub(crate) fn push_read(&self, event: NewEvent) {
        let mut reads = self.reads.lock().expect("audit reads");
        reads.since.get_or_insert_with(Instant::now);
        reads.events.push(event);
    }

    /// Whether any read event waits.
    pub(crate) fn has_reads(&self) -> bool {
        !self.reads.lock().expect("audit reads").events.is_empty()
    }

    /// Whether read events have waited long enough that a group must run for them.
    pub(crate) fn reads_due(&self) -> bool {
        self.reads
            .lock()
            .expect("audit reads")
            .since
            .is_some_and(|since| since.elapsed() >= READ_DELAY)
    }

    /// The read events waiting, taken for a group.
    pub(crate) fn take_reads(&self) -> Vec<NewEvent> {
        let mut reads = self.reads.lock().expect("audit reads");
        reads.since = None;
        // The next group's reads are likely about as many: room for twice that now, rather than a vector
        // that grows by copying under the lock the HTTP workers take.
        let room = reads.events.len() * 2;
        std::mem::replace(&mut reads.events, Vec::with_capacity(room))
    }
}

/// Appends `events` after `head` in blocks in `audit` (inside a transaction), with the sealed head that
/// follows them; answers the new head. The caller stores it once the transaction has committed.
///
/// On PostgreSQL several nodes append to one log (the holder its changes and reads, each standby its
/// reads). The primary key on the event's number lets one append take each number, so the chain never
/// forks: an append after a head another node has moved fails on it and its transaction runs again,
/// chaining this time after the tip the transaction reads. A standby's appends always read it.
pub(crate) fn append(
    audit: &TxTree,
    chain_state: &AuditChain,
    head: &Head,
    events: impl IntoIterator<Item = NewEvent>,
) -> Result<Head, UnabortableTransactionError> {
    let tip;
    let head = match audit {
        TxTree::Postgres(tree)
            if tree.retried()
                || chain_state
                    .read_tip
                    .load(std::sync::atomic::Ordering::Relaxed) =>
        {
            tip = tip_after(tree, head)?;
            &tip
        }
        _ => head,
    };
    let (next, blocks) = chain(head, &chain_state.sealer, events);
    stored::put(audit, blocks)?;
    audit.put(head::HEAD_KEY, next.record(&chain_state.sealer))?;
    Ok(next)
}

/// `head` moved to the newest event `tree`'s transaction sees, its anchor kept. A log that ends before the
/// head in memory lost events this process wrote: refused, never chained over.
fn tip_after(
    tree: &crate::engine::postgres::PgTxTree,
    head: &Head,
) -> Result<Head, UnabortableTransactionError> {
    let line = tree.audit_last_line()?;
    head_at_tip(head, line.as_deref()).map_err(stored::unreadable)
}

/// `head` moved to the event `last` (the log's newest line, `None` for an empty log), its anchor kept.
fn head_at_tip(head: &Head, last: Option<&str>) -> Result<Head, StorageError> {
    let (seq, hash) = last
        .map(stored::tip_of)
        .transpose()?
        .unwrap_or_else(|| (0, GENESIS.to_owned()));
    if seq < head.seq {
        return Err(StorageError::AuditTampered(format!(
            "it ends at event {seq}, before event {} this node appended: verify the log",
            head.seq
        )));
    }
    Ok(Head {
        seq,
        hash,
        ..head.clone()
    })
}

impl AuditChain {
    /// An append inside a PostgreSQL transaction of the engine's own writes: `events` chained after
    /// `last` (the log's newest line as the transaction reads it), as rows of `audit_events`, and the head
    /// they end at, whose record goes with them.
    /// `kept` is the head in memory as it was before the transaction began.
    pub(crate) fn rows_after_tip(
        &self,
        kept: &Head,
        last: Option<&str>,
        events: &[NewEvent],
    ) -> Result<(Head, Vec<crate::engine::postgres::audit_events::AuditRow>), StorageError> {
        let head = head_at_tip(kept, last)?;
        let (next, blocks) = chain(&head, &self.sealer, events.iter().cloned());
        let mut rows = Vec::new();
        for (_, lines) in &blocks {
            rows.extend(stored::rows_of_block(lines)?);
        }
        Ok((next, rows))
    }

    /// The head as it can be seen without waiting: the head itself when no append holds it, else the
    /// copy the last look kept. What an append chained after the database's tip needs of it (the anchor,
    /// and how far this node's appends went), and it must not block a thread while the trees'
    /// transactions hold the head across their round trips.
    pub(crate) fn head_now(&self) -> Head {
        let mut seen = self.seen.lock().expect("audit head seen");
        if let Ok(head) = self.head.try_lock() {
            if head.seq >= seen.seq {
                *seen = head.clone();
            }
        }
        seen.clone()
    }

    /// Takes `head` as the chain's end once its append committed, unless an append since went further.
    /// An append in flight holds the head: it is left as it is, and that append, finding the number it
    /// meant to use taken, chains after the tip it reads instead.
    pub(crate) fn advance_to(&self, head: Head) {
        if let Ok(mut kept) = self.head.try_lock() {
            if head.seq > kept.seq {
                *kept = head.clone();
            }
        }
        let mut seen = self.seen.lock().expect("audit head seen");
        if head.seq > seen.seq {
            *seen = head;
        }
    }
}

/// Appends read events after the head with plain inserts, outside any transaction: reads change nothing,
/// and a transaction per half second of reads would take sled's global write lock for nothing. With
/// `unflushed` (no sled flush follows), the blocks go to the read journal too, on disk before this returns.
pub(crate) fn append_plain(
    audit: &crate::engine::Tree,
    chain_state: &AuditChain,
    events: Vec<NewEvent>,
    unflushed: bool,
) -> Result<(), StorageError> {
    if let crate::engine::Tree::Postgres(_) = audit {
        return append_shared(audit, chain_state, events);
    }
    let mut head = chain_state.head();
    let (next, blocks) = chain(&head, &chain_state.sealer, events);
    let blocks = stored::insert(audit, &blocks)?;
    // After the blocks: should a crash keep the blocks and lose this, the next opening takes the last
    // event (checked by its MAC) as the head.
    audit.insert(head::HEAD_KEY, next.record(&chain_state.sealer))?;
    *head = next;
    if let (true, Some(journal)) = (unflushed, chain_state.journal.get()) {
        journal
            .write(&blocks)
            .map_err(|e| StorageError::from(sled::Error::Io(e)))?;
    }
    Ok(())
}

/// [`append_plain`] on PostgreSQL: a transaction of its own, events and head together, so that the head
/// another node reads is always the one its events end at.
fn append_shared(
    audit: &crate::engine::Tree,
    chain_state: &AuditChain,
    events: Vec<NewEvent>,
) -> Result<(), StorageError> {
    let mut head = chain_state.head();
    let next = crate::engine::transaction(&[audit], |views| {
        Ok::<_, sled::transaction::ConflictableTransactionError<()>>(append(
            &views[0],
            chain_state,
            &head,
            events.iter().cloned(),
        )?)
    })
    .map_err(|e| match e {
        sled::transaction::TransactionError::Storage(e) => StorageError::from(e),
        sled::transaction::TransactionError::Abort(()) => StorageError::Closed,
    })?;
    *head = next;
    Ok(())
}

/// `events` chained after `head`, in blocks of at most [`BLOCK_EVENTS`] lines keyed by their first number.
fn chain(
    head: &Head,
    sealer: &Sealer,
    events: impl IntoIterator<Item = NewEvent>,
) -> (Head, stored::Blocks) {
    let mut blocks = Vec::new();
    let mut seq = head.seq;
    let mut hash = None;
    let mut block = Vec::new();
    let mut scratch = Vec::with_capacity(512);
    let mut first = head.seq + 1;
    for event in events {
        seq += 1;
        let prev = hash.as_ref().map_or(head.hash.as_str(), Hash::as_str);
        hash = Some(AuditEvent::append_line(
            &event,
            seq,
            prev,
            &sealer.binder,
            &mut scratch,
            &mut block,
        ));
        if seq + 1 - first == BLOCK_EVENTS {
            blocks.push((first, std::mem::take(&mut block)));
            first = seq + 1;
        }
    }
    if seq >= first {
        blocks.push((first, block));
    }
    let next = Head {
        seq,
        hash: hash.map_or_else(|| head.hash.clone(), |hash| hash.as_str().to_owned()),
        ..head.clone()
    };
    (next, blocks)
}
impl Store {
    /// Records a read (of a request, a recording, the audit log): written within [`READ_DELAY`], after the
    /// answer.
    pub fn audit_read(&self, event: NewEvent) {
        self.group.chain.push_read(event);
    }

    /// Records `events` now, in a transaction of their own, and waits until they are durable: for changes
    /// whose own write cannot carry them (a backup, a denied call).
    pub async fn audit_now(&self, events: Vec<NewEvent>) -> Result<(), StorageError> {
        self.group.apply_one(|txn| {
            for event in &events {
                txn.record(event.clone());
            }
            Ok(Ok(()))
        })?;
        self.durable().await
    }
}

#[cfg(test)]
mod tests;
