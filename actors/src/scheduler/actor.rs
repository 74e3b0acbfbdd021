//! The capacity-scheduler actor: owner of the booking ledgers and sole writer of new requests.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use actix::{Actor, Context, Handler};
use chrono::{Days, NaiveDate};
use switchboard_storage::{InsertOutcome, RequestRecord, RequestState, Scope, Store};

use super::messages::{BookRequests, Booked, BookingError};
use super::{place, HORIZON_DAYS};
use crate::calendar::{day_start, local_date};
use crate::{Clock, Metrics};

/// Bookings of one scope from `from` on, mirrored in memory. The actor is the only writer of bookings, so
/// the mirror stays exact; it is reloaded when the local date moves on.
struct Ledger {
    from: NaiveDate,
    days: BTreeMap<NaiveDate, u32>,
}

/// Books new requests onto business days. Handling one POST at a time per process is what makes the
/// idempotency check, the capacity check and the insert one step; the store transaction re-checks the
/// idempotency key as a second line of defence.
pub struct CapacityScheduler {
    store: Store,
    clock: Clock,
    metrics: Arc<Metrics>,
    ledgers: HashMap<Scope, Ledger>,
}

impl CapacityScheduler {
    /// A scheduler over `store`, reading days from `clock`, counting bookings in `metrics`.
    pub fn new(store: Store, clock: Clock, metrics: Arc<Metrics>) -> CapacityScheduler {
        CapacityScheduler {
            store,
            clock,
            metrics,
            ledgers: HashMap::new(),
        }
    }

    fn ledger(&mut self, scope: &Scope, today: NaiveDate) -> Result<&mut Ledger, BookingError> {
        let stale = self.ledgers.get(scope).is_none_or(|l| l.from != today);
        if stale {
            let last = today
                .checked_add_days(Days::new(HORIZON_DAYS))
                .unwrap_or(NaiveDate::MAX);
            let days = self.store.bookings(scope, today, last)?;
            self.ledgers
                .insert(scope.clone(), Ledger { from: today, days });
        }
        Ok(self.ledgers.get_mut(scope).expect("ledger just loaded"))
    }
}

impl Actor for CapacityScheduler {
    type Context = Context<Self>;
}

impl Handler<BookRequests> for CapacityScheduler {
    type Result = Result<Vec<Booked>, BookingError>;

    fn handle(&mut self, message: BookRequests, _: &mut Context<Self>) -> Self::Result {
        let BookRequests {
            scope,
            capacity,
            timezone,
            credential_id,
            drafts,
        } = message;
        let now = self.clock.now();
        let today = local_date(now, timezone);

        // Replays of an earlier POST, and repeats of a key within this POST, book nothing.
        let mut outcomes: Vec<Option<Booked>> = vec![None; drafts.len()];
        let mut repeats: Vec<(usize, usize)> = Vec::new();
        let mut first_use: HashMap<&str, usize> = HashMap::new();
        let mut fresh: Vec<usize> = Vec::new();
        for (i, draft) in drafts.iter().enumerate() {
            if let Some(key) = draft.internal_id.as_deref() {
                if let Some(existing) = self.store.request_by_internal_id(&scope, key)? {
                    outcomes[i] = Some(Booked::Existing(existing));
                    continue;
                }
                if let Some(&first) = first_use.get(key) {
                    repeats.push((i, first));
                    continue;
                }
                first_use.insert(key, i);
            }
            fresh.push(i);
        }

        let ledger = self.ledger(&scope, today)?;
        let days = place(fresh.len(), today, capacity, &ledger.days).map_err(|unplaced| {
            BookingError::Unplaceable {
                unplaced,
                total: fresh.len(),
                capacity,
            }
        })?;

        let mut batch_ids: BTreeMap<NaiveDate, String> = BTreeMap::new();
        let records: Vec<RequestRecord> = fresh
            .iter()
            .zip(&days)
            .map(|(&i, &day)| {
                let draft = drafts[i].clone();
                let batch_id = batch_ids
                    .entry(day)
                    .or_insert_with(|| uuid::Uuid::new_v4().to_string())
                    .clone();
                RequestRecord {
                    id: uuid::Uuid::now_v7().to_string(),
                    account_id: scope.account_id.clone(),
                    environment: scope.environment,
                    batch_id,
                    schema_id: draft.schema_id,
                    schema_version: draft.schema_version,
                    request_type: draft.request_type,
                    inputs: draft.inputs,
                    internal_id: draft.internal_id,
                    internal_tag: draft.internal_tag,
                    webhook_url: draft.webhook_url,
                    ai_only: draft.ai_only,
                    onshore_only: draft.onshore_only,
                    payer_lookup: draft.payer_lookup,
                    dial: draft.dial,
                    payer_electronic: draft.payer_electronic,
                    electronic_payer_id: draft.electronic_payer_id.clone(),
                    credential_id: Some(credential_id.clone()),
                    state: RequestState::Processing,
                    created_at: now,
                    due_date: day,
                    due_at: day_start(day, timezone),
                    completed_at: None,
                    run: None,
                }
            })
            .collect();

        let inserted = self.store.insert_requests(&records)?;
        let metrics = Arc::clone(&self.metrics);
        let ledger = self.ledger(&scope, today)?;
        for (&i, outcome) in fresh.iter().zip(inserted) {
            outcomes[i] = Some(match outcome {
                InsertOutcome::Created(record) => {
                    *ledger.days.entry(record.due_date).or_default() += 1;
                    metrics.request_created(record.environment);
                    tracing::info!(request_id = %record.id, batch_id = %record.batch_id, due_date = %record.due_date, "request booked");
                    Booked::Created(record)
                }
                InsertOutcome::Existing(record) => Booked::Existing(record),
            });
        }
        for (i, first) in repeats {
            let earlier = outcomes[first]
                .as_ref()
                .expect("first use is decided")
                .record()
                .clone();
            outcomes[i] = Some(Booked::Existing(earlier));
        }
        Ok(outcomes
            .into_iter()
            .map(|o| o.expect("every draft decided"))
            .collect())
    }
}
