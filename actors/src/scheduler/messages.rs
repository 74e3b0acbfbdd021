//! The scheduler's message protocol.

use std::collections::BTreeMap;

use actix::Message;
use chrono_tz::Tz;
use switchboard_storage::{DialTarget, PayerLookupRecord, RequestRecord, Scope, StorageError};

/// A validated request not yet booked: everything but its id, batch, times and day.
#[derive(Clone, Debug)]
pub struct RequestDraft {
    /// Schema used.
    pub schema_id: String,
    /// Latest schema version at creation.
    pub schema_version: u32,
    /// Derived from the schema.
    pub request_type: String,
    /// Validated inputs.
    pub inputs: BTreeMap<String, String>,
    /// Idempotency key.
    pub internal_id: Option<String>,
    /// Opaque tag.
    pub internal_tag: Option<String>,
    /// Per-request webhook URL.
    pub webhook_url: Option<String>,
    /// Automated agent only.
    pub ai_only: bool,
    /// US-based agents only.
    pub onshore_only: bool,
    /// Payer phone decision.
    pub payer_lookup: Option<PayerLookupRecord>,
    /// What to dial.
    pub dial: Option<DialTarget>,
    /// Whether the matched payer is reachable electronically.
    pub payer_electronic: bool,
    /// The matched payer's clearinghouse payer id.
    pub electronic_payer_id: Option<String>,
}

/// Command from the create handler: book these drafts (one POST) for `scope`. Replies with one outcome per
/// draft, in order, once they are written; the handler awaits the store's flush before acknowledging.
#[derive(Debug)]
pub struct BookRequests {
    /// Account and environment.
    pub scope: Scope,
    /// The account's daily call capacity.
    pub capacity: u32,
    /// The account's time zone.
    pub timezone: Tz,
    /// The credential of the POST.
    pub credential_id: String,
    /// The POST's valid entries, in input order.
    pub drafts: Vec<RequestDraft>,
}

impl Message for BookRequests {
    type Result = Result<Vec<Booked>, BookingError>;
}

/// What became of one draft.
#[derive(Clone, Debug, PartialEq)]
pub enum Booked {
    /// A new request.
    Created(RequestRecord),
    /// Its internal id was used before (or earlier in the same POST): the earlier request.
    Existing(RequestRecord),
}

impl Booked {
    /// The request either way.
    pub fn record(&self) -> &RequestRecord {
        match self {
            Booked::Created(r) | Booked::Existing(r) => r,
        }
    }
}

/// Why a POST could not be booked; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum BookingError {
    /// Capacity within the horizon is exhausted.
    #[error("{unplaced} of {total} requests could not be scheduled within the next 365 days at a daily call capacity of {capacity}")]
    Unplaceable {
        /// Requests that found no day.
        unplaced: usize,
        /// New requests in the POST.
        total: usize,
        /// The account's daily capacity.
        capacity: u32,
    },
    /// The store failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}
