//! `/admin/v1/audit`: the audit log, oldest first, the recomputation of its keyed hash chain (against
//! checkpoints an operator kept, when given), and checkpoints to keep. Readable by the `admin` and
//! `auditor` roles; reading it is itself audited (`audit.read`, `audit.verify`, `audit.checkpoint`).

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;
use switchboard_storage::audit::{AuditFilter, Checkpoint, Target, Verified};

use super::AdminJson;
use crate::auth::{Auditor, Operator};
use crate::errors::{ApiError, Code};
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
    let page = state.store.audit_page(&filter, after, page_size).await?;
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

/// Checkpoints one verification may be given at most.
const MAX_CHECKPOINTS: usize = 1000;

/// Verify the audit chain
///
/// `{"ok":true,"events":N}` or `{"ok":false,"firstBadSeq":N}`: every event's hash, link and keyed MAC,
/// and that the log reaches its sealed head.
#[utoipa::path(get, path = "/admin/v1/audit/verify", operation_id = "verifyAuditChain",
    responses((status = 200, description = "The chain recomputed.", body = crate::wire::AuditVerifyOut)))]
pub async fn verify(
    Auditor(operator): Auditor,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    verified(&operator, &state, Vec::new()).await
}

/// The body of `POST /admin/v1/audit/verify`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyIn {
    checkpoints: Vec<Checkpoint>,
}

/// Verify the audit chain against kept checkpoints
///
/// As the GET, and `ok:false` when an event up to a checkpoint's `seq` differs from what it sealed or is
/// gone. A checkpoint this server did not issue (its `mac` does not hold) is 400.
#[utoipa::path(post, path = "/admin/v1/audit/verify", operation_id = "verifyAuditChainAgainstCheckpoints",
    request_body = crate::wire::AuditVerifyIn,
    responses(
        (status = 200, description = "The chain recomputed.", body = crate::wire::AuditVerifyOut),
        (status = 400, description = "`INVALID_REQUEST`: a malformed body, or a checkpoint whose mac does not hold.", body = crate::wire::ErrorOut),
    ))]
pub async fn verify_checkpoints(
    Auditor(operator): Auditor,
    state: web::Data<AppState>,
    body: AdminJson<VerifyIn>,
) -> Result<HttpResponse, ApiError> {
    let checkpoints = &body.checkpoints;
    if checkpoints.len() > MAX_CHECKPOINTS {
        return Err(ApiError::invalid_request(format!(
            "checkpoints holds at most {MAX_CHECKPOINTS} entries"
        )));
    }
    if let Some(forged) = checkpoints
        .iter()
        .position(|checkpoint| !state.store.audit_checkpoint_holds(checkpoint))
    {
        return Err(ApiError::invalid_request(format!(
            "checkpoints[{forged}] was not issued by this server: its mac does not hold for its seq, \
             hash and at"
        )));
    }
    verified(&operator, &state, checkpoints.clone()).await
}

/// Recomputes the chain (the store does it on the blocking pool).
async fn verified(
    operator: &Operator,
    state: &AppState,
    checkpoints: Vec<Checkpoint>,
) -> Result<HttpResponse, ApiError> {
    let verified = state.store.audit_verify_with(&checkpoints).await?;
    state.store.audit_read(crate::audit::event(
        state,
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

/// A checkpoint of the audit chain
///
/// `{"seq","hash","at","mac"}` for the newest event written, the `mac` under a key only the master key
/// unlocks: keep it elsewhere, and give it to `POST /admin/v1/audit/verify` later. 404 while the log is
/// empty.
#[utoipa::path(get, path = "/admin/v1/audit/checkpoint", operation_id = "getAuditCheckpoint",
    responses(
        (status = 200, description = "The newest event's checkpoint.", body = crate::wire::AuditCheckpointOut),
        (status = 404, description = "`NOT_FOUND`: the log holds no event yet.", body = crate::wire::ErrorOut),
    ))]
pub async fn checkpoint(
    Auditor(operator): Auditor,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let checkpoint = state
        .store
        .audit_checkpoint()
        .await?
        .ok_or_else(|| ApiError::new(Code::NotFound, "the audit log holds no event yet"))?;
    state.store.audit_read(crate::audit::event(
        &state,
        operator.actor(),
        "audit.checkpoint",
        Some(Target::new("audit", "chain")),
        "ok",
        operator.ip,
    ));
    Ok(HttpResponse::Ok().json(checkpoint))
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
