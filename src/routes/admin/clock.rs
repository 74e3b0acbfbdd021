use actix_web::{web, HttpResponse};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use serde_json::json;
use switchboard_actors::ClockError;

use super::AdminJson;
use crate::auth::{Admin, Reader};
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::format_timestamp;

/// `{"advanceSeconds": N}` or `{"set": "RFC 3339"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MoveClockIn {
    advance_seconds: Option<i64>,
    set: Option<String>,
}

/// `GET /admin/v1/clock`.
pub async fn get_clock(_: Reader, state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "now": format_timestamp(state.clock.now()),
        "mode": if state.clock.is_manual() { "manual" } else { "system" },
    }))
}

/// `POST /admin/v1/clock`: moves a manual clock forward; due work then runs. The new instant is stored
/// before the clock moves, so a restart resumes from it and nothing can record a time the calendar would
/// return behind.
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
    Ok(HttpResponse::Ok().json(json!({ "now": format_timestamp(now) })))
}
