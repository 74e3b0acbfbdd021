//! Reading the audit log: pages of events oldest first with filters, the chain recomputed (hashes, links,
//! MACs, the sealed head and any checkpoints given), and checkpoints issued.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};

use super::head::Head;
use super::stored;
use super::{AuditEvent, GENESIS};
use crate::{StorageError, Store};

/// Which events a page holds.
#[derive(Clone, Debug, Default)]
pub struct AuditFilter {
    /// The actor's id.
    pub actor: Option<String>,
    /// The action.
    pub action: Option<String>,
    /// The target's id.
    pub target_id: Option<String>,
    /// At or after.
    pub since: Option<DateTime<Utc>>,
    /// Before.
    pub until: Option<DateTime<Utc>>,
}

impl AuditFilter {
    fn admits(&self, event: &AuditEvent, since: Option<&str>, until: Option<&str>) -> bool {
        self.actor.as_deref().is_none_or(|a| event.actor.id == a)
            && self.action.as_deref().is_none_or(|a| event.action == a)
            && self
                .target_id
                .as_deref()
                .is_none_or(|t| event.target.as_ref().is_some_and(|target| target.id == t))
            && since.is_none_or(|s| event.at.as_str() >= s)
            && until.is_none_or(|u| event.at.as_str() < u)
    }
}

/// One page of events.
#[derive(Debug)]
pub struct AuditPage {
    /// The events, oldest first.
    pub events: Vec<AuditEvent>,
    /// The sequence number to resume after, when more may follow.
    pub next_after: Option<u64>,
}

/// A signed statement of the chain's newest event, for an operator to keep outside the store: given back
/// to [`Store::audit_verify_with`], it proves that nothing up to it was changed or removed since.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// The event's number.
    pub seq: u64,
    /// Its hash.
    pub hash: String,
    /// When it happened, as the event says.
    pub at: String,
    /// HMAC-SHA256 of the three under a key only the master key unlocks, hex.
    pub mac: String,
}

/// The outcome of recomputing the chain.
#[derive(Debug, PartialEq, Eq)]
pub enum Verified {
    /// Every event's hash and link hold.
    Holds {
        /// Events checked.
        events: u64,
    },
    /// The first event whose hash, link or number is wrong.
    BrokenAt {
        /// Its sequence number (or the number it should have had).
        seq: u64,
    },
}

impl Store {
    /// Events after sequence number `after` that `filter` admits, oldest first, at most `limit`.
    pub async fn audit_page(
        &self,
        filter: &AuditFilter,
        after: u64,
        limit: usize,
    ) -> Result<AuditPage, StorageError> {
        let since = filter.since.map(instant);
        let until = filter.until.map(instant);
        let mut events = Vec::new();
        for event in stored::events_after(&self.audit, after) {
            let event = event?;
            if !filter.admits(&event, since.as_deref(), until.as_deref()) {
                continue;
            }
            if events.len() == limit {
                let next_after = events.last().map(|e: &AuditEvent| e.seq);
                return Ok(AuditPage { events, next_after });
            }
            events.push(event);
        }
        Ok(AuditPage {
            events,
            next_after: None,
        })
    }

    /// Recomputes every event's hash and its link to the one before, checks the MAC of every event after
    /// the anchor, and that the log reaches the sealed head.
    pub async fn audit_verify(&self) -> Result<Verified, StorageError> {
        self.audit_verify_with(&[]).await
    }

    /// [`Store::audit_verify`], and that each of `checkpoints` (each checked with
    /// [`Store::audit_checkpoint_holds`] first) still names an event of the log, unchanged. Runs on the
    /// blocking pool: it reads and hashes the whole log, which no async worker may wait on.
    pub async fn audit_verify_with(
        &self,
        checkpoints: &[Checkpoint],
    ) -> Result<Verified, StorageError> {
        let (store, checkpoints) = (self.clone(), checkpoints.to_vec());
        tokio::task::spawn_blocking(move || store.verify_chain(&checkpoints))
            .await
            .map_err(|e| StorageError::Database(format!("the audit chain's check failed: {e}")))?
    }

    fn verify_chain(&self, checkpoints: &[Checkpoint]) -> Result<Verified, StorageError> {
        let head: Head = self.group.chain.current_head(&self.audit)?;
        // This node's mark: the log must still reach it, unchanged, whatever was done to the store.
        let mark = self.group.chain.mark()?;
        let binder = &self.sealer.binder;
        let mut previous = GENESIS.to_owned();
        let mut seq = 0;
        let broken = |seq| Ok(Verified::BrokenAt { seq });
        let mut checkpointed: std::collections::HashMap<u64, Vec<&Checkpoint>> =
            std::collections::HashMap::new();
        for checkpoint in checkpoints {
            checkpointed
                .entry(checkpoint.seq)
                .or_default()
                .push(checkpoint);
        }
        for event in stored::events_after(&self.audit, 0) {
            let event = match event {
                Ok(event) => event,
                Err(StorageError::Corrupt { .. }) => return broken(seq + 1),
                Err(e) => return Err(e),
            };
            {
                seq += 1;
                let keyed = match event.mac.as_deref() {
                    Some(mac) => binder.event_mac_holds(seq, &event.hash, mac),
                    // Chained before the chain was keyed: only up to the anchor.
                    None => seq <= head.anchor_seq,
                };
                let at_anchor = seq != head.anchor_seq || event.hash == head.anchor_hash;
                let as_checkpointed = checkpointed.get(&seq).is_none_or(|kept| {
                    kept.iter()
                        .all(|c| c.hash == event.hash && c.at == event.at)
                }) && mark
                    .as_ref()
                    .is_none_or(|mark| mark.seq != seq || mark.hash == event.hash);
                if event.seq != seq
                    || event.prev_hash != previous
                    || event.computed_hash() != event.hash
                    || !keyed
                    || !at_anchor
                    || !as_checkpointed
                {
                    return broken(seq);
                }
                previous = event.hash;
            }
        }
        // Events gone from the end: the sealed head, the anchor or a checkpoint names one past the last.
        let expected = checkpoints
            .iter()
            .map(|c| c.seq)
            .chain([head.seq, head.anchor_seq])
            .chain(mark.as_ref().map(|mark| mark.seq))
            .max()
            .unwrap_or(0);
        if seq < expected {
            return broken(seq + 1);
        }
        if seq == head.seq && previous != head.hash {
            return broken(seq);
        }
        Ok(Verified::Holds { events: seq })
    }

    /// Whether `checkpoint` was issued by this store ([`Store::audit_checkpoint`]): its MAC holds.
    pub fn audit_checkpoint_holds(&self, checkpoint: &Checkpoint) -> bool {
        self.sealer.binder.checkpoint_holds(
            checkpoint.seq,
            &checkpoint.hash,
            &checkpoint.at,
            &checkpoint.mac,
        )
    }

    /// A checkpoint of the newest event written, `None` while the log is empty. The event is read back
    /// and must match the sealed head: a checkpoint never vouches for an event altered in the store.
    pub async fn audit_checkpoint(&self) -> Result<Option<Checkpoint>, StorageError> {
        let head: Head = self.group.chain.current_head(&self.audit)?;
        if head.seq == 0 {
            return Ok(None);
        }
        let event = event_at(&self.audit, head.seq)?;
        // The head in memory is the sealed one or this process's own appends: an event with its hash is
        // the one the chain vouches for.
        let event = event
            .filter(|event| event.hash == head.hash && event.computed_hash() == event.hash)
            .ok_or_else(|| {
                StorageError::AuditTampered(format!(
                    "its newest event ({}) is not the one its sealed head names: verify the log",
                    head.seq
                ))
            })?;
        Ok(Some(Checkpoint {
            mac: self
                .sealer
                .binder
                .checkpoint_mac(event.seq, &event.hash, &event.at),
            seq: event.seq,
            hash: event.hash,
            at: event.at,
        }))
    }
}

pub(crate) use super::stored::event_at;

/// The events of one stored block: one JSON object per line, in a zstd frame (plain lines in blocks
/// written before blocks were compressed; a JSON line starts with `{`, a zstd frame never does).
pub(crate) fn decode_block(block: &[u8]) -> Result<Vec<AuditEvent>, StorageError> {
    let lines = match block.first() {
        Some(b'{') | None => std::borrow::Cow::Borrowed(block),
        Some(_) => std::borrow::Cow::Owned(crate::codec::decompress("audit block", block)?),
    };
    let events = lines
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            serde_json::from_slice(line)
                .map_err(|e| corrupt(&format!("line unreadable at column {}", e.column())))
        })
        .collect();
    events
}

pub(crate) fn corrupt(reason: &str) -> StorageError {
    StorageError::Corrupt {
        kind: "audit block",
        reason: reason.to_owned(),
    }
}

/// An instant in the form events carry, so text comparison orders them.
fn instant(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}
