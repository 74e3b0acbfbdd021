//! One delivery round: an attempt and its inline retries.

use std::time::Instant;

use chrono::Duration as CalendarDuration;
use switchboard_storage::{AttemptRecord, DeliveryRecord, DeliveryStatus, Store};

use super::target::check_target;
use super::{signature, WebhookConfig};
use crate::Clock;

/// How one HTTP attempt ended.
enum Verdict {
    Acknowledged,
    RejectedForGood,
    RetryInline,
    EndRound,
}

/// Runs the delivery's next round and returns the delivery with its new status and schedule. Attempts are
/// written to the log as they happen; the caller persists the delivery.
pub(super) async fn run_round(
    store: &Store,
    clock: &Clock,
    client: &reqwest::Client,
    config: &WebhookConfig,
    mut delivery: DeliveryRecord,
) -> DeliveryRecord {
    let round = delivery.next_round;
    let log = |attempt: u32, status_code: Option<u16>, error: Option<String>, at, latency_ms| {
        let record = AttemptRecord {
            request_id: delivery.request_id.clone(),
            url: delivery.url.clone(),
            at,
            round,
            attempt,
            status_code,
            error,
            latency_ms,
        };
        if let Err(e) = store.record_attempt(&record) {
            tracing::error!(error.message = %e, "cannot log a webhook attempt");
        }
    };
    if let Err(refused) = check_target(&delivery.url, config.allow_private_targets).await {
        log(1, None, Some(refused.to_string()), clock.now(), 0);
        delivery.attempts += 1;
        delivery.status = DeliveryStatus::Rejected;
        tracing::warn!(request_id = %delivery.request_id, reason = %refused, "webhook target refused");
        return delivery;
    }
    let signed = signature(&delivery.signing_secret, delivery.payload.as_bytes());
    let mut attempt = 0u32;
    let outcome = loop {
        attempt += 1;
        let at = clock.now();
        let started = Instant::now();
        let sent = client
            .post(&delivery.url)
            .header("Content-Type", "application/json")
            .header("X-Webhook-Signature", &signed)
            .body(delivery.payload.clone())
            .send()
            .await;
        let latency_ms = started.elapsed().as_millis() as u64;
        let verdict = match sent {
            Ok(response) => {
                let status = response.status();
                log(attempt, Some(status.as_u16()), None, at, latency_ms);
                if status.is_success() {
                    Verdict::Acknowledged
                } else if status.as_u16() == 400 || status.as_u16() == 404 {
                    Verdict::RejectedForGood
                } else if status.is_server_error() {
                    Verdict::RetryInline
                } else {
                    Verdict::EndRound
                }
            }
            Err(error) => {
                let kind = if error.is_timeout() {
                    "timeout"
                } else if error.is_connect() {
                    "connection failed"
                } else {
                    "request failed"
                };
                log(
                    attempt,
                    None,
                    Some(format!("{kind}: {error}")),
                    at,
                    latency_ms,
                );
                Verdict::RetryInline
            }
        };
        match verdict {
            Verdict::RetryInline => match config.inline_backoff.get(attempt as usize - 1) {
                Some(wait) => tokio::time::sleep(*wait).await,
                None => break Verdict::EndRound,
            },
            settled => break settled,
        }
    };
    delivery.attempts += attempt;
    delivery.status = match outcome {
        Verdict::Acknowledged => DeliveryStatus::Delivered,
        Verdict::RejectedForGood => DeliveryStatus::Rejected,
        Verdict::RetryInline | Verdict::EndRound => match config.round_delays.get(round as usize) {
            Some(delay) => {
                delivery.next_round = round + 1;
                delivery.next_at = delivery.terminal_at
                    + CalendarDuration::from_std(*delay).unwrap_or(CalendarDuration::days(7));
                DeliveryStatus::Pending
            }
            None => DeliveryStatus::Exhausted,
        },
    };
    tracing::info!(request_id = %delivery.request_id, round, attempts = attempt, status = delivery.status.as_str(), "webhook round finished");
    delivery
}
