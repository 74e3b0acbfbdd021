//! Binding to the master key what is stored without being sealed: the security records (operators and
//! their token index, accounts and their key index, schemas, payers, the manual clock) and the audit
//! chain. Sealing hides values; binding makes them unforgeable: each carries an HMAC-SHA256 under a key
//! that only the master key unlocks, so whoever can write the store but lacks the key cannot add, swap or
//! alter one unnoticed (they can still delete, which the audit chain's sealed head and checkpoints
//! reveal for the audit log).
//!
//! The keys are HKDF-derived from the keyring's system key, which the master key wraps: rotating the
//! master key re-wraps the system key and leaves every MAC, and every checkpoint an operator exported,
//! valid.
//!
//! A bound record is its value followed by its 32-byte tag over the tree's name, the key and the value,
//! so a record copied under another key or into another tree does not verify either.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::derive;
use super::keyring::Key;
use crate::StorageError;

type HmacSha256 = Hmac<Sha256>;

/// Bytes of a record's tag, after its value.
pub(crate) const TAG: usize = 32;

/// The MAC keys of one open store.
pub(crate) struct Binder {
    records: HmacSha256,
    chain: HmacSha256,
    checkpoints: HmacSha256,
}

impl Binder {
    pub(crate) fn new(system: &Key) -> Binder {
        let keyed = |purpose: &[u8]| {
            <HmacSha256 as Mac>::new_from_slice(derive(system, purpose).as_ref())
                .expect("HMAC takes any key length")
        };
        Binder {
            records: keyed(b"record mac"),
            chain: keyed(b"audit chain mac"),
            checkpoints: keyed(b"audit checkpoint mac"),
        }
    }

    /// `value` as stored under `key` in `tree`: followed by its tag.
    pub(crate) fn bind(&self, tree: &str, key: &[u8], value: &[u8]) -> Vec<u8> {
        let tag = self.record_mac(tree, key, value).finalize().into_bytes();
        let mut stored = Vec::with_capacity(value.len() + TAG);
        stored.extend_from_slice(value);
        stored.extend_from_slice(&tag);
        stored
    }

    /// The value `stored` holds, if its tag is this store's for `key` in `tree`.
    pub(crate) fn check<'a>(&self, tree: &str, key: &[u8], stored: &'a [u8]) -> Option<&'a [u8]> {
        let split = stored.len().checked_sub(TAG)?;
        let (value, tag) = stored.split_at(split);
        self.record_mac(tree, key, value)
            .verify_slice(tag)
            .ok()
            .map(|()| value)
    }

    /// [`Binder::check`], a refusal (logged) when the tag is missing or wrong.
    pub(crate) fn open<'a>(
        &self,
        tree: &'static str,
        key: &[u8],
        stored: &'a [u8],
    ) -> Result<&'a [u8], StorageError> {
        self.check(tree, key, stored).ok_or_else(|| refused(tree))
    }

    fn record_mac(&self, tree: &str, key: &[u8], value: &[u8]) -> HmacSha256 {
        let mut mac = self.records.clone();
        mac.update(tree.as_bytes());
        mac.update(&[0]);
        mac.update(&(key.len() as u64).to_be_bytes());
        mac.update(key);
        mac.update(value);
        mac
    }

    /// The MAC of the audit event `seq` whose hash is `hash` (which covers the event and, through its
    /// `prevHash`, every event before it), as hex.
    pub(crate) fn event_mac(&self, seq: u64, hash: &str) -> [u8; 64] {
        let tag = self.event(seq, hash).finalize().into_bytes();
        let mut hex = [0; 64];
        hex::encode_to_slice(tag, &mut hex).expect("32 bytes are 64 hex digits");
        hex
    }

    /// Whether `mac` (hex) is the MAC of event `seq` with `hash`.
    pub(crate) fn event_mac_holds(&self, seq: u64, hash: &str, mac: &str) -> bool {
        hex::decode(mac).is_ok_and(|tag| self.event(seq, hash).verify_slice(&tag).is_ok())
    }

    fn event(&self, seq: u64, hash: &str) -> HmacSha256 {
        let mut mac = self.chain.clone();
        mac.update(b"event\0");
        mac.update(&seq.to_be_bytes());
        mac.update(hash.as_bytes());
        mac
    }

    /// The MAC of a checkpoint (the event `seq` with `hash`, made `at`), as hex.
    pub(crate) fn checkpoint_mac(&self, seq: u64, hash: &str, at: &str) -> String {
        hex::encode(self.checkpoint(seq, hash, at).finalize().into_bytes())
    }

    /// Whether `mac` (hex) is the MAC this store gives the checkpoint `seq`, `hash`, `at`.
    pub(crate) fn checkpoint_holds(&self, seq: u64, hash: &str, at: &str, mac: &str) -> bool {
        hex::decode(mac).is_ok_and(|tag| self.checkpoint(seq, hash, at).verify_slice(&tag).is_ok())
    }

    fn checkpoint(&self, seq: u64, hash: &str, at: &str) -> HmacSha256 {
        let mut mac = self.checkpoints.clone();
        mac.update(&seq.to_be_bytes());
        mac.update(&(hash.len() as u64).to_be_bytes());
        mac.update(hash.as_bytes());
        mac.update(at.as_bytes());
        mac
    }
}

/// The refusal of a record whose tag is missing or wrong, logged by tree only: the key may be an API key
/// or a token's digest, and the value a secret's.
pub(crate) fn refused(tree: &'static str) -> StorageError {
    tracing::warn!(
        tree,
        "refused a record without this store's MAC (written without the master key, or altered)"
    );
    StorageError::Unbound { tree }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeroize::Zeroizing;

    fn binder(byte: u8) -> Binder {
        Binder::new(&Zeroizing::new([byte; 32]))
    }

    #[test]
    fn a_record_verifies_only_under_its_own_tree_key_and_store() {
        let ours = binder(1);
        let stored = ours.bind("operators", b"alice", b"\x01{}");
        assert_eq!(
            ours.check("operators", b"alice", &stored),
            Some(&b"\x01{}"[..])
        );
        assert_eq!(ours.check("operators", b"bob", &stored), None, "moved");
        assert_eq!(ours.check("accounts", b"alice", &stored), None, "moved");
        assert_eq!(binder(2).check("operators", b"alice", &stored), None);
        assert_eq!(ours.check("operators", b"alice", b"\x01{}"), None, "no tag");
        let mut altered = stored.clone();
        altered[1] = b'[';
        assert_eq!(ours.check("operators", b"alice", &altered), None);
    }

    #[test]
    fn event_and_checkpoint_macs_verify_for_what_they_cover_only() {
        let ours = binder(1);
        let mac = ours.event_mac(7, "ab");
        let mac = std::str::from_utf8(&mac).unwrap();
        assert!(ours.event_mac_holds(7, "ab", mac));
        assert!(!ours.event_mac_holds(8, "ab", mac));
        assert!(!ours.event_mac_holds(7, "ac", mac));
        assert!(!ours.event_mac_holds(7, "ab", "not hex"));
        let checkpoint = ours.checkpoint_mac(7, "ab", "2026-11-23T14:00:00.000000Z");
        assert!(ours.checkpoint_holds(7, "ab", "2026-11-23T14:00:00.000000Z", &checkpoint));
        assert!(!ours.checkpoint_holds(7, "ab", "2026-11-23T14:00:00.000001Z", &checkpoint));
        assert!(!ours.checkpoint_holds(7, "ab", "2026-11-23T14:00:00.000000Z", mac));
        assert!(!binder(2).checkpoint_holds(7, "ab", "2026-11-23T14:00:00.000000Z", &checkpoint));
    }
}
