//! `/admin/v1/clock`: the server's clock, and moving a manual one.

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use switchboard_actors::ClockError;
use utoipa::ToSchema;

use super::AdminJson;
use crate::auth::{Admin, Reader};
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{format_timestamp, ClockMovedOut, ClockOut, ErrorOut};

/// Exactly one of `advanceSeconds` and `set`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MoveClockIn {
    /// Seconds to move forward.
    #[schema(minimum = 0, nullable = false)]
    advance_seconds: Option<i64>,
    /// An RFC 3339 instant to move to (one behind the clock changes nothing).
    #[schema(format = DateTime, nullable = false)]
    set: Option<String>,
}

/// Read the clock
#[utoipa::path(get, path = "/admin/v1/clock", operation_id = "getClock",
    responses((status = 200, description = "The clock.", body = ClockOut)))]
pub async fn get_clock(_: Reader, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(ClockOut {
        now: format_timestamp(state.clock.now()),
        mode: if state.clock.is_manual() {
            "manual"
        } else {
            "system"
        },
    })
}

/// Move a manual clock
///
/// Moves a manual clock forward; due work then runs. The new instant is stored before the clock moves, so
/// a restart resumes from it. A system clock answers 400.
#[utoipa::path(post, path = "/admin/v1/clock", operation_id = "moveClock",
    request_body = MoveClockIn,
    responses(
        (status = 200, description = "The clock moved.", body = ClockMovedOut),
        (status = 400, description = "`INVALID_REQUEST`: not a manual clock, both or neither key, a negative advance or a malformed instant.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_move_clock", skip_all)]
pub async fn move_clock(
    _: Admin,
    state: web::Data<AppState>,
    body: AdminJson<MoveClockIn>,
) -> Result<HttpResponse, ApiError> {
    if !state.clock.is_manual() {
        return Err(ApiError::invalid_request(ClockError::NotManual.to_string()));
    }
    let target = match (body.advance_seconds, body.set.as_deref()) {
        (Some(seconds), None) => {
            if seconds < 0 {
                return Err(ApiError::invalid_request(
                    "advanceSeconds must not be negative",
                ));
            }
            state.clock.now() + Duration::seconds(seconds)
        }
        (None, Some(raw)) => {
            let instant = DateTime::parse_from_rfc3339(raw).map_err(|e| {
                ApiError::invalid_request(format!("set: {raw:?} is not an RFC 3339 instant: {e}"))
            })?;
            instant.with_timezone(&Utc)
        }
        _ => {
            return Err(ApiError::invalid_request(
                "give exactly one of advanceSeconds or set",
            ))
        }
    };
    // An instant behind the clock changes nothing stored: the stored one only moves forward.
    state.store.record_manual_clock(target).await?;
    let now = state
        .clock
        .set(target)
        .map_err(|e: ClockError| ApiError::invalid_request(e.to_string()))?;
    tracing::info!(now = %now, "clock moved");
    Ok(HttpResponse::Ok().json(ClockMovedOut {
        now: format_timestamp(now),
    }))
}
