//! What the node holding the orchestrator lease knows of the trees its clients read most: `requests` and
//! `intake` (a read by id reads both). While it holds the lease, this process is the only one that writes
//! them (a standby forwards every change, and the fence stops a stalled holder's commits), and every write
//! it makes passes through [`super::tree::commit`], which keeps this copy. So a read outside a transaction
//! is answered from memory when the copy holds the key, and reaches PostgreSQL only for a key not seen yet.
//!
//! It also keeps `idempotency` and `bookings`, which a group of creates checks. A transaction may take a
//! value from here only as a guess ([`HolderCache::guess`]): the guess is checked by the database in the
//! transaction's own snapshot, in the round trip of its COMMIT, and a wrong one fails the attempt, which
//! then reads the database ([`super::tree::commit`]). So what a transaction decides on is always what
//! SERIALIZABLE read, even if this copy were wrong.
//!
//! A copy must never be older than the database. A commit marks the keys it writes *in flux* before its
//! statements leave and puts the new values once the COMMIT has succeeded (before its writer hears of it),
//! so a read meanwhile goes to the database. A read that missed fills the copy only if no commit of the
//! key began since the read was sent (the key would be in the map) and nothing was dropped since
//! (a failed commit, whose outcome may be unknown, or the map starting over at its bound).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::engine::Bytes;
use crate::trees;

/// Trees whose values the holder keeps.
const KEPT: [&str; 4] = [
    trees::REQUESTS,
    trees::INTAKE,
    trees::IDEMPOTENCY,
    trees::BOOKINGS,
];

/// Bytes of keys and values kept before the map starts over: a few tens of thousands of requests.
const CAPACITY_BYTES: usize = 64 << 20;

/// A key of one tree.
type Place = (Arc<str>, Bytes);

#[derive(Default)]
pub(crate) struct HolderCache {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Off until the process holds the lease; while off, nothing is answered or filled.
    serving: bool,
    entries: HashMap<Place, Entry, foldhash::fast::RandomState>,
    bytes: usize,
    /// Counts every commit's start and every drop: a read is stamped with it when sent.
    clock: u64,
    /// The clock of the last drop: a read sent before it fills nothing.
    dropped_at: u64,
}

enum Entry {
    /// The value committed (`None`: no row).
    Known(Option<Bytes>),
    /// A commit writing it is under way (how many, should two overlap).
    InFlux(u32),
}

/// What a read finds here.
pub(crate) enum Lookup {
    /// The value as committed.
    Known(Option<Bytes>),
    /// Not here: read the database, then [`HolderCache::fill`] with this stamp.
    Read(u64),
    /// The cache is off, or the tree is not kept.
    Bypass,
}

/// Whether `tree` is one the holder keeps.
pub(crate) fn kept(tree: &str) -> bool {
    KEPT.contains(&tree)
}

impl HolderCache {
    /// Starts answering reads: this process holds the lease from now on. What was known before is
    /// forgotten, as another process may have written meanwhile.
    pub(crate) fn serve(&self) {
        let mut state = self.lock();
        state.drop_all();
        state.serving = true;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("holder cache")
    }

    pub(crate) fn lookup(&self, tree: &Arc<str>, key: &[u8]) -> Lookup {
        if !kept(tree) {
            return Lookup::Bypass;
        }
        let state = self.lock();
        if !state.serving {
            return Lookup::Bypass;
        }
        match state.entries.get(&(Arc::clone(tree), Bytes::from(key))) {
            Some(Entry::Known(value)) => Lookup::Known(value.clone()),
            _ => Lookup::Read(state.clock),
        }
    }

    /// What a transaction may assume `key` holds, to be checked when it commits: the value known, or
    /// for an idempotency key not seen, none (a create's key is nearly always new; a replay's fails the
    /// check once and is read). `None`: read it.
    pub(crate) fn guess(&self, tree: &Arc<str>, key: &[u8]) -> Option<Option<Bytes>> {
        if !kept(tree) {
            return None;
        }
        let state = self.lock();
        if !state.serving {
            return None;
        }
        match state.entries.get(&(Arc::clone(tree), Bytes::from(key))) {
            Some(Entry::Known(value)) => Some(value.clone()),
            Some(Entry::InFlux(_)) => None,
            None => (&**tree == trees::IDEMPOTENCY).then_some(None),
        }
    }

    /// Keeps what a read stamped `sent` found, unless a commit or a drop may have made it old.
    pub(crate) fn fill(&self, tree: &Arc<str>, key: &[u8], value: Option<&Bytes>, sent: u64) {
        let mut state = self.lock();
        let place = (Arc::clone(tree), Bytes::from(key));
        if !state.serving || state.dropped_at > sent || state.entries.contains_key(&place) {
            return;
        }
        state.bytes += weight(&place, value);
        state.entries.insert(place, Entry::Known(value.cloned()));
        state.bound();
    }

    /// A commit writing `places` (of any tree) is about to be sent.
    pub(crate) fn begin_commit<'a>(&self, places: impl Iterator<Item = &'a Place>) {
        let mut state = self.lock();
        state.clock += 1;
        for place in places.filter(|(tree, _)| kept(tree)) {
            let old = state.entries.insert(place.clone(), Entry::InFlux(1));
            match old {
                Some(Entry::InFlux(count)) => {
                    state
                        .entries
                        .insert(place.clone(), Entry::InFlux(count + 1));
                }
                Some(Entry::Known(value)) => state.bytes -= weight(place, value.as_ref()),
                None => {}
            }
        }
    }

    /// The commit begun with `writes` ended: committed, its values are known; otherwise its keys are
    /// forgotten and every read under way fills nothing (a failed COMMIT may have committed).
    pub(crate) fn end_commit<'a>(
        &self,
        writes: impl Iterator<Item = (&'a Place, &'a Option<Bytes>)>,
        committed: bool,
    ) {
        let mut state = self.lock();
        if !committed {
            state.clock += 1;
            state.dropped_at = state.clock;
        }
        for (place, value) in writes.filter(|((tree, _), _)| kept(tree)) {
            let others = match state.entries.remove(place) {
                Some(Entry::InFlux(count)) => count - 1,
                _ => 0,
            };
            if others > 0 {
                // Another commit of the key is under way: it settles the value.
                state.entries.insert(place.clone(), Entry::InFlux(others));
            } else if committed && state.serving {
                state.bytes += weight(place, value.as_ref());
                state
                    .entries
                    .insert(place.clone(), Entry::Known(value.clone()));
            }
        }
        state.bound();
    }
}

impl State {
    /// Forgets every value known (commits under way keep their marks).
    fn drop_all(&mut self) {
        self.entries
            .retain(|_, entry| matches!(entry, Entry::InFlux(_)));
        self.bytes = 0;
        self.clock += 1;
        self.dropped_at = self.clock;
    }

    fn bound(&mut self) {
        if self.bytes > CAPACITY_BYTES {
            self.drop_all();
        }
    }
}

fn weight((tree, key): &Place, value: Option<&Bytes>) -> usize {
    tree.len() + key.len() + value.map_or(0, |value| value.len()) + 64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(key: &str) -> Place {
        (Arc::from(trees::REQUESTS), Bytes::from(key.as_bytes()))
    }

    fn known(cache: &HolderCache, key: &str) -> Option<Option<Bytes>> {
        match cache.lookup(&place(key).0, key.as_bytes()) {
            Lookup::Known(value) => Some(value),
            _ => None,
        }
    }

    fn serving() -> HolderCache {
        let cache = HolderCache::default();
        cache.serve();
        cache
    }

    #[test]
    fn a_read_sent_before_a_commit_of_its_key_fills_nothing() {
        let cache = serving();
        let Lookup::Read(sent) = cache.lookup(&place("a").0, b"a") else {
            panic!("a miss")
        };
        let write = (place("a"), Some(Bytes::from(&b"new"[..])));
        cache.begin_commit(std::iter::once(&write.0));
        // The read answered the old value while the commit was under way.
        cache.fill(&write.0 .0, b"a", Some(&Bytes::from(&b"old"[..])), sent);
        assert!(known(&cache, "a").is_none(), "in flux: read the database");
        cache.end_commit(std::iter::once((&write.0, &write.1)), true);
        assert_eq!(known(&cache, "a"), Some(Some(Bytes::from(&b"new"[..]))));
    }

    #[test]
    fn a_failed_commit_forgets_its_keys_and_the_reads_under_way() {
        let cache = serving();
        let write = (place("a"), Some(Bytes::from(&b"new"[..])));
        let Lookup::Read(sent) = cache.lookup(&place("b").0, b"b") else {
            panic!("a miss")
        };
        cache.begin_commit(std::iter::once(&write.0));
        cache.end_commit(std::iter::once((&write.0, &write.1)), false);
        assert!(known(&cache, "a").is_none());
        cache.fill(&place("b").0, b"b", None, sent);
        assert!(known(&cache, "b").is_none(), "sent before the drop");
        let Lookup::Read(sent) = cache.lookup(&place("b").0, b"b") else {
            panic!("a miss")
        };
        cache.fill(&place("b").0, b"b", None, sent);
        assert_eq!(known(&cache, "b"), Some(None), "a missing row is known too");
    }

    #[test]
    fn nothing_is_answered_before_the_lease_nor_from_other_trees() {
        let cache = HolderCache::default();
        let write = (place("a"), Some(Bytes::from(&b"v"[..])));
        cache.begin_commit(std::iter::once(&write.0));
        cache.end_commit(std::iter::once((&write.0, &write.1)), true);
        assert!(matches!(cache.lookup(&place("a").0, b"a"), Lookup::Bypass));
        cache.serve();
        assert!(matches!(
            cache.lookup(&Arc::from(trees::ACCOUNTS), b"a"),
            Lookup::Bypass
        ));
    }
}
