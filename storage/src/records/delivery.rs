use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::codec::Record;
use crate::{RequestId, StorageError};

/// The webhook of one terminal request: what to send, where, and how far delivery has got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeliveryRecord {
    /// The request the webhook announces.
    pub request_id: RequestId,
    /// Destination, frozen when the request became terminal.
    pub url: String,
    /// HMAC-SHA256 key of the signature.
    pub signing_secret: String,
    /// The exact body bytes (sorted-key JSON); the signature is over these.
    pub payload: String,
    /// When the request became terminal; delayed rounds count from here.
    pub terminal_at: DateTime<Utc>,
    /// The round to run next: 0 is the immediate one, then one per configured delay.
    pub next_round: u32,
    /// When the next round is due.
    pub next_at: DateTime<Utc>,
    /// Where delivery stands.
    pub status: DeliveryStatus,
    /// Attempts made so far, over all rounds.
    pub attempts: u32,
    /// When an operator asked for the webhook to be sent again and that redelivery has not run yet: its
    /// queue entry is at this instant instead of `next_at` (see [`DeliveryRecord::queued_at`]). Absent in
    /// records written before redelivery existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redelivery_at: Option<DateTime<Utc>>,
    /// Redeliveries asked for so far; the attempts of the latest carry this number.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redeliveries: u32,
    /// The W3C `traceparent` of the request's trace, sent with every attempt; absent when the server
    /// traced nothing (no telemetry endpoint) and in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl DeliveryRecord {
    /// Whether the delivery has an entry in the outbox queue: a round to run or a redelivery asked for.
    pub fn queued(&self) -> bool {
        self.status == DeliveryStatus::Pending || self.redelivery_at.is_some()
    }

    /// The instant of its outbox queue entry: a redelivery asked for goes before the next round.
    pub fn queued_at(&self) -> DateTime<Utc> {
        self.redelivery_at.unwrap_or(self.next_at)
    }
}

impl Record for DeliveryRecord {
    const KIND: &'static str = "webhook delivery";
    /// 2: the JSON is zstd-compressed (the payload repeats the finished request's results and summary, and
    /// stays stored after delivery). 1: plain JSON, still read.
    const VERSION: u8 = 2;
    const COMPRESSED: bool = true;

    fn upgrade(version: u8, body: &[u8]) -> Result<Self, StorageError> {
        crate::codec::upgrade_from_plain(version, body)
    }
}

/// Where a delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    /// Waiting for its next round.
    Pending,
    /// A 2xx acknowledged it.
    Delivered,
    /// A 400 or 404 stopped it for good.
    Rejected,
    /// Every round failed; the client recovers by polling.
    Exhausted,
}

impl DeliveryStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Rejected => "rejected",
            DeliveryStatus::Exhausted => "exhausted",
        }
    }
}

/// One HTTP attempt of a webhook delivery.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// The request.
    pub request_id: RequestId,
    /// Destination, as releases before 2026-11-28 logged it; empty since. The log is not sealed, and a URL
    /// can carry request data, so it is read from the sealed delivery instead.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// When the attempt started.
    pub at: DateTime<Utc>,
    /// Round (0 = immediate).
    pub round: u32,
    /// Attempt within the round, from 1.
    pub attempt: u32,
    /// HTTP status, when a response came back.
    pub status_code: Option<u16>,
    /// Transport error (timeout, refused connection, refused target), when none did.
    pub error: Option<String>,
    /// Wall time the attempt took.
    pub latency_ms: u64,
    /// The redelivery (counted from 1) the attempt belongs to, outside the rounds; absent for a round's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redelivery: Option<u32>,
}

/// The error of an attempt logged before it was sent, until its outcome is written over it: left there,
/// the process stopped while the attempt was under way, and the receiver may have had the webhook.
pub const UNFINISHED_ATTEMPT: &str =
    "no outcome recorded: under way, or cut short by a stop of the server (the receiver may have it)";

impl Record for AttemptRecord {
    const KIND: &'static str = "webhook attempt";
    const VERSION: u8 = 1;
}
