use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::Environment;
use crate::codec::Record;
use crate::{RequestBatchId, RequestId, StorageError};

/// One extraction request, from acceptance to its terminal state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Server-generated id.
    pub id: RequestId,
    /// Owning account.
    pub account_id: String,
    /// Production or sandbox: the two never see each other's requests.
    pub environment: Environment,
    /// Scheduling group: the requests of one POST booked onto the same day.
    pub batch_id: RequestBatchId,
    /// Schema used.
    pub schema_id: String,
    /// Schema version latest at creation (re-pinned when the request runs).
    pub schema_version: u32,
    /// Derived from the schema.
    pub request_type: String,
    /// Validated inputs, as strings.
    pub inputs: BTreeMap<String, String>,
    /// Client correlation id and idempotency key.
    pub internal_id: Option<String>,
    /// Opaque client tag.
    pub internal_tag: Option<String>,
    /// Per-request webhook URL, frozen at creation.
    pub webhook_url: Option<String>,
    /// Calls handled by the automated agent only.
    pub ai_only: bool,
    /// Phone handling restricted to US-based agents.
    pub onshore_only: bool,
    /// The payer phone decision, when the account has lookup.
    pub payer_lookup: Option<PayerLookupRecord>,
    /// The number to dial (ten digits) and where it came from.
    pub dial: Option<DialTarget>,
    /// The credential that created the request; its API key signs sandbox (and fallback production)
    /// webhooks.
    #[serde(default)]
    pub credential_id: Option<String>,
    /// Whether the matched payer is reachable through the electronic channel.
    #[serde(default)]
    pub payer_electronic: bool,
    /// The matched payer's clearinghouse payer id, when it has one.
    #[serde(default)]
    pub electronic_payer_id: Option<String>,
    /// Lifecycle state.
    pub state: RequestState,
    /// Acceptance time.
    pub created_at: DateTime<Utc>,
    /// Business day the request is booked on (account time zone).
    pub due_date: NaiveDate,
    /// Instant that business day begins.
    pub due_at: DateTime<Utc>,
    /// Set on entering a terminal state.
    pub completed_at: Option<DateTime<Utc>>,
    /// Orchestration state, from the moment the request's day came.
    #[serde(default)]
    pub run: Option<super::RunRecord>,
    /// Its OpenTelemetry trace, when the server that created it exported traces: spans written after a
    /// restart join it. Absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRecord>,
}

/// Where a request's spans belong: its trace, its own `request` span, and the caller's span when the
/// create carried a `traceparent`. Ids only, lowercase hex as W3C Trace Context writes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// 32 hex digits.
    pub trace_id: String,
    /// The `request` span, 16 hex digits.
    pub span_id: String,
    /// The caller's span the `request` span continues, 16 hex digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<String>,
}

impl RequestRecord {
    /// Whether it has left the booked-and-waiting state for good: its run started, or it ended without one.
    /// A batch stays due until every member has.
    pub fn left_due(&self) -> bool {
        self.run.is_some() || self.state.is_terminal()
    }
}

impl Record for RequestRecord {
    const KIND: &'static str = "request";
    /// 2: the JSON is zstd-compressed (transcripts, summaries and inputs are most of a finished request).
    /// 1: plain JSON, still read.
    const VERSION: u8 = 2;
    const COMPRESSED: bool = true;

    /// A running request is rewritten at each step of its run and read back by the next, and one created
    /// on the day it is booked for starts at once. A request waiting for a later day may wait for months,
    /// and a finished one is kept.
    fn replaced_soon(&self) -> bool {
        !self.state.is_terminal() && (self.run.is_some() || self.due_at <= self.created_at)
    }

    fn upgrade(version: u8, body: &[u8]) -> Result<Self, StorageError> {
        crate::codec::upgrade_from_plain(version, body)
    }
}

/// Lifecycle states (service-interface section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RequestState {
    /// Accepted, scheduled or running.
    Processing,
    /// Every required field filled.
    Success,
    /// Primary effort succeeded, a follow-up failed.
    Partial,
    /// No required field captured.
    Failure,
}

impl RequestState {
    /// The uppercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestState::Processing => "PROCESSING",
            RequestState::Success => "SUCCESS",
            RequestState::Partial => "PARTIAL",
            RequestState::Failure => "FAILURE",
        }
    }

    /// Whether no further transition can happen.
    pub fn is_terminal(self) -> bool {
        !matches!(self, RequestState::Processing)
    }
}

/// The payer phone number decision (service-interface 2.5), frozen at creation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PayerLookupRecord {
    /// The supplied `payerName`.
    pub input_payer_name: String,
    /// The supplied `phoneNumber`.
    pub input_phone_number: Option<String>,
    /// Set only when the matched number is dialed.
    pub matched_payer_name: Option<String>,
    /// Set only when the matched number is dialed.
    pub matched_payer_phone: Option<String>,
    /// The number dialed.
    pub phone_number_to_use: String,
    /// Where that number came from.
    pub phone_number_source: NumberSource,
}

/// Origin of a dialed number; it decides who is blamed when the number turns out wrong (7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumberSource {
    /// The built-in payer directory.
    Directory,
    /// The account's phone book.
    PhoneBook,
    /// The client's `inputs.phoneNumber`.
    Input,
    /// A number a representative gave in an earlier call.
    Referral,
}

/// What a call will dial.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DialTarget {
    /// Ten-digit U.S. number.
    pub number: String,
    /// Its origin.
    pub source: NumberSource,
}
