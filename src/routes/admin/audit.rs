//! `/admin/v1/audit`: the audit log, oldest first, and the recomputation of its hash chain. Readable by
//! the `admin` and `auditor` roles; reading it is itself audited (`audit.read`).

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;
use switchboard_storage::audit::{AuditFilter, Target, Verified};

use crate::auth::Auditor;
use crate::errors::ApiError;
use crate::state::AppState;

const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditQuery {
    actor: Option<String>,
    action: Option<String>,
    target_id: Option<String>,
    since: Option<String>,
    until: Option<String>,
    page_size: Option<String>,
    page_token: Option<String>,
}

/// Read the audit log
///
/// `{"events":[...],"nextPageToken"?}`, oldest first. Reading it is itself audited.
#[utoipa::path(get, path = "/admin/v1/audit", operation_id = "listAuditEvents",
    params(
        ("actor" = Option<String>, Query, description = "Only this actor's events."),
        ("action" = Option<String>, Query, description = "Only this action's events."),
        ("targetId" = Option<String>, Query, description = "Only events about this target."),
        ("since" = Option<String>, Query, format = DateTime, description = "RFC 3339; inclusive."),
        ("until" = Option<String>, Query, format = DateTime, description = "RFC 3339."),
        ("pageSize" = Option<u32>, Query, minimum = 1, maximum = 1000, description = "Default 100."),
        ("pageToken" = Option<String>, Query, description = "`nextPageToken` of the previous page."),
    ),
    responses(
        (status = 200, description = "A page of events.", body = crate::wire::AuditPageOut),
        (status = 400, description = "`INVALID_REQUEST`: a bad parameter, or one not listed.", body = crate::wire::ErrorOut),
    ))]
pub async fn list_events(
    Auditor(operator): Auditor,
    state: web::Data<AppState>,
    query: web::Query<AuditQuery>,
) -> Result<HttpResponse, ApiError> {
    let filter = AuditFilter {
        actor: non_blank(&query.actor),
        action: non_blank(&query.action),
        target_id: non_blank(&query.target_id),
        since: instant("since", &query.since)?,
        until: instant("until", &query.until)?,
    };
    let page_size = match query.page_size.as_deref() {
        None => DEFAULT_PAGE,
        Some(raw) => match raw.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
            _ => {
                return Err(ApiError::invalid_request(format!(
                    "pageSize must be a whole number from 1 to {MAX_PAGE}"
                )))
            }
        },
    };
    let after = match query.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => 0,
        Some(token) => token
            .strip_prefix("after-")
            .and_then(|seq| seq.parse::<u64>().ok())
            .ok_or_else(|| ApiError::invalid_request("pageToken is not one this server issued"))?,
    };
    let page = state.store.audit_page(&filter, after, page_size)?;
    state.store.audit_read(crate::audit::event(
        &state,
        operator.actor(),
        "audit.read",
        Some(Target::new("audit", "events")),
        "ok",
        operator.ip,
    ));
    let mut body = json!({ "events": page.events });
    if let Some(after) = page.next_after {
        body["nextPageToken"] = json!(format!("after-{after}"));
    }
    Ok(HttpResponse::Ok().json(body))
}

/// Verify the audit chain
///
/// `{"ok":true,"events":N}` or `{"ok":false,"firstBadSeq":N}`.
#[utoipa::path(get, path = "/admin/v1/audit/verify", operation_id = "verifyAuditChain",
    responses((status = 200, description = "The chain recomputed.", body = crate::wire::AuditVerifyOut)))]
pub async fn verify(
    Auditor(operator): Auditor,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let verified = state.store.audit_verify()?;
    state.store.audit_read(crate::audit::event(
        &state,
        operator.actor(),
        "audit.verify",
        Some(Target::new("audit", "chain")),
        "ok",
        operator.ip,
    ));
    Ok(HttpResponse::Ok().json(match verified {
        Verified::Holds { events } => json!({ "ok": true, "events": events }),
        Verified::BrokenAt { seq } => json!({ "ok": false, "firstBadSeq": seq }),
    }))
}

fn non_blank(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

fn instant(name: &str, value: &Option<String>) -> Result<Option<DateTime<Utc>>, ApiError> {
    match value.as_deref() {
        None => Ok(None),
        Some(raw) => DateTime::parse_from_rfc3339(raw.trim())
            .map(|at| Some(at.with_timezone(&Utc)))
            .map_err(|_| {
                ApiError::invalid_request(format!(
                    "{name} must be an RFC 3339 instant such as 2026-11-23T14:00:00Z"
                ))
            }),
    }
}
