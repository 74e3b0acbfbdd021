//! Limits of real calls: at most `max_concurrent_calls` platform calls at once, and calls only within the
//! payer's calling hours (business days in the payer's zone when the directory names one, else the
//! account's; a payer may override the hours). An attempt
//! outside the hours or without a free slot waits; it never fails for it. Only dialers that place real
//! calls are limited; the simulator and the sandbox run at any hour.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Timelike, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use switchboard_storage::{CallId, CallingHoursRecord, RequestId};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::calendar::{is_business_day, local_date};
use crate::{Clock, Metrics};

/// The default calling hours: 8:00 to 17:00.
pub const DEFAULT_HOURS: CallingHoursRecord = CallingHoursRecord {
    start_minute: 8 * 60,
    end_minute: 17 * 60,
};

/// Why an attempt is waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReason {
    /// Outside the payer's calling hours.
    CallingHours,
    /// Every call slot is taken.
    Slot,
}

impl WaitReason {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitReason::CallingHours => "calling_hours",
            WaitReason::Slot => "slot",
        }
    }
}

/// An attempt waiting to be placed.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingCall {
    /// The call.
    pub call_id: CallId,
    /// Its request.
    pub request_id: RequestId,
    /// What it waits for.
    pub reason: WaitReason,
    /// Since when (clock time).
    pub since: DateTime<Utc>,
}

/// The limits of one server, shared by every call actor and read by the console.
pub struct CallLimits {
    slots: Arc<Semaphore>,
    max: usize,
    default_hours: CallingHoursRecord,
    waiting: Mutex<BTreeMap<CallId, WaitingCall>>,
    metrics: Arc<Metrics>,
}

/// What the step knows about one attempt's limits.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gate {
    /// The zone the hours are judged in: the payer's, else the account's.
    pub zone: Tz,
    /// The payer's override, if any.
    pub hours: Option<CallingHoursRecord>,
    /// The platform may already hold this call (a restart re-attaches): the hours no longer apply.
    pub reattach: bool,
}

impl CallLimits {
    /// Limits of `max` concurrent calls within `default_hours` unless a payer says otherwise.
    pub fn new(max: usize, default_hours: CallingHoursRecord, metrics: Arc<Metrics>) -> CallLimits {
        metrics.set_call_slots(max, 0);
        CallLimits {
            slots: Arc::new(Semaphore::new(max)),
            max,
            default_hours,
            waiting: Mutex::default(),
            metrics,
        }
    }

    /// `max_concurrent_calls`.
    pub fn max(&self) -> usize {
        self.max
    }

    /// The calling hours of a payer that names none of its own.
    pub fn default_hours(&self) -> CallingHoursRecord {
        self.default_hours
    }

    /// Slots held by calls now.
    pub fn in_use(&self) -> usize {
        self.max - self.slots.available_permits()
    }

    /// Attempts waiting now, oldest first.
    pub fn waiting(&self) -> Vec<WaitingCall> {
        let mut all: Vec<WaitingCall> = self
            .waiting
            .lock()
            .expect("waiting lock")
            .values()
            .cloned()
            .collect();
        all.sort_by_key(|w| w.since);
        all
    }

    /// Waits until the attempt may be placed and returns its slot, held until the call ends.
    pub(crate) async fn admit(
        self: Arc<Self>,
        clock: &Clock,
        call_id: &CallId,
        request_id: &RequestId,
        gate: Gate,
    ) -> Slot {
        let hours = gate.hours.unwrap_or(self.default_hours);
        if !gate.reattach && !within_hours(clock.now(), gate.zone, hours) {
            self.mark(call_id, request_id, WaitReason::CallingHours, clock.now());
            tracing::info!("outside calling hours: the attempt waits");
            let mut ticks = clock.ticks();
            while !within_hours(clock.now(), gate.zone, hours) {
                let until = next_opening(clock.now(), gate.zone, hours) - clock.now();
                let wall = until
                    .to_std()
                    .unwrap_or_default()
                    .clamp(Duration::from_millis(50), Duration::from_secs(60));
                tokio::select! {
                    _ = ticks.changed() => {}
                    () = tokio::time::sleep(wall) => {}
                }
            }
            self.unmark(call_id);
        }
        let permit = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.mark(call_id, request_id, WaitReason::Slot, clock.now());
                let permit = Arc::clone(&self.slots)
                    .acquire_owned()
                    .await
                    .expect("the call slots are never closed");
                self.unmark(call_id);
                permit
            }
        };
        self.metrics.set_call_slots(self.max, self.in_use());
        Slot {
            permit: Some(permit),
            limits: self,
        }
    }

    fn mark(
        &self,
        call_id: &CallId,
        request_id: &RequestId,
        reason: WaitReason,
        since: DateTime<Utc>,
    ) {
        let mut waiting = self.waiting.lock().expect("waiting lock");
        waiting.insert(
            call_id.clone(),
            WaitingCall {
                call_id: call_id.clone(),
                request_id: request_id.clone(),
                reason,
                since,
            },
        );
        self.publish(&waiting);
    }

    fn unmark(&self, call_id: &CallId) {
        let mut waiting = self.waiting.lock().expect("waiting lock");
        waiting.remove(call_id);
        self.publish(&waiting);
    }

    fn publish(&self, waiting: &BTreeMap<CallId, WaitingCall>) {
        for reason in [WaitReason::CallingHours, WaitReason::Slot] {
            let count = waiting.values().filter(|w| w.reason == reason).count();
            self.metrics.set_calls_waiting(reason.as_str(), count);
        }
    }
}

/// A held call slot; dropping it frees the slot.
pub(crate) struct Slot {
    permit: Option<OwnedSemaphorePermit>,
    limits: Arc<CallLimits>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        drop(self.permit.take());
        self.limits
            .metrics
            .set_call_slots(self.limits.max, self.limits.in_use());
    }
}

/// Whether `now` is on a business day in `zone`, within `hours`.
pub fn within_hours(now: DateTime<Utc>, zone: Tz, hours: CallingHoursRecord) -> bool {
    let local = now.with_timezone(&zone);
    let minute = (local.hour() * 60 + local.minute()) as u16;
    is_business_day(local_date(now, zone))
        && minute >= hours.start_minute
        && minute < hours.end_minute
}

/// The next instant at or after `now` within `hours` on a business day (searched minute-exactly over the
/// coming days; a payer with empty hours never opens, and the search gives up after two weeks).
pub fn next_opening(now: DateTime<Utc>, zone: Tz, hours: CallingHoursRecord) -> DateTime<Utc> {
    if within_hours(now, zone, hours) {
        return now;
    }
    let today = local_date(now, zone);
    for offset in 0..14 {
        let date = today + chrono::Duration::days(offset);
        if !is_business_day(date) || hours.start_minute >= hours.end_minute {
            continue;
        }
        let opening = crate::calendar::day_start(date, zone)
            + chrono::Duration::minutes(i64::from(hours.start_minute));
        if opening > now {
            return opening;
        }
    }
    now + chrono::Duration::days(14)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn business_hours_in_the_account_zone() {
        let ny: Tz = "America/New_York".parse().unwrap();
        // Monday 2026-11-23, 09:00 EST = 14:00 UTC.
        assert!(within_hours(at("2026-11-23T14:00:00Z"), ny, DEFAULT_HOURS));
        // 07:59 EST.
        assert!(!within_hours(at("2026-11-23T12:59:00Z"), ny, DEFAULT_HOURS));
        // 17:00 EST is closed.
        assert!(!within_hours(at("2026-11-23T22:00:00Z"), ny, DEFAULT_HOURS));
        // Thanksgiving, Thursday 2026-11-26.
        assert!(!within_hours(at("2026-11-26T15:00:00Z"), ny, DEFAULT_HOURS));
        // Saturday.
        assert!(!within_hours(at("2026-11-28T15:00:00Z"), ny, DEFAULT_HOURS));
    }

    #[test]
    fn the_next_opening_skips_nights_weekends_and_holidays() {
        let ny: Tz = "America/New_York".parse().unwrap();
        // Monday 18:00 EST -> Tuesday 08:00 EST.
        assert_eq!(
            next_opening(at("2026-11-23T23:00:00Z"), ny, DEFAULT_HOURS),
            at("2026-11-24T13:00:00Z")
        );
        // Wednesday evening -> Friday (Thursday is Thanksgiving).
        assert_eq!(
            next_opening(at("2026-11-25T23:00:00Z"), ny, DEFAULT_HOURS),
            at("2026-11-27T13:00:00Z")
        );
        let late = CallingHoursRecord {
            start_minute: 10 * 60,
            end_minute: 12 * 60,
        };
        assert_eq!(
            next_opening(at("2026-11-23T14:00:00Z"), ny, late),
            at("2026-11-23T15:00:00Z")
        );
    }
}
