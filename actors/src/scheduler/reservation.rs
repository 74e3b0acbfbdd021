//! A [`Reservation`]: places booked in the scheduler's ledger for one POST, given back unless its requests
//! were stored. Giving back on drop covers every way a create can end early: an insert that fails, a race
//! on an internal id lost to a concurrent POST, a client that hangs up while its POST waits.

use std::collections::BTreeMap;

use actix::Recipient;
use switchboard_storage::Scope;

use super::messages::{Placement, ReleaseBookings};
use super::pending::PendingPlaces;

/// Places held for one POST's new requests.
#[derive(Debug)]
pub struct Reservation {
    scope: Scope,
    placement: Placement,
    pending: PendingPlaces,
    scheduler: Recipient<ReleaseBookings>,
    settled: bool,
}

impl Reservation {
    pub(super) fn new(
        scope: Scope,
        placement: Placement,
        pending: PendingPlaces,
        scheduler: Recipient<ReleaseBookings>,
    ) -> Reservation {
        Reservation {
            scope,
            placement,
            pending,
            scheduler,
            settled: false,
        }
    }

    /// The days reserved, one per request, and when.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// The requests are stored: their places now count as stored bookings.
    pub fn stored(mut self) {
        self.settle(true);
    }

    fn settle(&mut self, stored: bool) {
        if self.settled || self.placement.days.is_empty() {
            return;
        }
        self.settled = true;
        let mut days: BTreeMap<_, u32> = BTreeMap::new();
        for day in &self.placement.days {
            *days.entry(*day).or_default() += 1;
        }
        if stored {
            // Stored places stay in the ledger; only the tally changes, without waking the scheduler.
            self.pending.settle(&self.scope, &days);
        } else {
            // The mailbox outlives restarts of the supervised scheduler; it is gone only when the system
            // stops, and then nothing is booked any more.
            self.scheduler.do_send(ReleaseBookings {
                scope: self.scope.clone(),
                days,
            });
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.settle(false);
    }
}
