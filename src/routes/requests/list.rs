//! `GET /v1/requests`: by creation date window or by batch, newest first, keyset-paginated.

use actix_web::{web, HttpResponse};
use chrono::{Days, NaiveTime};
use serde::Deserialize;
use switchboard_storage::{RequestBatchId, Scope};

use crate::auth::Caller;
use crate::errors::ApiError;
use crate::http::{page_token, parse_day};
use crate::state::AppState;
use crate::wire::{ErrorOut, ReadKind, RequestListOut, RequestOut};

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

/// List requests
///
/// The caller's requests by creation date window or by batch, newest first, keyset-paginated.
#[utoipa::path(get, path = "/v1/requests", operation_id = "listRequests",
    params(
        ("dateFrom" = Option<String>, Query, format = Date, description = "First creation day (`YYYY-MM-DD`, UTC), inclusive. Default: today. Ignored with `requestBatchId`, though a malformed value is still `400 INVALID_REQUEST`."),
        ("dateTo" = Option<String>, Query, format = Date, description = "Last creation day (`YYYY-MM-DD`, UTC), exclusive. Default: tomorrow. Ignored with `requestBatchId`, though a malformed value is still `400 INVALID_REQUEST`."),
        ("requestBatchId" = Option<String>, Query, min_length = 1, pattern = r"\S", description = "Only the requests of this batch, whatever their dates. Without `pageSize` the whole batch comes in one page. Empty or blank: `400 INVALID_REQUEST`."),
        ("pageSize" = Option<u32>, Query, minimum = 1, description = "Requests per page; default 100 (with `requestBatchId` and no `pageSize`: the whole batch in one page). At most 500 are served: a larger value is accepted and served as 500."),
        ("pageToken" = Option<String>, Query, description = "`nextPageToken` of the previous page of the same query."),
    ),
    responses(
        (status = 200, description = "A page of requests.", body = RequestListOut),
        (status = 400, description = "`INVALID_REQUEST`: `dateFrom`/`dateTo` not a valid `YYYY-MM-DD` (with or without `requestBatchId`), `requestBatchId` empty, `pageSize` not a positive integer, or `pageToken` invalid or from another query.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "list_requests", skip_all, fields(account = %caller.account.id))]
pub async fn list_requests(
    state: web::Data<AppState>,
    caller: Caller,
    query: web::Query<ListQuery>,
) -> Result<HttpResponse, ApiError> {
    let explicit_page_size = match query.page_size.as_deref().map(str::trim) {
        None | Some("") => None,
        // Any positive count is accepted and capped; digits too many for a number are still a count
        // above the cap, not a malformed parameter.
        Some(raw) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => {
            match raw.parse::<usize>() {
                Ok(0) => return Err(page_size_error(raw)),
                Ok(n) => Some(n.min(MAX_PAGE_SIZE)),
                Err(_) => Some(MAX_PAGE_SIZE),
            }
        }
        Some(raw) => return Err(page_size_error(raw)),
    };
    let scope = Scope::new(caller.account.id.clone(), caller.environment);
    // A blank batch id is a mistake, not a request for today's list (as a blank date is not).
    let batch = match query.request_batch_id.as_deref().map(str::trim) {
        None => None,
        Some("") => {
            return Err(ApiError::invalid_request(
                "requestBatchId must not be empty or blank",
            ))
        }
        Some(raw) => Some(RequestBatchId::from(raw)),
    };
    // Clients written against the hosted service list a batch without paging: the whole batch comes in
    // one page unless the caller asks for pages. A batch is one POST's entries at most, so the page holds
    // at most as many as a POST may carry (and weighs no more than that POST's body, plus what the
    // server added); a batch stored before that limit pages past it.
    let page_size = match (explicit_page_size, &batch) {
        (Some(size), _) => size,
        (None, Some(_)) => super::create::MAX_BATCH_ENTRIES,
        (None, None) => DEFAULT_PAGE_SIZE,
    };
    let scope_key = format!("{}:{}", scope.account_id, scope.environment.as_str());
    // A token is bound to the caller's scope and to the query as written, and carries the date window it
    // was computed for, so paging across midnight keeps the window of page one.
    let query_key = match &batch {
        Some(batch) => format!("{scope_key}:batch:{batch}"),
        None => format!(
            "{scope_key}:dates:{}:{}",
            query.date_from.as_deref().unwrap_or_default(),
            query.date_to.as_deref().unwrap_or_default()
        ),
    };
    let resumed = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(token) => Some(
            page_token::decode(&state.signing_key, &query_key, token).ok_or_else(|| {
                ApiError::invalid_request("pageToken is invalid or belongs to another query")
            })?,
        ),
    };
    let cursor = resumed.as_ref().map(|(cursor, _)| cursor.clone());
    // A malformed date is refused whatever else the query holds (4.8's errors); only then does a batch
    // id make the dates irrelevant, so a typo is never silently ignored.
    let date_from = parse_day("dateFrom", query.date_from.as_deref())?;
    let date_to = parse_day("dateTo", query.date_to.as_deref())?;
    let window = match (&batch, resumed.as_ref().and_then(|(_, window)| *window)) {
        (Some(_), _) => None,
        (None, Some(window)) => Some(window),
        (None, None) => {
            let today = state.clock.now().date_naive();
            let from = date_from.unwrap_or(today);
            let to = date_to.unwrap_or_else(|| today + Days::new(1));
            Some((from, to))
        }
    };
    // One extra row tells whether another page exists without a second query.
    let mut rows = match &batch {
        Some(batch) => {
            state
                .store
                .list_batch(&scope, batch, cursor.as_ref(), page_size + 1)
                .await?
        }
        None => {
            let (from, to) = window.expect("a date listing has a window");
            let start = from.and_time(NaiveTime::MIN).and_utc();
            let end = to.and_time(NaiveTime::MIN).and_utc();
            state
                .store
                .list_requests(&scope, start, end, cursor.as_ref(), page_size + 1)
                .await?
        }
    };
    let next = if rows.len() > page_size {
        rows.truncate(page_size);
        rows.last().map(|last| {
            let cursor = switchboard_storage::Cursor {
                created_at: last.created_at,
                request_id: last.id.clone(),
            };
            page_token::encode(&state.signing_key, &query_key, &cursor, window)
        })
    } else {
        None
    };
    for record in &rows {
        state
            .store
            .audit_read(super::get::read_event(&caller, &record.id));
    }
    let read = state.read_context(&caller.account, ReadKind::List);
    let requests = rows
        .iter()
        .map(|record| RequestOut::new(record, &read))
        .collect();
    Ok(HttpResponse::Ok().json(RequestListOut {
        requests,
        next_page_token: next,
    }))
}

/// A `pageSize` that is not a positive whole number.
fn page_size_error(raw: &str) -> ApiError {
    ApiError::invalid_request(format!(
        "pageSize must be a whole number from 1 to {MAX_PAGE_SIZE}, got {raw:?}"
    ))
}
