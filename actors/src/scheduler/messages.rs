//! The scheduler's protocol: what a POST asks to book, the actor's one message, and the answers.

use std::collections::BTreeMap;

use actix::Message;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use switchboard_storage::{DialTarget, PayerLookupRecord, Scope, StorageError};

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

/// What one POST wants booked: `count` places (its new requests) in `scope`.
#[derive(Debug)]
pub struct Booking {
    /// Account and environment.
    pub scope: Scope,
    /// The account's daily call capacity.
    pub capacity: u32,
    /// The account's time zone.
    pub timezone: Tz,
    /// How many new requests.
    pub count: usize,
}

/// Asks the scheduler actor to load the ledger of `scope` from `today` onto the booking desk: the stored
/// bookings plus the places still pending.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), BookingError>")]
pub struct LoadLedger {
    /// Account and environment.
    pub scope: Scope,
    /// The first day the ledger counts.
    pub today: NaiveDate,
}

/// The days of one reservation and the instant it was made (the requests' creation time).
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// One day per requested place, in order.
    pub days: Vec<NaiveDate>,
    /// When the reservation was made.
    pub at: DateTime<Utc>,
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
    /// The store failed (including [`StorageError::InternalIdClaimed`], a lost race on an internal id).
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The scheduler did not answer (it is restarting).
    #[error("the capacity scheduler is unavailable: {0}")]
    Unavailable(String),
}
