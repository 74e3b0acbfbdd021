//! One count of failures: a window per key or address, opened by its first failure. Once a window holds
//! its limit of failures, every call of that key or address is refused until the window ends; the
//! refusals are counted for one audit event when it does. The table never holds more than its capacity.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

use super::Denial;

/// How often, at most, a full table looks for windows it can drop: a flood of new keys finds the table
/// full on every call, and one scan a second is enough to make room as windows end.
const PURGE_EVERY: Duration = Duration::from_secs(1);

/// A window that ended with calls refused in it: one audit event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ended {
    /// The last failure counted in the window, as the event describes it.
    pub denial: Denial,
    /// Calls refused while the window was full.
    pub refused: u64,
}

struct Window {
    started: Instant,
    failures: u32,
    refused: u64,
    denial: Denial,
}

pub(super) struct Table<K> {
    windows: HashMap<K, Window>,
    ended: Vec<Ended>,
    limit: u32,
    length: Duration,
    capacity: usize,
    next_purge: Option<Instant>,
}

impl<K: Hash + Eq> Table<K> {
    pub(super) fn new(limit: u32, length: Duration, capacity: usize) -> Table<K> {
        Table {
            windows: HashMap::new(),
            ended: Vec::new(),
            limit,
            length,
            capacity,
            next_purge: None,
        }
    }

    /// How long `key` is still refused, counting this call as refused; `None` when it may go on.
    pub(super) fn refused(&mut self, key: &K, now: Instant) -> Option<Duration> {
        let window = self.windows.get_mut(key)?;
        let ends = window.started + self.length;
        if now >= ends || window.failures < self.limit {
            return None;
        }
        window.refused += 1;
        Some(ends - now)
    }

    /// Counts a failure of `key`, opening its window if it has none (or only an ended one).
    pub(super) fn failed(&mut self, key: K, now: Instant, denial: Denial) {
        if let Some(window) = self.windows.get_mut(&key) {
            if now < window.started + self.length {
                window.failures = window.failures.saturating_add(1);
                window.denial = denial;
                return;
            }
            let ended = self.windows.remove(&key).expect("just found");
            self.keep_ended(ended);
        }
        if self.windows.len() >= self.capacity {
            self.make_room(now);
            if self.windows.len() >= self.capacity {
                // Every window is refusing someone: this key goes uncounted until some end.
                return;
            }
        }
        self.windows.insert(
            key,
            Window {
                started: now,
                failures: 1,
                refused: 0,
                denial,
            },
        );
    }

    /// Drops the windows that have ended and answers those with refusals, for the audit log.
    pub(super) fn take_ended(&mut self, now: Instant) -> Vec<Ended> {
        self.drop_ended(now);
        std::mem::take(&mut self.ended)
    }

    /// Every window with refusals, ended or not, and empties the table: at shutdown.
    pub(super) fn take_all(&mut self) -> Vec<Ended> {
        for (_, window) in self.windows.drain() {
            if window.refused > 0 {
                self.ended.push(Ended {
                    denial: window.denial,
                    refused: window.refused,
                });
            }
        }
        std::mem::take(&mut self.ended)
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.windows.len()
    }

    fn drop_ended(&mut self, now: Instant) {
        let length = self.length;
        let ended = &mut self.ended;
        self.windows.retain(|_, window| {
            let live = now < window.started + length;
            if !live && window.refused > 0 {
                ended.push(Ended {
                    denial: window.denial.clone(),
                    refused: window.refused,
                });
            }
            live
        });
    }

    /// Drops ended windows, then those that refuse no one yet: they lose at most `limit - 1` failures
    /// each, where keeping them would stop counting new keys altogether.
    fn make_room(&mut self, now: Instant) {
        if self.next_purge.is_some_and(|next| now < next) {
            return;
        }
        self.next_purge = Some(now + PURGE_EVERY);
        self.drop_ended(now);
        if self.windows.len() >= self.capacity {
            let limit = self.limit;
            self.windows
                .retain(|_, window| window.failures >= limit || window.refused > 0);
        }
    }

    fn keep_ended(&mut self, window: Window) {
        if window.refused > 0 {
            self.ended.push(Ended {
                denial: window.denial,
                refused: window.refused,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use switchboard_storage::audit::Actor;

    use super::*;

    const WINDOW: Duration = Duration::from_secs(60);

    fn denial(id: &str) -> Denial {
        Denial {
            actor: Actor::api_key(id),
            action: "auth.token",
            target: None,
            ip: None,
        }
    }

    #[test]
    fn the_limit_th_failure_closes_the_window_until_it_ends() {
        let mut table = Table::new(3, WINDOW, 10);
        let t0 = Instant::now();
        for n in 0..3 {
            assert_eq!(table.refused(&"k", t0), None, "before failure {n}");
            table.failed("k", t0 + Duration::from_secs(n), denial("k"));
        }
        assert_eq!(
            table.refused(&"k", t0 + Duration::from_secs(10)),
            Some(Duration::from_secs(50))
        );
        assert_eq!(table.refused(&"other", t0), None);
        assert_eq!(table.refused(&"k", t0 + WINDOW), None, "the window ended");
    }

    #[test]
    fn an_ended_window_with_refusals_is_one_event_with_their_count() {
        let mut table = Table::new(1, WINDOW, 10);
        let t0 = Instant::now();
        table.failed("k", t0, denial("k"));
        for _ in 0..20_000 {
            assert!(table.refused(&"k", t0 + Duration::from_secs(1)).is_some());
        }
        assert_eq!(table.take_ended(t0 + Duration::from_secs(59)), vec![]);
        assert_eq!(
            table.take_ended(t0 + WINDOW),
            vec![Ended {
                denial: denial("k"),
                refused: 20_000
            }]
        );
        assert_eq!(table.len(), 0);
        assert_eq!(table.take_ended(t0 + WINDOW * 2), vec![], "only once");
    }

    #[test]
    fn a_failure_after_the_window_opens_a_new_one_and_keeps_the_old_ones_refusals() {
        let mut table = Table::new(1, WINDOW, 10);
        let t0 = Instant::now();
        table.failed("k", t0, denial("k"));
        assert!(table.refused(&"k", t0).is_some());
        table.failed("k", t0 + WINDOW, denial("k"));
        assert!(table.refused(&"k", t0 + WINDOW).is_some(), "a new window");
        assert_eq!(
            table.take_ended(t0 + WINDOW).len(),
            1,
            "the old one's refusal"
        );
    }

    #[test]
    fn a_full_table_drops_ended_and_harmless_windows_and_never_grows_past_its_capacity() {
        let mut table = Table::new(2, WINDOW, 100);
        let t0 = Instant::now();
        // A key that is refusing calls survives every purge.
        table.failed(u32::MAX, t0, denial("target"));
        table.failed(u32::MAX, t0, denial("target"));
        for n in 0..100_000u32 {
            table.failed(
                n,
                t0 + Duration::from_millis(u64::from(n) / 10),
                denial("junk"),
            );
            assert!(table.len() <= 100);
        }
        assert!(table
            .refused(&u32::MAX, t0 + Duration::from_secs(30))
            .is_some());
        // With every slot refusing someone, a new key is not counted (and nothing grows).
        let mut full = Table::new(1, WINDOW, 2);
        full.failed(1, t0, denial("a"));
        full.failed(2, t0, denial("b"));
        full.failed(3, t0 + Duration::from_secs(2), denial("c"));
        assert_eq!(full.len(), 2);
        assert!(full.refused(&3, t0 + Duration::from_secs(2)).is_none());
    }

    #[test]
    fn shutdown_takes_the_refusals_of_windows_still_open() {
        let mut table = Table::new(1, WINDOW, 10);
        let t0 = Instant::now();
        table.failed("k", t0, denial("k"));
        table.failed("quiet", t0, denial("quiet"));
        table.refused(&"k", t0);
        assert_eq!(
            table.take_all(),
            vec![Ended {
                denial: denial("k"),
                refused: 1
            }]
        );
        assert_eq!(table.len(), 0);
    }
}
