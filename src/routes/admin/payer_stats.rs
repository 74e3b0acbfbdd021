//! `GET /admin/v1/payers/{name}/stats`: what Switchboard learned of a payer's line (operator contract §11).

use actix_web::{web, HttpResponse};
use switchboard_storage::{PayerWeek, PAYER_STATS_KEPT_DAYS};

use crate::auth::Reader;
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{ErrorOut, PayerStatsOut};

/// What was learned of a payer's line
///
/// The last 90 days of the payer's calls: how many, how many reached a representative, the median hold,
/// the cost per completed request, and the same by hour of the week in the payer's zone (weekday 1 is
/// Monday; only hours that saw a call). Audited as `payer.stats.read`.
#[utoipa::path(get, path = "/admin/v1/payers/{name}/stats", operation_id = "getPayerStats",
    params(("name" = String, Path, description = "The payer's directory name.")),
    responses(
        (status = 200, description = "What was learned.", body = PayerStatsOut),
        (status = 404, description = "`NOT_FOUND`: no such payer in the directory.", body = ErrorOut),
    ))]
pub async fn get_payer_stats(
    Reader(operator): Reader,
    state: web::Data<AppState>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let Some(payer) = state.store.payer(&name).await? else {
        return Err(ApiError::new(
            Code::NotFound,
            format!("Payer '{name}' is not in the directory"),
        ));
    };
    let stats = payer_stats(&state, &payer.name).await?;
    let read = crate::audit::change(&state, &operator, "payer.stats.read", "payer", &payer.name);
    state.store.audit_read(read);
    Ok(HttpResponse::Ok().json(stats))
}

/// What was learned of `payer` (a directory name) over the days kept: for the admin API and the console.
pub(crate) async fn payer_stats(state: &AppState, payer: &str) -> Result<PayerStatsOut, ApiError> {
    let today = state.clock.now().date_naive();
    let since = today - chrono::Days::new(u64::from(PAYER_STATS_KEPT_DAYS));
    let days = state.store.payer_days(payer, since).await?;
    Ok(PayerStatsOut::new(
        payer,
        &PayerWeek::of(&days),
        state.settings.prices.per_minute_micros,
    ))
}
