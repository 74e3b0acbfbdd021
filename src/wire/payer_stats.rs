//! `GET /admin/v1/payers/{name}/stats` (operator contract §11): what Switchboard learned of a payer's line
//! over the last 90 days. Its keys are the contract's (camelCase).

use serde::Serialize;
use switchboard_storage::{HourStats, PayerWeek};
use utoipa::ToSchema;

/// What was learned of one payer's line.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayerStatsOut {
    /// The payer's directory name.
    pub payer: String,
    /// Calls placed to it.
    pub calls: u32,
    /// Of which a representative answered (not voicemail, a hold timeout or a phone tree that looped).
    pub reached: u32,
    /// Median time on hold before a representative answered, in seconds (to within 30 s); `null` before
    /// any hold was measured.
    pub median_hold_seconds: Option<u32>,
    /// Seconds on hold summed over the calls that reported a hold (beside the contract's fields: what a
    /// measurement of hold minutes per completed request divides).
    pub hold_seconds: u64,
    /// Requests to this payer that ended `SUCCESS` or `PARTIAL` (beside the contract's fields).
    pub completed_requests: u32,
    /// What its calls cost per request completed (`SUCCESS` or `PARTIAL`), in US dollars with two
    /// places: every call's minutes (each rounded up) at `[dialer] cost_per_minute`, over the completed
    /// requests; `null` before any completed.
    #[schema(examples("4.32"))]
    pub cost_per_completed_request: Option<String>,
    /// Each hour of the week that saw a call, Monday 0:00 first, in the payer's zone.
    pub by_hour: Vec<PayerHourOut>,
}

/// One hour of the week of a payer's line.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PayerHourOut {
    /// 1 (Monday) to 7 (Sunday).
    pub weekday: u8,
    /// 0 to 23, in the payer's zone.
    pub hour: u8,
    /// Calls placed in that hour.
    pub calls: u32,
    /// Of which a representative answered.
    pub reached: u32,
    /// Median hold of those calls, in seconds; `null` when none was measured.
    pub median_hold_seconds: Option<u32>,
}

impl PayerStatsOut {
    /// The answer for `payer` from its `week`, costed at `cost_per_minute_micros`.
    pub fn new(payer: &str, week: &PayerWeek, cost_per_minute_micros: u64) -> PayerStatsOut {
        let total = week.total();
        let by_hour = (0..7u8)
            .flat_map(|weekday| (0..24u8).map(move |hour| (weekday, hour)))
            .filter_map(|(weekday, hour)| {
                let stats: &HourStats = week.hour(usize::from(weekday), usize::from(hour));
                (stats.calls > 0).then(|| PayerHourOut {
                    weekday: weekday + 1,
                    hour,
                    calls: stats.calls,
                    reached: stats.reached,
                    median_hold_seconds: stats.median_hold_seconds(),
                })
            })
            .collect();
        PayerStatsOut {
            payer: payer.to_string(),
            calls: total.calls,
            reached: total.reached,
            median_hold_seconds: total.median_hold_seconds(),
            hold_seconds: total.hold_seconds,
            completed_requests: week.completed_requests,
            cost_per_completed_request: cost_per_completed(week, cost_per_minute_micros),
            by_hour,
        }
    }
}

/// Dollars with two places, rounded half up, from millionths of a dollar.
fn dollars(micros: u128) -> String {
    let cents = (micros + 5_000) / 10_000;
    format!("{}.{:02}", cents / 100, cents % 100)
}

fn cost_per_completed(week: &PayerWeek, cost_per_minute_micros: u64) -> Option<String> {
    let completed = u128::from(week.completed_requests);
    (completed > 0).then(|| {
        let total = u128::from(week.billed_minutes) * u128::from(cost_per_minute_micros);
        dollars(total / completed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_have_two_places() {
        assert_eq!(dollars(0), "0.00");
        assert_eq!(dollars(1_560_000), "1.56");
        assert_eq!(dollars(4_995_000), "5.00");
        assert_eq!(dollars(12_345_678), "12.35");
    }
}
