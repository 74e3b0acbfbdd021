//! `GET /console/api/schedule?days=N`: the scope's bookings per business day against its daily call
//! capacity, from today (in the account's time zone) on. The capacity scheduler books onto exactly these
//! days, so a bar that is full here is a day new requests skip.

use actix_web::{web, HttpResponse};
use chrono::Datelike;
use chrono_tz::Tz;
use serde::Deserialize;
use switchboard_actors::calendar::{business_days_from, federal_holiday, local_date};

use super::out::{DayOut, HolidayOut, ScheduleOut};
use super::ConsoleScope;
use crate::errors::ApiError;
use crate::state::AppState;

const DEFAULT_DAYS: usize = 15;
const MAX_DAYS: usize = 120;

/// Query parameters; `account` and `environment` are read by [`ConsoleScope`].
#[derive(Debug, Deserialize)]
pub struct ScheduleQuery {
    days: Option<String>,
}

/// The next `days` business days with their bookings, and the holidays skipped among them.
#[tracing::instrument(name = "console_schedule", skip_all, fields(account = %scope.account.id))]
pub async fn get_schedule(
    state: web::Data<AppState>,
    scope: ConsoleScope,
    query: web::Query<ScheduleQuery>,
) -> Result<HttpResponse, ApiError> {
    let n_days = match query.days.as_deref().map(str::trim) {
        None | Some("") => DEFAULT_DAYS,
        Some(raw) => match raw.parse::<usize>() {
            Ok(n) if (1..=MAX_DAYS).contains(&n) => n,
            _ => {
                return Err(ApiError::invalid_request(format!(
                    "days must be an integer from 1 to {MAX_DAYS}, got {raw:?}"
                )))
            }
        },
    };
    let account = &scope.account;
    let timezone: Tz = account.timezone.parse().map_err(|_| {
        ApiError::internal(anyhow::anyhow!(
            "account {} has an invalid time zone",
            account.id
        ))
    })?;
    let today = local_date(state.clock.now(), timezone);
    let days: Vec<_> = business_days_from(today).take(n_days).collect();
    let last = days.last().copied().unwrap_or(today);
    let booked = state.store.bookings(&scope.scope(), today, last).await?;
    let capacity = account.daily_call_capacity;
    let rows = days
        .iter()
        .map(|day| {
            let n = booked.get(day).copied().unwrap_or(0);
            DayOut {
                date: day.to_string(),
                weekday: day.weekday().to_string(),
                booked: n,
                free: capacity.saturating_sub(n),
            }
        })
        .collect();
    let holidays = today
        .iter_days()
        .take_while(|day| *day <= last)
        .filter_map(|day| federal_holiday(day).map(|name| (day, name)))
        .map(|(day, name)| HolidayOut {
            date: day.to_string(),
            name,
        })
        .collect();
    let booked_total: u32 = booked.values().sum();
    Ok(HttpResponse::Ok().json(ScheduleOut {
        account_id: &account.id,
        environment: scope.environment.as_str(),
        timezone: &account.timezone,
        today: today.to_string(),
        daily_call_capacity: capacity,
        days: rows,
        holidays,
        booked_total,
    }))
}
