//! The capacity-scheduler actor: owner of the booking ledgers. Its handler is the create path's only
//! serial section and touches memory only: the store transaction and the flush run outside it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use actix::{Actor, AsyncContext, Context, Handler, Supervised};
use chrono::{Days, NaiveDate};
use switchboard_storage::{Scope, Store};

use super::messages::{BookRequests, BookingError, Placement, ReleaseBookings};
use super::pending::{decrement, PendingPlaces};
use super::reservation::Reservation;
use super::{place, HORIZON_DAYS};
use crate::calendar::local_date;
use crate::supervision::{guarded, InjectPanic, Singleton};
use crate::{Clock, Metrics};

/// Places per day of one scope from `from` on: stored bookings plus places reserved by POSTs in flight.
struct Ledger {
    from: NaiveDate,
    days: BTreeMap<NaiveDate, u32>,
}

/// Books new requests onto business days. Handling one reservation at a time per process is what keeps
/// capacity from being overbooked; each reservation costs a placement over an in-memory map.
pub struct CapacityScheduler {
    store: Store,
    clock: Clock,
    metrics: Arc<Metrics>,
    ledgers: HashMap<Scope, Ledger>,
    /// Places reserved and not yet settled, shared with the reservations. They survive a restart (the
    /// POSTs holding them are still running), and are added to the stored bookings whenever a ledger is
    /// loaded.
    pending: PendingPlaces,
}

impl CapacityScheduler {
    /// A scheduler over `store`, reading days from `clock`, counting restarts in `metrics`.
    pub fn new(store: Store, clock: Clock, metrics: Arc<Metrics>) -> CapacityScheduler {
        CapacityScheduler {
            store,
            clock,
            metrics,
            ledgers: HashMap::new(),
            pending: PendingPlaces::default(),
        }
    }

    /// The ledger of `scope` from `today`. Loaded from the store once; when the date moves on, past days
    /// are dropped instead: every booking up to the new horizon was made by this ledger or loaded with it,
    /// since nothing is booked beyond the horizon of the day it was booked on.
    fn ledger(&mut self, scope: &Scope, today: NaiveDate) -> Result<&mut Ledger, BookingError> {
        let usable = self.ledgers.get(scope).is_some_and(|l| l.from <= today);
        if !usable {
            let last = today
                .checked_add_days(Days::new(HORIZON_DAYS))
                .unwrap_or(NaiveDate::MAX);
            // Pending first: a request stored meanwhile is then counted twice, never missed.
            let pending = self.pending.of(scope);
            let mut days = self.store.bookings(scope, today, last)?;
            for (day, count) in pending {
                *days.entry(day).or_default() += count;
            }
            self.ledgers
                .insert(scope.clone(), Ledger { from: today, days });
        }
        let ledger = self.ledgers.get_mut(scope).expect("ledger just loaded");
        if ledger.from < today {
            ledger.days = ledger.days.split_off(&today);
            ledger.from = today;
        }
        Ok(ledger)
    }

    fn book(&mut self, message: BookRequests, me: Recipient) -> Result<Reservation, BookingError> {
        let BookRequests {
            scope,
            capacity,
            timezone,
            count,
        } = message;
        let at = self.clock.now();
        let today = local_date(at, timezone);
        let ledger = self.ledger(&scope, today)?;
        let days = place(count, today, capacity, &ledger.days).map_err(|unplaced| {
            BookingError::Unplaceable {
                unplaced,
                total: count,
                capacity,
            }
        })?;
        let ledger = self.ledgers.get_mut(&scope).expect("ledger loaded above");
        for day in &days {
            *ledger.days.entry(*day).or_default() += 1;
        }
        self.pending.hold(&scope, &days);
        Ok(Reservation::new(
            scope,
            Placement { days, at },
            self.pending.clone(),
            me,
        ))
    }

    /// Places given back unstored leave the pending tally and the ledger in one step, so a ledger loaded
    /// in between cannot count them out twice.
    fn release(&mut self, message: ReleaseBookings) {
        let ReleaseBookings { scope, days } = message;
        self.pending.settle(&scope, &days);
        if let Some(ledger) = self.ledgers.get_mut(&scope) {
            for (day, count) in &days {
                decrement(&mut ledger.days, *day, *count);
            }
        }
    }
}

type Recipient = actix::Recipient<ReleaseBookings>;

impl Actor for CapacityScheduler {
    type Context = Context<Self>;
}

impl Singleton for CapacityScheduler {
    const NAME: &'static str = "capacity_scheduler";

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}

impl Supervised for CapacityScheduler {
    /// The ledgers are reloaded from the store on next use; places of POSTs still in flight are kept.
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.ledgers.clear();
    }
}

impl Handler<BookRequests> for CapacityScheduler {
    type Result = Result<Reservation, BookingError>;

    fn handle(&mut self, message: BookRequests, ctx: &mut Context<Self>) -> Self::Result {
        let me = ctx.address().recipient();
        guarded(self, ctx, |scheduler, _| scheduler.book(message, me)).unwrap_or_else(|| {
            Err(BookingError::Unavailable(
                "the scheduler restarted while booking".into(),
            ))
        })
    }
}

impl Handler<ReleaseBookings> for CapacityScheduler {
    type Result = ();

    fn handle(&mut self, message: ReleaseBookings, ctx: &mut Context<Self>) {
        guarded(self, ctx, |scheduler, _| scheduler.release(message));
    }
}

impl Handler<InjectPanic> for CapacityScheduler {
    type Result = ();

    fn handle(&mut self, fault: InjectPanic, ctx: &mut Context<Self>) {
        guarded(self, ctx, |_, _| fault.panic(Self::NAME));
    }
}
