//! Calls placed by a voice platform (Retell, Vapi) or a voice agent of the operator's own (`http`): the
//! adapter contract every platform implements, and the neutral shapes the shared driver works with.
//!
//! An adapter only speaks its platform's API: create a call for a job (tagged with Switchboard's call id in
//! the platform's metadata), find a call by that id, read a call by the platform's id, and turn the
//! platform's records and events into a [`CallResult`]. Everything else is shared and lives in
//! [`driver::PlatformDialer`]: the intent marker written before a create, the platform id written before any
//! wait, re-attaching after a restart instead of dialing again, idempotent events, polling when events
//! are late, and the recording download. [`extraction`] builds the per-call structured extraction each
//! adapter renders in its own format, [`answers`] reads its answers back in each field's type, and
//! [`mapping`] turns a platform's verdict into a disposition.

pub mod answers;
mod delivery;
pub mod driver;
pub mod extraction;
pub mod mapping;
mod recording;
pub(crate) mod rest;

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use switchboard_storage::{CallId, RequestId};

pub use delivery::Delivery;
pub use driver::{PlatformDialer, PlatformOptions};
pub use extraction::{ExtractionField, ExtractionType};

use super::http::AgentOutcome;
use super::CallJob;

/// What an adapter is asked to place: the job plus what the shared layer derived from it.
#[derive(Clone, Debug)]
pub struct PlatformCallRequest {
    /// The call.
    pub job: CallJob,
    /// The structured extraction for this call: the step's schema fields, then the control fields.
    pub extraction: Vec<ExtractionField>,
    /// Variables for the agent's prompt: the request's inputs (by input key), `questions`, the schema's
    /// questions still open as numbered lines, and `known_answers`, what the payer answered electronically.
    pub variables: BTreeMap<String, String>,
}

/// How long after a conversation's end its analysis may still come. Past this, a platform call read
/// without its analysis is taken as it is (its transcript, nothing captured), so the step goes on at once
/// (a redial for the fields still open, within its budget) rather than after the whole call timeout. Vapi
/// gives up on structured data after its plan's timeout (60 s); Retell's `call_analyzed` normally follows
/// `call_ended` within seconds.
const ANALYSIS_GRACE_SECONDS: i64 = 300;

/// Whether a conversation that ended at `ended` (the platform's stamp) and has no analysis yet will get
/// none any more, read at `now`. Without an end time the call timeout decides.
pub fn analysis_given_up(ended: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    ended.is_some_and(|ended| (now - ended).num_seconds() > ANALYSIS_GRACE_SECONDS)
}

/// The platform's view of a call at one moment.
#[derive(Clone, Debug, PartialEq)]
pub enum PlatformCallState {
    /// Not over yet (registered, ringing, ongoing, or ended without its analysis).
    Live,
    /// Over, with everything Switchboard needs.
    Ended(Box<CallResult>),
}

/// An authenticated event from a platform, already parsed by its adapter.
#[derive(Clone, Debug)]
pub struct PlatformEvent {
    /// Switchboard's call id (from the platform call's metadata, or the callback path).
    pub call_id: CallId,
    /// The request, when the platform echoes it (metadata); looked up otherwise.
    pub request_id: Option<RequestId>,
    /// The platform's id of the call.
    pub platform_call_id: String,
    /// The event type (`call_started`, `call_ended`, `call_analyzed`, `end-of-call-report`, `outcome`):
    /// events are applied once per call and type.
    pub event_type: String,
    /// What the event says about the call.
    pub state: PlatformCallState,
}

/// A finished call, in the neutral form stored until its outcome is written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallResult {
    /// A voice platform's record of the call.
    Platform(PlatformResult),
    /// A voice agent's own report (`[dialer] kind = "http"`), already in Switchboard's terms.
    Agent(AgentOutcome),
}

/// How a platform call ended, in terms every platform can be mapped to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallEnd {
    /// Someone (or an IVR) was talked to; the extraction says how it went.
    Conversation,
    /// The line was busy.
    Busy,
    /// Nobody picked up.
    NoAnswer,
    /// A voicemail or an after-hours message answered.
    Voicemail,
    /// The call hit the platform's maximum duration (a long hold, typically).
    MaxDuration,
    /// The agent gave up on the hold.
    HoldTooLong,
    /// The number does not exist or cannot be dialled.
    InvalidNumber,
    /// The platform or the telephony failed.
    PlatformError,
}

/// A platform's final record of a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlatformResult {
    /// How it ended.
    pub end: CallEnd,
    /// The platform's own words for the end (e.g. Retell's `disconnection_reason`), for the notes.
    pub end_detail: Option<String>,
    /// Length of the call.
    pub duration_seconds: u32,
    /// The structured extraction's answers by field name (schema fields and control fields).
    pub analysis: BTreeMap<String, serde_json::Value>,
    /// The conversation.
    pub transcript: Option<String>,
    /// The platform's summary.
    pub summary: Option<String>,
    /// The number the call was placed from (E.164).
    pub from_number: Option<String>,
    /// Where the platform keeps the recording; downloaded at the end, never shown to a client.
    pub recording_url: Option<String>,
    /// The platform's own price of the call, in US cents (rounded half up), when the record that ended the
    /// call carried one (Retell's `call_cost.combined_cost`, Vapi's `cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_cents: Option<u64>,
}

/// Why a platform request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlatformError {
    /// The platform answered and refused (4xx): asking again will not help.
    Rejected(String),
    /// The platform failed, or its answer was lost after the request was sent (timeout, reset, 5xx): the
    /// request may or may not have taken effect.
    Unavailable(String),
    /// The request never reached the platform: the name did not resolve, or the connection (TLS
    /// included) could not be made, so no HTTP request was sent and it had no effect.
    NotSent(String),
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlatformError::Rejected(reason) => write!(f, "refused by the platform: {reason}"),
            PlatformError::Unavailable(reason) => write!(f, "platform unavailable: {reason}"),
            PlatformError::NotSent(reason) => write!(f, "platform not reached: {reason}"),
        }
    }
}

/// A future an adapter returns.
pub type PlatformFuture<T> = BoxFuture<'static, Result<T, PlatformError>>;

/// One voice platform's API, as the shared driver uses it. Implementations hold their own HTTP client and
/// configuration; none of them persists anything.
pub trait PlatformAdapter: Send + Sync + 'static {
    /// The platform's name, as stored with each call and shown in the console (`retell`, `vapi`, `http`).
    fn name(&self) -> &'static str;

    /// Asks the platform to place the call; answers the platform's call id. The request must carry
    /// `request.job.call_id` (and the request id) where [`PlatformAdapter::find`] and the platform's
    /// events can give it back.
    fn create(&self, request: &PlatformCallRequest) -> PlatformFuture<String>;

    /// The platform's id of the call tagged with Switchboard's `call_id`, if the platform has one. Asked
    /// after a restart that happened between a create and storing its answer. A platform that cannot
    /// search answers `Ok(None)` (the create is then sent again, carrying the same call id).
    fn find(&self, call_id: &CallId) -> PlatformFuture<Option<String>>;

    /// The platform's current view of a call (its read-call endpoint), for polling when events are late;
    /// `None` when the platform has no such endpoint (events are then the only source).
    fn read(&self, platform_call_id: &str) -> Option<PlatformFuture<PlatformCallState>>;
}
