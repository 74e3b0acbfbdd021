//! A [`Reservation`]: places booked at the desk for one POST, given back unless its requests
//! were stored. Giving back on drop covers every way a create can end early: an insert that fails, a race
//! on an internal id lost to a concurrent POST, a client that hangs up while its POST waits.

use std::collections::BTreeMap;

use switchboard_storage::Scope;

use super::desk::BookingDesk;
use super::messages::Placement;

/// Places held for one POST's new requests.
#[derive(Debug)]
pub struct Reservation {
    scope: Scope,
    placement: Placement,
    desk: BookingDesk,
    settled: bool,
}

impl Reservation {
    pub(super) fn new(scope: Scope, placement: Placement, desk: BookingDesk) -> Reservation {
        Reservation {
            scope,
            placement,
            desk,
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
        self.desk.settle(&self.scope, &days, stored);
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.settle(false);
    }
}
