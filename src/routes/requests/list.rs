//! `GET /v1/requests`: by creation date window or by batch, newest first, keyset-paginated.

use actix_web::{web, HttpResponse};
use chrono::{Days, NaiveDate, NaiveTime};
use serde::Deserialize;
use serde_json::json;
use switchboard_storage::Scope;

use super::page_token;
use crate::auth::Caller;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{request_out, ReadKind};

const DEFAULT_PAGE_SIZE: usize = 100;
const MAX_PAGE_SIZE: usize = 500;

/// Query parameters, all optional and parsed by hand so every problem gets a precise message.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    date_from: Option<String>,
    date_to: Option<String>,
    request_batch_id: Option<String>,
    page_size: Option<String>,
    page_token: Option<String>,
}

/// Lists the caller's requests.
#[tracing::instrument(name = "list_requests", skip_all, fields(account = %caller.account.id))]
pub async fn list_requests(
    state: web::Data<AppState>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let page_size = match query.page_size.as_deref().map(str::trim) {
        None | Some("") => DEFAULT_PAGE_SIZE,
        Some(raw) => match raw.parse::<usize>() {
            Ok(0) | Err(_) => {
                return Err(ApiError::invalid_request(format!(
                    "pageSize must be a positive integer, got {raw:?}"
                )))
            }
            Ok(n) => n.min(MAX_PAGE_SIZE),
        },
    };
    let scope = Scope::new(caller.account.id.clone(), caller.environment);
    let batch = query
        .request_batch_id
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty());
    // The dates are validated even when a batch id overrides them, so a typo never passes silently.
    let today = state.clock.now().date_naive();
    let from = parse_day("dateFrom", query.date_from.as_deref())?.unwrap_or(today);
    let to = parse_day("dateTo", query.date_to.as_deref())?.unwrap_or_else(|| today + Days::new(1));
    // The token is bound to the caller's scope and query, so it cannot resume another listing.
    let query_key = match batch {
        Some(batch) => format!(
            "{}:{}:batch:{batch}",
            scope.account_id,
            scope.environment.as_str()
        ),
        None => format!(
            "{}:{}:dates:{from}:{to}",
            scope.account_id,
            scope.environment.as_str()
        ),
    };
    let cursor = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(token) => Some(
            page_token::decode(&state.signing_key, &query_key, token).ok_or_else(|| {
                ApiError::invalid_request("pageToken is invalid or belongs to another query")
            })?,
        ),
    };
    // One extra row tells whether another page exists without a second query.
    let mut rows = match batch {
        Some(batch) => state
            .store
            .list_batch(&scope, batch, cursor.as_ref(), page_size + 1)?,
        None => {
            let start = from.and_time(NaiveTime::MIN).and_utc();
            let end = to.and_time(NaiveTime::MIN).and_utc();
            state
                .store
                .list_requests(&scope, start, end, cursor.as_ref(), page_size + 1)?
        }
    };
    let next = if rows.len() > page_size {
        rows.truncate(page_size);
        rows.last().map(|last| {
            let cursor = switchboard_storage::Cursor {
                created_at: last.created_at,
                request_id: last.id.clone(),
            };
            page_token::encode(&state.signing_key, &query_key, &cursor)
        })
    } else {
        None
    };
    let read = state.read_context(&caller.account, ReadKind::List);
    let requests: Vec<_> = rows
        .iter()
        .map(|record| request_out(record, &read))
        .collect();
    let mut body = json!({ "requests": requests });
    if let Some(next) = next {
        body["nextPageToken"] = json!(next);
    }
    Ok(HttpResponse::Ok().json(body))
}

fn parse_day(name: &str, raw: Option<&str>) -> Result<Option<NaiveDate>, ApiError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let strict = raw.len() == 10 && raw.as_bytes()[4] == b'-' && raw.as_bytes()[7] == b'-';
    match NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        Ok(day) if strict => Ok(Some(day)),
        _ => Err(ApiError::invalid_request(format!(
            "{name} must be a valid YYYY-MM-DD date, got {raw:?}"
        ))),
    }
}
