//! A request's webhook delivery and its attempt log, as the console's detail view and the admin API's
//! `GET /admin/v1/webhook-deliveries` show them.

use serde::Serialize;
use switchboard_storage::{AttemptRecord, DeliveryRecord, DeliveryStatus};
use utoipa::ToSchema;

use super::format_timestamp;

/// The webhook delivery of one request and every attempt so far.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDeliveryOut {
    /// Where the webhook goes.
    pub url: String,
    /// `pending`, `delivered` or `failed`.
    pub status: &'static str,
    /// The next delayed round, while pending.
    pub next_round: Option<u32>,
    /// When the next round is due, while pending.
    pub next_attempt_at: Option<String>,
    /// Every attempt, oldest first.
    pub attempts: Vec<WebhookAttemptOut>,
}

/// One delivery attempt.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookAttemptOut {
    /// The URL posted to.
    pub url: String,
    /// When the attempt was made.
    pub at: String,
    /// Round number (0 is the inline round).
    pub round: u32,
    /// Attempt number within the round.
    pub attempt: u32,
    /// The receiver's status, or `null` when no answer came.
    pub status_code: Option<u16>,
    /// Why no answer came, or `null`.
    pub error: Option<String>,
    /// Time to the answer or the failure.
    pub latency_ms: u64,
    /// The redelivery (from 1) an operator asked for that this attempt belongs to; absent for a round's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redelivery: Option<u32>,
}

impl From<&AttemptRecord> for WebhookAttemptOut {
    fn from(attempt: &AttemptRecord) -> WebhookAttemptOut {
        WebhookAttemptOut {
            url: attempt.url.clone(),
            at: format_timestamp(attempt.at),
            round: attempt.round,
            attempt: attempt.attempt,
            status_code: attempt.status_code,
            error: attempt.error.clone(),
            latency_ms: attempt.latency_ms,
            redelivery: attempt.redelivery,
        }
    }
}

impl WebhookDeliveryOut {
    /// The delivery with its attempts; the next round is shown only while the delivery is pending. An
    /// attempt logged without its URL was posted to the delivery's, which never changes.
    pub fn new(delivery: &DeliveryRecord, attempts: Vec<WebhookAttemptOut>) -> WebhookDeliveryOut {
        let pending = delivery.status == DeliveryStatus::Pending;
        let attempts = attempts
            .into_iter()
            .map(|mut attempt| {
                if attempt.url.is_empty() {
                    attempt.url = delivery.url.clone();
                }
                attempt
            })
            .collect();
        WebhookDeliveryOut {
            url: delivery.url.clone(),
            status: delivery.status.as_str(),
            next_round: pending.then_some(delivery.next_round),
            next_attempt_at: pending.then(|| format_timestamp(delivery.next_at)),
            attempts,
        }
    }
}
