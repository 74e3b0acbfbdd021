//! Where each engine keeps the events. sled: blocks in the `audit` tree, one zstd frame of JSON lines per
//! block, keyed by the block's first number (a key per event cost sled more than the event). PostgreSQL:
//! the rows of `audit_events`, one per event, whose columns a DBA can query and whose `line` is the same
//! JSON line. The sealed head stays in the `audit` tree on both.

use std::collections::VecDeque;

use super::head::is_block;
use super::query::{corrupt, decode_block};
use super::AuditEvent;
use crate::engine::postgres::audit_events::AuditRow;
use crate::engine::{Iter, Tree, TxResult, TxTree};
use crate::StorageError;

/// Blocks of events, each its first number and its lines (not compressed yet).
pub(crate) type Blocks = Vec<(u64, Vec<u8>)>;

/// Stores `blocks` inside a transaction.
pub(crate) fn put(audit: &TxTree, blocks: Blocks) -> TxResult<()> {
    match audit {
        TxTree::Postgres(tree) => {
            let rows = blocks
                .iter()
                .map(|(_, lines)| rows_of_lines(lines))
                .collect::<Result<Vec<_>, _>>()
                .map_err(unreadable)?;
            tree.put_audit_rows(rows.into_iter().flatten().collect());
            Ok(())
        }
        TxTree::Sled(_) => {
            for (first, lines) in blocks {
                audit.put(&first.to_be_bytes(), crate::codec::compress(&lines))?;
            }
            Ok(())
        }
    }
}

/// Stores `blocks` with plain writes; answers the blocks as sled stored them (compressed), which the
/// read journal keeps too, and nothing on PostgreSQL, whose writes are durable when they return.
pub(crate) fn insert(audit: &Tree, blocks: &Blocks) -> Result<Blocks, StorageError> {
    match audit {
        Tree::Postgres(tree) => {
            let mut rows = Vec::new();
            for (_, lines) in blocks {
                rows.extend(rows_of_lines(lines)?);
            }
            tree.insert_audit_rows(&rows)?;
            Ok(Vec::new())
        }
        Tree::Sled(_) => {
            let mut stored = Vec::with_capacity(blocks.len());
            for (first, lines) in blocks {
                let block = crate::codec::compress(lines);
                audit.insert(first.to_be_bytes(), block.as_slice())?;
                stored.push((*first, block));
            }
            Ok(stored)
        }
    }
}

/// The rows of `audit_events` for a stored block (compressed or not), its lines kept as they were.
pub(crate) fn rows_of_block(block: &[u8]) -> Result<Vec<AuditRow>, StorageError> {
    match block.first() {
        Some(b'{') | None => rows_of_lines(block),
        Some(_) => rows_of_lines(&crate::codec::decompress("audit block", block)?),
    }
}

fn rows_of_lines(lines: &[u8]) -> Result<Vec<AuditRow>, StorageError> {
    lines
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let text = std::str::from_utf8(line).map_err(|_| corrupt("a line is not UTF-8"))?;
            let event: AuditEvent = serde_json::from_str(text)
                .map_err(|e| corrupt(&format!("line unreadable at column {}", e.column())))?;
            Ok(AuditRow {
                seq: event.seq as i64,
                at: event.at,
                action: event.action,
                actor_kind: event.actor.kind.into_owned(),
                actor_id: event.actor.id,
                target_kind: event.target.as_ref().map(|t| t.kind.clone().into_owned()),
                target_id: event.target.map(|t| t.id),
                outcome: event.outcome,
                ip: event.ip,
                prev_hash: event.prev_hash,
                hash: event.hash,
                line: text.to_owned(),
            })
        })
        .collect()
}

pub(crate) fn unreadable(e: StorageError) -> sled::transaction::UnabortableTransactionError {
    sled::transaction::UnabortableTransactionError::Storage(sled::Error::Io(std::io::Error::other(
        e.to_string(),
    )))
}

fn event_of(line: &str) -> Result<AuditEvent, StorageError> {
    serde_json::from_str(line)
        .map_err(|e| corrupt(&format!("line unreadable at column {}", e.column())))
}

/// The number and hash of the event `line` holds.
pub(crate) fn tip_of(line: &str) -> Result<(u64, String), StorageError> {
    event_of(line).map(|event| (event.seq, event.hash))
}

/// The events after number `after`, in order. An event that cannot be read is an `Err` of
/// [`StorageError::Corrupt`] (the chain is broken there); the engine's failures are other errors.
pub(crate) fn events_after(audit: &Tree, after: u64) -> Events<'_> {
    let source = match audit {
        Tree::Postgres(_) => Source::Rows(audit),
        Tree::Sled(_) => {
            let start = audit
                .range(..=(after + 1).to_be_bytes())
                .next_back()
                .and_then(Result::ok)
                .map(|(key, _)| key.to_vec())
                .filter(|key| is_block(key))
                .unwrap_or_default();
            Source::Blocks(Box::new(audit.range(start..)))
        }
    };
    Events {
        source,
        after,
        pending: VecDeque::new(),
        done: false,
    }
}

/// See [`events_after`].
pub(crate) struct Events<'a> {
    source: Source<'a>,
    /// The number of the last event handed out or skipped.
    after: u64,
    pending: VecDeque<AuditEvent>,
    done: bool,
}

enum Source<'a> {
    Blocks(Box<Iter>),
    Rows(&'a Tree),
}

impl Events<'_> {
    /// Fills `pending` with the next block's or page's events; `false` at the end.
    fn refill(&mut self) -> Result<bool, StorageError> {
        match &mut self.source {
            Source::Blocks(blocks) => loop {
                let Some(block) = blocks.next() else {
                    return Ok(false);
                };
                let (key, block) = block?;
                if !is_block(&key) {
                    continue;
                }
                let after = self.after;
                self.pending
                    .extend(decode_block(&block)?.into_iter().filter(|e| e.seq > after));
                if !self.pending.is_empty() {
                    return Ok(true);
                }
            },
            Source::Rows(Tree::Postgres(tree)) => {
                let lines = tree.audit_lines_after(self.after)?;
                for line in &lines {
                    self.pending.push_back(event_of(line)?);
                }
                Ok(!lines.is_empty())
            }
            Source::Rows(Tree::Sled(_)) => unreachable!("rows are PostgreSQL's"),
        }
    }
}

impl Iterator for Events<'_> {
    type Item = Result<AuditEvent, StorageError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.pending.is_empty() {
            match self.refill() {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let event = self.pending.pop_front()?;
        self.after = event.seq;
        Some(Ok(event))
    }
}

/// The event numbered `seq`, if it is there.
pub(crate) fn event_at(audit: &Tree, seq: u64) -> Result<Option<AuditEvent>, StorageError> {
    match audit {
        Tree::Postgres(tree) => tree
            .audit_line_at(seq)?
            .as_deref()
            .map(event_of)
            .transpose(),
        Tree::Sled(_) => {
            let block = audit.range(..=seq.to_be_bytes()).next_back().transpose()?;
            Ok(match block {
                Some((key, block)) if is_block(&key) => decode_block(&block)?
                    .into_iter()
                    .find(|event| event.seq == seq),
                _ => None,
            })
        }
    }
}

/// The newest event stored, if any.
pub(crate) fn last_event(audit: &Tree) -> Result<Option<AuditEvent>, StorageError> {
    match audit {
        Tree::Postgres(tree) => tree.audit_last_line()?.as_deref().map(event_of).transpose(),
        Tree::Sled(_) => {
            let last = audit
                .range(..super::head::HEAD_KEY)
                .rev()
                .find(|entry| entry.as_ref().map_or(true, |(key, _)| is_block(key)))
                .transpose()?;
            match last {
                Some((_, block)) => Ok(Some(
                    decode_block(&block)?
                        .into_iter()
                        .last()
                        .ok_or_else(|| corrupt("empty block"))?,
                )),
                None => Ok(None),
            }
        }
    }
}
