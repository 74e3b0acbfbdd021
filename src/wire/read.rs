//! What a read of a request needs besides the record. Both the request shape (`request.rs`) and its
//! call-side parts (`calls.rs`) read it, so it sits below them.

use chrono::{DateTime, Utc};
use switchboard_storage::AccountRecord;

use crate::recordings::RecordingLinks;

/// Which read a response is for: the list omits the single-read-only fields (4.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKind {
    /// `GET /v1/requests/{requestId}`.
    Single,
    /// An entry of `GET /v1/requests`.
    List,
}

/// What a read needs besides the record.
pub struct ReadContext<'a> {
    /// The caller's account (its optional fields and features).
    pub account: &'a AccountRecord,
    /// Names the built-in directory in `payerLookup.phoneNumberSource`.
    pub lookup_source: &'a str,
    /// Signs `recordingDownloadUrl`s.
    pub links: &'a RecordingLinks,
    /// The clock's now, for link expiry.
    pub now: DateTime<Utc>,
    /// Single read or list entry.
    pub kind: ReadKind,
    /// The configured rates: what a call stored before calls carried their price is priced at.
    pub prices: switchboard_actors::cost::Prices,
}

impl ReadContext<'_> {
    /// Whether single-read-only fields are shown.
    pub fn single(&self) -> bool {
        self.kind == ReadKind::Single
    }
}
