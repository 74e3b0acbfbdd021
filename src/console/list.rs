//! `GET /console/api/requests`: the request list of the console, with the filters a person watching
//! requests wants (state, schema, internal id, batch, creation dates) and the counts per state.
//!
//! The store indexes requests by creation time (and by batch) only, so the other filters are applied while
//! walking that index. Each page walks at most [`MAX_SCAN`] index entries: a filter that matches little in
//! a large window answers a short page with a `nextPageToken` to continue from, rather than a slow one.

use std::collections::BTreeMap;

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Days, NaiveDate, NaiveTime, Utc};
use serde::Deserialize;
use switchboard_storage::{Cursor, RequestBatchId, RequestRecord, RequestState, Scope};

use super::out::{RequestPageOut, WindowOut};
use super::ConsoleScope;
use crate::errors::ApiError;
use crate::http::{page_token, parse_day};
use crate::state::AppState;
use crate::wire::{ReadKind, RequestOut};

const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 500;
/// Index entries one page may walk.
pub const MAX_SCAN: usize = 5_000;
/// Index entries the counts per state may walk.
pub const MAX_COUNT_SCAN: usize = 20_000;
const CHUNK: usize = 500;
const STATES: [RequestState; 4] = [
    RequestState::Processing,
    RequestState::Success,
    RequestState::Partial,
    RequestState::Failure,
];

/// Query parameters; `account` and `environment` are read by [`ConsoleScope`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleListQuery {
    state: Option<String>,
    schema_id: Option<String>,
    internal_id: Option<String>,
    request_batch_id: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
    page_size: Option<String>,
    page_token: Option<String>,
}

/// Which part of the index a listing walks.
enum Window {
    Batch(RequestBatchId),
    Created { from: NaiveDate, to: NaiveDate },
}

/// The filters applied while walking.
struct Filter {
    state: Option<RequestState>,
    schema_id: Option<String>,
    internal_id: Option<String>,
}

impl Filter {
    /// Whether `record` passes every filter except the state one (the counts ignore the state filter,
    /// so the chips keep showing the other states while one is selected).
    fn matches_ignoring_state(&self, record: &RequestRecord) -> bool {
        self.schema_id
            .as_deref()
            .is_none_or(|schema| record.schema_id == schema)
            && self.internal_id.as_deref().is_none_or(|wanted| {
                record
                    .internal_id
                    .as_deref()
                    .is_some_and(|id| id.contains(wanted))
            })
    }

    fn matches(&self, record: &RequestRecord) -> bool {
        self.state.is_none_or(|state| record.state == state) && self.matches_ignoring_state(record)
    }
}

/// Lists the scope's requests, newest first.
#[tracing::instrument(name = "console_list_requests", skip_all, fields(account = %scope.account.id))]
pub async fn list_requests(
    state: web::Data<AppState>,
    scope: ConsoleScope,
    query: web::Query<ConsoleListQuery>,
) -> Result<HttpResponse, ApiError> {
    let page_size = parse_page_size(query.page_size.as_deref())?;
    let filter = Filter {
        state: parse_state(query.state.as_deref())?,
        schema_id: non_blank(query.schema_id.as_deref()),
        internal_id: non_blank(query.internal_id.as_deref()),
    };
    let batch = non_blank(query.request_batch_id.as_deref()).map(RequestBatchId::from);
    let store_scope = scope.scope();
    // The token is bound to the scope and to the query as written; it carries the date window of the first
    // page, so paging across midnight (when the default window moves) keeps walking the same days.
    let query_key = query_key(&store_scope, &query, &filter);
    let resumed = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(token) => Some(
            page_token::decode(&state.signing_key, &query_key, token).ok_or_else(|| {
                ApiError::invalid_request("pageToken is invalid or belongs to another query")
            })?,
        ),
    };
    let window = match (batch, resumed.as_ref().and_then(|(_, window)| *window)) {
        (Some(batch), _) => Window::Batch(batch),
        (None, Some((from, to))) => Window::Created { from, to },
        (None, None) => {
            let today = state.clock.now().date_naive();
            let from = parse_day("dateFrom", query.date_from.as_deref())?.unwrap_or(today);
            let to = parse_day("dateTo", query.date_to.as_deref())?
                .unwrap_or_else(|| today + Days::new(1));
            Window::Created { from, to }
        }
    };
    let cursor = resumed.map(|(cursor, _)| cursor);

    let page = scan_page(&state, &store_scope, &window, &filter, cursor, page_size).await?;
    let counts = count_states(&state, &store_scope, &window, &filter).await?;

    let read = state.read_context(&scope.account, ReadKind::List);
    let requests: Vec<RequestOut> = page
        .rows
        .iter()
        .map(|r| {
            scope.audit_read(&state.store, &r.id);
            RequestOut::new(r, &read)
        })
        .collect();
    let token_window = match &window {
        Window::Batch(_) => None,
        Window::Created { from, to } => Some((*from, *to)),
    };
    let next_page_token = page
        .next
        .map(|cursor| page_token::encode(&state.signing_key, &query_key, &cursor, token_window));
    Ok(HttpResponse::Ok().json(RequestPageOut {
        requests,
        counts_by_state: counts.by_state,
        counts_complete: counts.complete,
        scanned: page.scanned,
        scan_limited: page.limited,
        window: match window {
            Window::Batch(batch) => WindowOut::Batch {
                request_batch_id: batch,
            },
            Window::Created { from, to } => WindowOut::Created {
                date_from: from.to_string(),
                date_to: to.to_string(),
            },
        },
        next_page_token,
    }))
}

struct Page {
    rows: Vec<RequestRecord>,
    next: Option<Cursor>,
    scanned: usize,
    limited: bool,
}

/// Walks the window from `cursor` until a page and one more match are found, the window ends, or
/// [`MAX_SCAN`] entries were walked.
async fn scan_page(
    state: &AppState,
    scope: &Scope,
    window: &Window,
    filter: &Filter,
    mut cursor: Option<Cursor>,
    page_size: usize,
) -> Result<Page, ApiError> {
    let mut rows = Vec::new();
    let mut scanned = 0;
    loop {
        let budget = MAX_SCAN - scanned;
        if budget == 0 {
            // Out of budget: continue after the last entry walked, even if the page is short.
            return Ok(Page {
                rows,
                next: cursor,
                scanned,
                limited: true,
            });
        }
        let limit = CHUNK.min(budget);
        let chunk = read_chunk(state, scope, window, cursor.as_ref(), limit).await?;
        let exhausted = chunk.len() < limit;
        for record in chunk {
            scanned += 1;
            cursor = Some(cursor_of(&record));
            if !filter.matches(&record) {
                continue;
            }
            if rows.len() == page_size {
                // A further match exists: the next page starts after this page's last row.
                let next = rows.last().map(cursor_of);
                return Ok(Page {
                    rows,
                    next,
                    scanned,
                    limited: false,
                });
            }
            rows.push(record);
        }
        if exhausted {
            return Ok(Page {
                rows,
                next: None,
                scanned,
                limited: false,
            });
        }
    }
}

struct Counts {
    by_state: BTreeMap<&'static str, u64>,
    complete: bool,
}

/// Requests per state in the whole window (every filter but the state one), walking at most
/// [`MAX_COUNT_SCAN`] entries.
async fn count_states(
    state: &AppState,
    scope: &Scope,
    window: &Window,
    filter: &Filter,
) -> Result<Counts, ApiError> {
    let mut counts = [0u64; STATES.len()];
    let mut cursor = None;
    let mut scanned = 0;
    let complete = loop {
        if scanned >= MAX_COUNT_SCAN {
            break false;
        }
        let limit = CHUNK.min(MAX_COUNT_SCAN - scanned);
        let chunk = read_chunk(state, scope, window, cursor.as_ref(), limit).await?;
        let exhausted = chunk.len() < limit;
        scanned += chunk.len();
        cursor = chunk.last().map(cursor_of);
        for record in chunk.iter().filter(|r| filter.matches_ignoring_state(r)) {
            let index = STATES.iter().position(|s| *s == record.state).unwrap_or(0);
            counts[index] += 1;
        }
        if exhausted {
            break true;
        }
    };
    let by_state = STATES
        .iter()
        .zip(counts)
        .map(|(state, n)| (state.as_str(), n))
        .collect();
    Ok(Counts { by_state, complete })
}

async fn read_chunk(
    state: &AppState,
    scope: &Scope,
    window: &Window,
    cursor: Option<&Cursor>,
    limit: usize,
) -> Result<Vec<RequestRecord>, ApiError> {
    Ok(match window {
        Window::Batch(batch) => state.store.list_batch(scope, batch, cursor, limit).await?,
        Window::Created { from, to } => {
            state
                .store
                .list_requests(scope, midnight(*from), midnight(*to), cursor, limit)
                .await?
        }
    })
}

fn midnight(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(NaiveTime::MIN).and_utc()
}

fn cursor_of(record: &RequestRecord) -> Cursor {
    Cursor {
        created_at: record.created_at,
        request_id: record.id.clone(),
    }
}

/// Identifies a listing: the scope, the window as requested and the filters.
fn query_key(scope: &Scope, query: &ConsoleListQuery, filter: &Filter) -> String {
    let window = match non_blank(query.request_batch_id.as_deref()) {
        Some(batch) => format!("batch:{batch}"),
        None => format!(
            "dates:{}:{}",
            query.date_from.as_deref().unwrap_or_default().trim(),
            query.date_to.as_deref().unwrap_or_default().trim()
        ),
    };
    format!(
        "{}:{}:{window}:{}:{}:{}",
        scope.account_id,
        scope.environment.as_str(),
        filter.state.map_or("", RequestState::as_str),
        filter.schema_id.as_deref().unwrap_or_default(),
        filter.internal_id.as_deref().unwrap_or_default(),
    )
}

fn parse_page_size(raw: Option<&str>) -> Result<usize, ApiError> {
    match raw.map(str::trim) {
        None | Some("") => Ok(DEFAULT_PAGE_SIZE),
        Some(raw) => match raw.parse::<usize>() {
            Ok(0) | Err(_) => Err(ApiError::invalid_request(format!(
                "pageSize must be a positive integer, got {raw:?}"
            ))),
            Ok(n) => Ok(n.min(MAX_PAGE_SIZE)),
        },
    }
}

fn parse_state(raw: Option<&str>) -> Result<Option<RequestState>, ApiError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    STATES
        .iter()
        .find(|s| s.as_str().eq_ignore_ascii_case(raw))
        .copied()
        .map(Some)
        .ok_or_else(|| {
            ApiError::invalid_request(format!(
                "state must be one of PROCESSING, SUCCESS, PARTIAL, FAILURE; got {raw:?}"
            ))
        })
}

fn non_blank(raw: Option<&str>) -> Option<String> {
    raw.map(str::trim)
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_case_insensitively_and_blank_means_any() {
        assert_eq!(
            parse_state(Some("success")).unwrap(),
            Some(RequestState::Success)
        );
        assert_eq!(
            parse_state(Some(" PARTIAL ")).unwrap(),
            Some(RequestState::Partial)
        );
        assert_eq!(parse_state(Some("")).unwrap(), None);
        assert_eq!(parse_state(None).unwrap(), None);
        assert!(parse_state(Some("DONE")).is_err());
    }

    #[test]
    fn page_sizes_default_cap_and_reject_nonsense() {
        assert_eq!(parse_page_size(None).unwrap(), DEFAULT_PAGE_SIZE);
        assert_eq!(parse_page_size(Some("9999")).unwrap(), MAX_PAGE_SIZE);
        assert_eq!(parse_page_size(Some("7")).unwrap(), 7);
        for bad in ["0", "-1", "ten"] {
            assert!(parse_page_size(Some(bad)).is_err(), "{bad}");
        }
    }
}
