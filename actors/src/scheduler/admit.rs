//! The create path below the HTTP layer: reserve places, store the requests, settle the reservation, wait
//! for the flush. Only the reservation is serial; the write is grouped with every other write waiting on
//! the same flush, so concurrent POSTs share one transaction and one fsync.

use std::sync::Arc;

use chrono_tz::Tz;
use switchboard_storage::{
    mint_request_ids, RequestRecord, RequestState, Scope, StorageError, Store,
};
use tokio::sync::oneshot;
use tracing::Instrument;

use super::messages::{Booking, BookingError, Placement, RequestDraft};
use super::Scheduler;
use crate::calendar::day_start;
use crate::Metrics;

/// Who creates: the scope, its capacity rule and the credential of the POST.
#[derive(Clone, Debug)]
pub struct Creator {
    /// Account and environment.
    pub scope: Scope,
    /// The account's daily call capacity.
    pub capacity: u32,
    /// The account's time zone.
    pub timezone: Tz,
    /// The credential of the POST.
    pub credential_id: String,
    /// The client's address, for the audit log.
    pub ip: Option<std::net::IpAddr>,
    /// The caller's span, from the POST's `traceparent`: the requests' traces continue it.
    pub caller_span: Option<crate::telemetry::CallerSpan>,
}

/// How often a create is booked again after another process took its places (several nodes on one
/// PostgreSQL database): each time the ledgers are read again, so a second refusal needs a third booker.
const REBOOKINGS: usize = 3;

/// Books `drafts` (one POST's new requests, none replaying an internal id as far as intake could see),
/// stores them in one transaction and returns them once durable, in order. On any error nothing is stored
/// and the places are given back; [`switchboard_storage::StorageError::InternalIdClaimed`] means a
/// concurrent POST claimed one of the keys first, and the caller decides the replays again. Places that
/// another process booked meanwhile ([`StorageError::CapacityTaken`]) are booked again from the store's
/// counts.
pub async fn admit(
    scheduler: &Scheduler,
    store: &Store,
    metrics: &Arc<Metrics>,
    creator: &Creator,
    drafts: Vec<RequestDraft>,
) -> Result<Vec<RequestRecord>, BookingError> {
    let mut drafts = drafts;
    let mut rebooked = 0;
    loop {
        match admit_once(scheduler, store, metrics, creator, drafts).await {
            Err((BookingError::Storage(StorageError::CapacityTaken), records))
                if rebooked < REBOOKINGS =>
            {
                rebooked += 1;
                scheduler.forget_ledgers();
                drafts = records.into_iter().map(draft_of).collect();
            }
            outcome => return outcome.map_err(|(error, _)| error),
        }
    }
}

/// One booking and write; an error hands the records back, for a booking again.
async fn admit_once(
    scheduler: &Scheduler,
    store: &Store,
    metrics: &Arc<Metrics>,
    creator: &Creator,
    drafts: Vec<RequestDraft>,
) -> Result<Vec<RequestRecord>, (BookingError, Vec<RequestRecord>)> {
    if drafts.is_empty() {
        return Ok(Vec::new());
    }
    let reservation = scheduler
        .reserve(Booking {
            scope: creator.scope.clone(),
            capacity: creator.capacity,
            timezone: creator.timezone,
            count: drafts.len(),
        })
        .await
        .map_err(|e| (e, Vec::new()))?;
    // Shared with the write, which keys its indexes from them, instead of copied into it.
    let records = Arc::new(records(creator, drafts, reservation.placement()));
    // Queued now; the settlement runs in a task of its own: the write happens even if this POST is
    // abandoned (its client hangs up), and its places must then stay booked, or the ledger would count
    // fewer requests than the store holds.
    let write = store.commit_requests_from(Arc::clone(&records), creator.ip, creator.capacity);
    let (settled, outcome) = oneshot::channel();
    let metrics = Arc::clone(metrics);
    actix::spawn(
        async move {
            // The requests as stored (a lone one gets its id from the store), or the records as booked,
            // to be booked again.
            let (outcome, records) = match write.await {
                Ok(stored) => {
                    reservation.stored();
                    for record in stored.iter() {
                        metrics.request_created(record.environment);
                        tracing::info!(request_id = %record.id, batch_id = %record.batch_id, due_date = %record.due_date, "request booked");
                    }
                    (Ok(()), stored)
                }
                // The group or its flush failed, or the store closed: whether these reached the disk is
                // not known here, so their places stay taken until the ledgers are read again, since a
                // day counted full is safer than one overbooked.
                Err(e @ (StorageError::Flush(_) | StorageError::Closed)) => {
                    reservation.stored();
                    (Err(e), records)
                }
                Err(e) => (Err(e), records),
            };
            // The records go back to the POST, if it is still waiting.
            let _ = settled.send((outcome, records));
        }
        .instrument(tracing::Span::current()),
    );
    let (outcome, records) = outcome
        .await
        .map_err(|_| (StorageError::Closed.into(), Vec::new()))?;
    let records = Arc::unwrap_or_clone(records);
    match outcome {
        Ok(()) => Ok(records),
        Err(e) => Err((e.into(), records)),
    }
}

/// The draft a record was made from, to be booked again.
fn draft_of(record: RequestRecord) -> RequestDraft {
    RequestDraft {
        schema_id: record.schema_id,
        schema_version: record.schema_version,
        request_type: record.request_type,
        inputs: record.inputs,
        internal_id: record.internal_id,
        internal_tag: record.internal_tag,
        webhook_url: record.webhook_url,
        ai_only: record.ai_only,
        onshore_only: record.onshore_only,
        payer_lookup: record.payer_lookup,
        dial: record.dial,
        payer_electronic: record.payer_electronic,
        electronic_payer_id: record.electronic_payer_id,
    }
}

/// The stored form of the drafts on their days, with the ids the store mints for them.
fn records(
    creator: &Creator,
    drafts: Vec<RequestDraft>,
    placement: &Placement,
) -> Vec<RequestRecord> {
    let ids = mint_request_ids(placement.days.iter().copied());
    drafts
        .into_iter()
        .zip(&placement.days)
        .zip(ids)
        .map(|((draft, &day), (batch_id, id))| RequestRecord {
            id,
            batch_id,
            account_id: creator.scope.account_id.clone(),
            environment: creator.scope.environment,
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
            electronic_payer_id: draft.electronic_payer_id,
            credential_id: Some(creator.credential_id.clone()),
            state: RequestState::Processing,
            created_at: placement.at,
            due_date: day,
            due_at: day_start(day, creator.timezone),
            completed_at: None,
            run: None,
            trace: crate::telemetry::new_trace(creator.caller_span.as_ref()),
        })
        .collect()
}
