//! One delivery round: an attempt and its inline retries.

use std::time::Instant;

use chrono::Duration as CalendarDuration;
use switchboard_storage::{
    AttemptRecord, DeliveryRecord, DeliveryStatus, Store, UNFINISHED_ATTEMPT,
};

use super::target::{check_target, TargetError};
use super::{signature, WebhookConfig};
use crate::metrics::WebhookAttempt;
use crate::{Clock, Metrics};

/// How one HTTP attempt ended.
enum Verdict {
    Acknowledged,
    RejectedForGood,
    RetryInline,
    EndRound,
}

/// Runs the delivery's next round, or the redelivery an operator asked for when one waits, and returns the
/// delivery with its new status and schedule. Attempts are written to the log as they happen; the caller
/// persists the delivery.
///
/// A redelivery is one attempt with its inline retries, outside the rounds: a 2xx marks the delivery
/// delivered (any round still scheduled is dropped), a 400 or 404 rejected, and anything else leaves the
/// delivery as it was (a pending one keeps its next round).
pub(super) async fn run_round(
    store: &Store,
    clock: &Clock,
    client: &reqwest::Client,
    config: &WebhookConfig,
    metrics: &Metrics,
    mut delivery: DeliveryRecord,
) -> DeliveryRecord {
    let round = delivery.next_round;
    let redelivery = delivery.redelivery_at.take().map(|_| delivery.redeliveries);
    if redelivery.is_some() {
        metrics.webhook_redelivery();
    }
    let record = |attempt: u32, status_code: Option<u16>, error: Option<String>, at, latency_ms| {
        AttemptRecord {
            request_id: delivery.request_id.clone(),
            url: String::new(),
            at,
            round,
            attempt,
            status_code,
            error,
            latency_ms,
            redelivery,
        }
    };
    let log = async |attempt, status_code, error, at, latency_ms| {
        let attempt = record(attempt, status_code, error, at, latency_ms);
        if let Err(e) = store.record_attempt(&attempt).await {
            tracing::error!(error.message = %e, "cannot log a webhook attempt");
        }
    };
    // A target refused here (its name now resolves to a private address; URLs are checked when they are
    // accepted) ends the round unsent, and the next round checks again: only a receiver's 400 or 404
    // stops delivery for good. A name that does not resolve right now is a connection failure like any
    // other and goes through the retries below.
    let checked = check_target(&delivery.url, config.allow_private_targets).await;
    if let Err(
        refused @ (TargetError::Private { .. } | TargetError::LocalName(_) | TargetError::NotHttp),
    ) = checked
    {
        // The kind only: the refusal's text names the host, and the attempt log is not sealed.
        log(1, None, Some(refused.kind().to_owned()), clock.now(), 0).await;
        metrics.webhook_attempt(WebhookAttempt::TargetRefused);
        tracing::warn!(request_id = %delivery.request_id, reason = refused.kind(), "webhook target refused");
        return settle(delivery, Verdict::EndRound, 1, redelivery, config);
    }
    let signed = signature(&delivery.signing_secret, delivery.payload.as_bytes());
    let mut attempt = 0u32;
    let outcome = loop {
        attempt += 1;
        let at = clock.now();
        // In the log before it is sent: a webhook the receiver got shows there even if this process dies
        // before the answer is recorded.
        let unfinished = record(attempt, None, Some(UNFINISHED_ATTEMPT.to_owned()), at, 0);
        let entry = match store.begin_attempt(&unfinished).await {
            Ok(entry) => Some(entry),
            Err(e) => {
                tracing::error!(error.message = %e, "cannot log a webhook attempt");
                None
            }
        };
        let finish = async |status_code, error, latency_ms| {
            let finished = record(attempt, status_code, error, at, latency_ms);
            let written = match &entry {
                Some(entry) => store.finish_attempt(entry, &finished).await,
                None => store.record_attempt(&finished).await,
            };
            if let Err(e) = written {
                tracing::error!(error.message = %e, "cannot log a webhook attempt's outcome");
            }
        };
        let started = Instant::now();
        let otel = if crate::telemetry::enabled() && delivery.traceparent.is_some() {
            let span = tracing::info_span!(
                target: crate::telemetry::TARGET,
                parent: None,
                "webhook.delivery",
                // As i64: tracing-opentelemetry writes an i64 as an int attribute, but has no case
                // for u64 (or u32, u16) and writes those as strings.
                switchboard.attempt = i64::from(attempt),
                switchboard.round = i64::from(round),
                http.response.status_code = tracing::field::Empty,
            );
            crate::telemetry::adopt_traceparent(&span, delivery.traceparent.as_deref());
            span
        } else {
            tracing::Span::none()
        };
        let sent = client
            .post(&delivery.url)
            .header("Content-Type", "application/json")
            .header("X-Webhook-Signature", &signed);
        let sent = match &delivery.traceparent {
            Some(traceparent) => sent.header("traceparent", traceparent),
            None => sent,
        };
        let sent = sent.body(delivery.payload.clone()).send().await;
        let latency_ms = started.elapsed().as_millis() as u64;
        // The span ends with the attempt (before any inline wait).
        let otel = otel;
        let verdict = match sent {
            Ok(response) => {
                let status = response.status();
                otel.record("http.response.status_code", i64::from(status.as_u16()));
                finish(Some(status.as_u16()), None, latency_ms).await;
                metrics.webhook_attempt(WebhookAttempt::for_status(status.as_u16()));
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
                metrics.webhook_attempt(WebhookAttempt::TransportError);
                let kind = if error.is_timeout() {
                    "timeout"
                } else if error.is_connect() {
                    "connection failed"
                } else {
                    "request failed"
                };
                finish(
                    None,
                    // Without the URL, which the log must not hold (see `AttemptRecord::url`).
                    Some(format!("{kind}: {}", error.without_url())),
                    latency_ms,
                )
                .await;
                Verdict::RetryInline
            }
        };
        drop(otel);
        match verdict {
            Verdict::RetryInline => match config.inline_backoff.get(attempt as usize - 1) {
                Some(wait) => tokio::time::sleep(*wait).await,
                None => break Verdict::EndRound,
            },
            settled => break settled,
        }
    };
    settle(delivery, outcome, attempt, redelivery, config)
}

/// The delivery after a round (or redelivery, `redelivery` given) of `attempts` that ended on `outcome`.
fn settle(
    mut delivery: DeliveryRecord,
    outcome: Verdict,
    attempts: u32,
    redelivery: Option<u32>,
    config: &WebhookConfig,
) -> DeliveryRecord {
    let round = delivery.next_round;
    delivery.attempts += attempts;
    delivery.status = match outcome {
        Verdict::Acknowledged => DeliveryStatus::Delivered,
        Verdict::RejectedForGood => DeliveryStatus::Rejected,
        Verdict::RetryInline | Verdict::EndRound if redelivery.is_some() => delivery.status,
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
    tracing::info!(request_id = %delivery.request_id, round, redelivery, attempts, status = delivery.status.as_str(), "webhook round finished");
    delivery
}
