//! The chain's sealed head: the last event's number and hash, and the anchor (the head when the chain
//! became keyed), bound to the keys ([`crate::seal::binding`]) and kept in the `audit` tree under
//! [`HEAD_KEY`]. It is rewritten with every append, in the same transaction as the blocks of a grouped or
//! audited write, so removing the last events (or every block) leaves a head that names events no longer
//! there; replacing it needs the master key. A store whose keyring says it is bound and whose head is gone
//! was truncated or replaced: it does not open.
//!
//! Events up to the anchor were chained before events carried MACs (a store from an earlier release):
//! they are checked by hash, and the anchor's hash, under the head's MAC, ties them to the keyed events
//! after it.

use super::GENESIS;
use crate::engine::Tree;
use crate::seal::Sealer;
use crate::{trees, StorageError};

/// The head's key in the `audit` tree. Blocks are keyed by 8 bytes; this one is not, and sorts after
/// every block whose first number is below 0x68 << 56.
pub(crate) const HEAD_KEY: &[u8] = b"head";

/// Whether `key` in the `audit` tree is a block's (not the head's).
pub(crate) fn is_block(key: &[u8]) -> bool {
    key.len() == 8
}

/// The end of the chain, and where its keyed part begins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub(crate) seq: u64,
    pub(crate) hash: String,
    /// The last event chained without a MAC (0 for a store keyed from its first event).
    pub(crate) anchor_seq: u64,
    pub(crate) anchor_hash: String,
    /// Whether this node's audit mark ([`super::mark`]) was written for the store: from then on, on
    /// sled, an opening without the mark is refused.
    pub(crate) marked: bool,
}

const HASH: usize = 64;
/// A head written before marks, without the flag.
const UNMARKED: usize = 2 * (8 + HASH);
const ENCODED: usize = UNMARKED + 1;

impl Head {
    /// The head of an empty chain, keyed from its first event.
    #[cfg(test)]
    pub(crate) fn genesis() -> Head {
        Head {
            seq: 0,
            hash: GENESIS.to_owned(),
            anchor_seq: 0,
            anchor_hash: GENESIS.to_owned(),
            marked: false,
        }
    }

    /// The head record as stored: bound to the keys.
    pub(crate) fn record(&self, sealer: &Sealer) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(ENCODED);
        bytes.extend_from_slice(&self.anchor_seq.to_be_bytes());
        bytes.extend_from_slice(self.anchor_hash.as_bytes());
        bytes.extend_from_slice(&self.seq.to_be_bytes());
        bytes.extend_from_slice(self.hash.as_bytes());
        bytes.push(u8::from(self.marked));
        sealer.binder.bind(trees::AUDIT, HEAD_KEY, &bytes)
    }

    fn decode(bytes: &[u8]) -> Option<Head> {
        let marked = match bytes.len() {
            UNMARKED => false,
            ENCODED => bytes[UNMARKED] == 1,
            _ => return None,
        };
        let number = |at: usize| u64::from_be_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let text = |at: usize| {
            std::str::from_utf8(&bytes[at..at + HASH])
                .ok()
                .map(str::to_owned)
        };
        Some(Head {
            anchor_seq: number(0),
            anchor_hash: text(8)?,
            seq: number(8 + HASH),
            hash: text(16 + HASH)?,
            marked,
        })
    }
}

/// The head of the chain in `tree` at opening. In a bound store it is the sealed head (or the last event,
/// when a crash lost the head's update after read events were appended: verification checks those
/// events' MACs); before the store is bound, the last event, which becomes the anchor.
pub(crate) fn load(tree: &Tree, sealer: &Sealer) -> Result<Head, StorageError> {
    let tip = super::stored::last_event(tree)?
        .map_or_else(|| (0, GENESIS.to_owned()), |event| (event.seq, event.hash));
    if !sealer.keyring.bound() {
        return Ok(Head {
            seq: tip.0,
            hash: tip.1.clone(),
            anchor_seq: tip.0,
            anchor_hash: tip.1,
            marked: false,
        });
    }
    let stored = tree.get(HEAD_KEY)?.ok_or_else(|| {
        StorageError::AuditTampered(
            "its sealed head is missing: the log was truncated or replaced by someone without the \
             master key (restore a backup, or keep the store as evidence)"
                .into(),
        )
    })?;
    let head = sealer
        .binder
        .check(trees::AUDIT, HEAD_KEY, &stored)
        .and_then(Head::decode)
        .ok_or_else(|| {
            StorageError::AuditTampered(
                "its sealed head does not carry this store's MAC: it was written without the master key"
                    .into(),
            )
        })?;
    Ok(if tip.0 > head.seq {
        Head {
            seq: tip.0,
            hash: tip.1,
            ..head
        }
    } else {
        head
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_reads_back_as_written() {
        let head = Head {
            seq: 9,
            hash: "a".repeat(64),
            anchor_seq: 4,
            anchor_hash: "b".repeat(64),
            marked: false,
        };
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&4u64.to_be_bytes());
        bytes.extend_from_slice("b".repeat(64).as_bytes());
        bytes.extend_from_slice(&9u64.to_be_bytes());
        bytes.extend_from_slice("a".repeat(64).as_bytes());
        assert_eq!(Head::decode(&bytes), Some(head));
        assert_eq!(Head::decode(&bytes[1..]), None);
        bytes.push(1);
        let marked = Head::decode(&bytes).expect("a head with its mark flag");
        assert!(marked.marked);
        assert_eq!(marked.seq, 9);
    }
}
