//! Reading the audit log: pages of events oldest first with filters, and the chain recomputed.

use chrono::{DateTime, SecondsFormat, Utc};

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
    pub fn audit_page(
        &self,
        filter: &AuditFilter,
        after: u64,
        limit: usize,
    ) -> Result<AuditPage, StorageError> {
        let since = filter.since.map(instant);
        let until = filter.until.map(instant);
        let mut events = Vec::new();
        let start = self
            .audit
            .range(..=(after + 1).to_be_bytes())
            .next_back()
            .transpose()?
            .map(|(key, _)| key.to_vec())
            .unwrap_or_default();
        for block in self.audit.range(start..) {
            let (_, block) = block?;
            for event in decode_block(&block)? {
                if event.seq <= after || !filter.admits(&event, since.as_deref(), until.as_deref())
                {
                    continue;
                }
                if events.len() == limit {
                    let next_after = events.last().map(|e: &AuditEvent| e.seq);
                    return Ok(AuditPage { events, next_after });
                }
                events.push(event);
            }
        }
        Ok(AuditPage {
            events,
            next_after: None,
        })
    }

    /// Recomputes every event's hash and its link to the one before.
    pub fn audit_verify(&self) -> Result<Verified, StorageError> {
        let mut previous = GENESIS.to_owned();
        let mut seq = 0;
        for block in self.audit.iter() {
            let (_, block) = block?;
            let Ok(events) = decode_block(&block) else {
                return Ok(Verified::BrokenAt { seq: seq + 1 });
            };
            for event in events {
                seq += 1;
                if event.seq != seq
                    || event.prev_hash != previous
                    || event.computed_hash() != event.hash
                {
                    return Ok(Verified::BrokenAt { seq });
                }
                previous = event.hash;
            }
        }
        Ok(Verified::Holds { events: seq })
    }
}

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
