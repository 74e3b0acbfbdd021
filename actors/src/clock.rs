//! The one source of "now".
//!
//! Timestamps, business days, due dates, token expiry, list windows and delayed webhook rounds all read
//! [`Clock::now`]. In `system` mode that is the wall clock; in `manual` mode the calendar stands still until
//! an operator moves it (`POST /admin/v1/clock`), which lets tests and demos fast-forward days in
//! milliseconds. Anything that waits for a calendar instant subscribes to [`Clock::ticks`] and re-checks
//! when the manual clock moves.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, SubsecRound, Utc};
use tokio::sync::watch;

/// Shared handle on the process clock; clone freely.
#[derive(Clone)]
pub struct Clock {
    inner: Arc<Inner>,
}

enum Inner {
    System,
    Manual {
        now: Mutex<DateTime<Utc>>,
        ticks: watch::Sender<DateTime<Utc>>,
    },
}

/// Why the clock refused to move.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClockError {
    /// Only a manual clock can be moved.
    #[error("the clock is in system mode; only a manual clock can be moved")]
    NotManual,
    /// Moving backwards would re-open deadlines that already passed.
    #[error("the clock cannot move backwards (now {now}, asked for {requested})")]
    Backwards {
        /// The clock's current instant.
        now: String,
        /// The instant asked for.
        requested: String,
    },
}

impl Clock {
    /// The wall clock.
    pub fn system() -> Clock {
        Clock {
            inner: Arc::new(Inner::System),
        }
    }

    /// A clock that starts at `start` and moves only through [`Clock::set`].
    pub fn manual(start: DateTime<Utc>) -> Clock {
        let start = start.trunc_subsecs(6);
        let (ticks, _) = watch::channel(start);
        Clock {
            inner: Arc::new(Inner::Manual {
                now: Mutex::new(start),
                ticks,
            }),
        }
    }

    /// The current instant, at microsecond precision (the resolution of every timestamp Switchboard emits).
    pub fn now(&self) -> DateTime<Utc> {
        match &*self.inner {
            // The single place in Switchboard that reads the system time.
            Inner::System => Utc::now().trunc_subsecs(6),
            Inner::Manual { now, .. } => *now.lock().expect("clock lock"),
        }
    }

    /// Whether this is a manual clock.
    pub fn is_manual(&self) -> bool {
        matches!(&*self.inner, Inner::Manual { .. })
    }

    /// Moves a manual clock to `instant`, which must not be earlier than now.
    pub fn set(&self, instant: DateTime<Utc>) -> Result<DateTime<Utc>, ClockError> {
        let Inner::Manual { now, ticks } = &*self.inner else {
            return Err(ClockError::NotManual);
        };
        let instant = instant.trunc_subsecs(6);
        let mut current = now.lock().expect("clock lock");
        if instant < *current {
            return Err(ClockError::Backwards {
                now: current.to_rfc3339(),
                requested: instant.to_rfc3339(),
            });
        }
        *current = instant;
        drop(current);
        ticks.send_replace(instant);
        Ok(instant)
    }

    /// A receiver that changes whenever a manual clock moves; a system clock never signals, so waiters on
    /// it also keep their own wall-time timers.
    pub fn ticks(&self) -> watch::Receiver<DateTime<Utc>> {
        match &*self.inner {
            Inner::System => watch::channel(Utc::now()).1,
            Inner::Manual { ticks, .. } => ticks.subscribe(),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;

    fn start() -> DateTime<Utc> {
        "2026-11-23T14:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_manual_clock_stands_still_until_moved() {
        let clock = Clock::manual(start());
        assert_eq!(clock.now(), start());
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(clock.now(), start());
        let moved = clock.set(start() + Duration::seconds(90)).unwrap();
        assert_eq!(moved, start() + Duration::seconds(90));
        assert_eq!(clock.now(), moved);
    }

    #[test]
    fn a_manual_clock_refuses_to_move_backwards() {
        let clock = Clock::manual(start());
        let err = clock.set(start() - Duration::seconds(1)).unwrap_err();
        assert!(matches!(err, ClockError::Backwards { .. }));
        assert_eq!(clock.now(), start());
    }

    #[test]
    fn the_system_clock_cannot_be_moved() {
        let clock = Clock::system();
        assert_eq!(clock.set(start()), Err(ClockError::NotManual));
        assert!(!clock.is_manual());
    }

    #[test]
    fn moving_a_manual_clock_notifies_subscribers() {
        let clock = Clock::manual(start());
        let mut ticks = clock.ticks();
        clock.set(start() + Duration::days(1)).unwrap();
        assert!(ticks.has_changed().unwrap());
        assert_eq!(*ticks.borrow_and_update(), start() + Duration::days(1));
    }

    #[test]
    fn now_has_microsecond_resolution() {
        let clock = Clock::manual("2026-11-23T14:00:00.123456789Z".parse().unwrap());
        assert_eq!(clock.now().timestamp_subsec_nanos(), 123_456_000);
    }
}
