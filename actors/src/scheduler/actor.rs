//! The capacity scheduler: the [`CapacityScheduler`] actor, which loads the booking desk's ledgers from the
//! store, and [`Scheduler`], the handle the create path books through.

use std::sync::Arc;

use actix::{
    Actor, ActorFutureExt, Addr, ArbiterHandle, AtomicResponse, Context, Handler, Supervised,
    Supervisor, WrapFuture,
};
use chrono::{Days, NaiveDate};
use switchboard_storage::{Scope, Store};

use super::desk::{BookingDesk, Ledger};
use super::messages::{Booking, BookingError, LoadLedger};
use super::reservation::Reservation;
use super::HORIZON_DAYS;
use crate::calendar::local_date;
use crate::supervision::{guarded, InjectPanic, Singleton};
use crate::{Clock, Metrics};

/// Owner of the booking desk's ledgers: it reads each scope's stored bookings when a POST finds no ledger
/// to book against, one scope at a time, so no store read ever runs inside the desk's serial section. A
/// restart drops every ledger, to be loaded again.
pub struct CapacityScheduler {
    store: Store,
    desk: BookingDesk,
    metrics: Arc<Metrics>,
}

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
    /// The ledgers are loaded again on next use; places of POSTs still in flight are kept.
    fn restarting(&mut self, _: &mut Context<Self>) {
        self.desk.forget_ledgers();
    }
}

impl Handler<LoadLedger> for CapacityScheduler {
    type Result = AtomicResponse<Self, Result<(), BookingError>>;

    /// Loads the ledger of the message's scope from its day, unless a POST's earlier request already
    /// did. Atomic: no other load runs while the bookings are read, so each scope is read once.
    fn handle(&mut self, message: LoadLedger, _: &mut Context<Self>) -> Self::Result {
        let LoadLedger { scope, today } = message;
        if self.desk.has_ledger(&scope) {
            return AtomicResponse::new(Box::pin(actix::fut::ready(Ok(()))));
        }
        let last = today
            .checked_add_days(Days::new(HORIZON_DAYS))
            .unwrap_or(NaiveDate::MAX);
        // Pending first: a request stored meanwhile is then counted twice, never missed.
        let pending = self.desk.pending(&scope);
        let store = self.store.clone();
        // Once per account and day: the reply waits for the ledger anyway.
        let read = async move {
            let days = store.bookings(&scope, today, last).await;
            (scope, days)
        };
        let install = move |(scope, days), scheduler: &mut Self, ctx: &mut Context<Self>| {
            let installed = guarded(scheduler, ctx, |scheduler, _| {
                let mut days: std::collections::BTreeMap<NaiveDate, u32> = days?;
                for (day, count) in pending {
                    *days.entry(day).or_default() += count;
                }
                scheduler.desk.install(scope, Ledger { from: today, days });
                Ok(())
            });
            installed.unwrap_or_else(|| {
                Err(BookingError::Unavailable(
                    "the scheduler restarted while loading a ledger".into(),
                ))
            })
        };
        AtomicResponse::new(Box::pin(read.into_actor(self).map(install)))
    }
}

impl Handler<InjectPanic> for CapacityScheduler {
    type Result = ();

    fn handle(&mut self, fault: InjectPanic, ctx: &mut Context<Self>) {
        guarded(self, ctx, |_, _| fault.panic(Self::NAME));
    }
}

/// Loads a POST may ask for before it gives up: a ledger loaded is booked against at once, unless a
/// restart dropped it in between.
const LOADS: usize = 2;

/// The capacity scheduler as its users hold it (cheap to clone): the desk every POST books at, and the
/// supervised actor that loads the desk's ledgers.
#[derive(Clone)]
pub struct Scheduler {
    desk: BookingDesk,
    clock: Clock,
    actor: Addr<CapacityScheduler>,
}

impl Scheduler {
    /// Starts the supervised actor on `thread`, over `store`, booking by days of `clock`; restarts are
    /// counted in `metrics`. A thread of its own answers a POST's first booking of a scope in the time of
    /// one store read: on the request actors' thread, its load waited behind thousands of them (370 ms
    /// with 10,000 running).
    pub fn start(
        thread: &ArbiterHandle,
        store: Store,
        clock: Clock,
        metrics: Arc<Metrics>,
    ) -> Scheduler {
        let desk = BookingDesk::new(Arc::clone(&metrics));
        let owned = desk.clone();
        let actor = Supervisor::start_in_arbiter(thread, move |_| CapacityScheduler {
            store,
            desk: owned,
            metrics,
        });
        Scheduler { desk, clock, actor }
    }

    /// A scheduler that books nothing: its actor never runs ([`crate::supervision::closed_address`]). For
    /// a node that runs no work.
    pub fn closed(clock: Clock, metrics: Arc<Metrics>) -> Scheduler {
        Scheduler {
            desk: BookingDesk::new(metrics),
            clock,
            actor: crate::supervision::closed_address(),
        }
    }

    /// Drops the desk's ledgers, to be read again from the store at the next booking: another process
    /// booked on the same database since they were read.
    pub(crate) fn forget_ledgers(&self) {
        self.desk.forget_ledgers();
    }

    /// The actor, for fault injection.
    pub fn actor(&self) -> &Addr<CapacityScheduler> {
        &self.actor
    }

    /// Reserves places for `wanted` on the earliest business days with room, from today in its time zone.
    /// Replies with the days, in order, held by a [`Reservation`] that gives them back unless the requests
    /// are stored.
    pub(crate) async fn reserve(&self, wanted: Booking) -> Result<Reservation, BookingError> {
        let mut loads = 0;
        loop {
            let at = self.clock.now();
            let today = local_date(at, wanted.timezone);
            if let Some(reservation) = self.desk.book(&wanted, today, at)? {
                return Ok(reservation);
            }
            if loads == LOADS {
                return Err(BookingError::Unavailable(
                    "the scheduler restarted while loading a ledger".into(),
                ));
            }
            loads += 1;
            self.load(&wanted.scope, today).await?;
        }
    }

    async fn load(&self, scope: &Scope, today: NaiveDate) -> Result<(), BookingError> {
        self.actor
            .send(LoadLedger {
                scope: scope.clone(),
                today,
            })
            .await
            .map_err(|e| BookingError::Unavailable(e.to_string()))?
    }
}
