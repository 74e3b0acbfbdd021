//! `GET /console/api/requests/{requestId}`: one request as the single read shows it, with what the detail
//! view needs around it: the field inventory of every schema behind its steps (labels for the results
//! table) and the webhook delivery log.

use std::collections::BTreeSet;

use actix_web::{web, HttpResponse};
use serde_json::{json, Map, Value};
use switchboard_storage::{DeliveryStatus, RequestRecord};

use super::ConsoleScope;
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{format_timestamp, request_out, ReadKind, SchemaDetailOut};

/// The request (404 `REQUEST_NOT_FOUND` outside the scope), its schemas and its webhook delivery.
#[tracing::instrument(name = "console_get_request", skip_all, fields(request_id = %request_id))]
pub async fn get_request(
    state: web::Data<AppState>,
    scope: ConsoleScope,
    request_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let record = match state.store.request(&request_id)? {
        Some(record) if scope.owns(&record) => record,
        _ => {
            return Err(ApiError::new(
                Code::RequestNotFound,
                format!("Request '{request_id}' was not found"),
            ))
        }
    };
    let read = state.read_context(&scope.account, ReadKind::Single);
    let request = request_out(&record, &read);
    let schemas = schemas_behind(&state, &record, &request)?;
    let webhook = webhook(&state, &record.id)?;
    Ok(HttpResponse::Ok().json(json!({
        "request": request,
        "schemas": schemas,
        "webhook": webhook,
        "electronic": super::electronic::electronic_trace(&record),
    })))
}

/// The detail of the request's schema (at the version the request is pinned to) and of every other
/// schema named in `callSteps` (at its latest version), keyed by id. A schema that no longer exists is
/// left out: the view then shows bare field names.
fn schemas_behind(
    state: &AppState,
    record: &RequestRecord,
    request: &Value,
) -> Result<Map<String, Value>, ApiError> {
    let mut ids = BTreeSet::from([record.schema_id.clone()]);
    if let Some(steps) = request["callSteps"].as_array() {
        ids.extend(
            steps
                .iter()
                .filter_map(|s| s["schemaId"].as_str())
                .map(str::to_owned),
        );
    }
    let mut schemas = Map::new();
    for id in ids {
        let Some(head) = state.store.schema_head(&id)? else {
            continue;
        };
        let pinned = if id == record.schema_id {
            record
                .run
                .as_ref()
                .map_or(record.schema_version, |r| r.schema_version)
        } else {
            head.latest_version
        };
        let version = match state.store.schema_version(&id, pinned)? {
            Some(version) => Some(version),
            None => state.store.schema_version(&id, head.latest_version)?,
        };
        if let Some(version) = version {
            let mut detail = serde_json::to_value(SchemaDetailOut::from_version(&version))
                .map_err(ApiError::internal)?;
            detail["version"] = json!(version.version);
            schemas.insert(id, detail);
        }
    }
    Ok(schemas)
}

/// The webhook delivery and every attempt, or `null` when none was enqueued (not terminal yet, or no
/// webhook URL).
fn webhook(state: &AppState, request_id: &str) -> Result<Value, ApiError> {
    let Some(delivery) = state.store.delivery(request_id)? else {
        return Ok(Value::Null);
    };
    let attempts: Vec<Value> = state
        .store
        .attempts(request_id)?
        .into_iter()
        .map(|a| {
            json!({
                "url": a.url,
                "at": format_timestamp(a.at),
                "round": a.round,
                "attempt": a.attempt,
                "statusCode": a.status_code,
                "error": a.error,
                "latencyMs": a.latency_ms,
            })
        })
        .collect();
    let pending = delivery.status == DeliveryStatus::Pending;
    Ok(json!({
        "url": delivery.url,
        "status": delivery.status.as_str(),
        "nextRound": pending.then_some(delivery.next_round),
        "nextAttemptAt": pending.then(|| format_timestamp(delivery.next_at)),
        "attempts": attempts,
    }))
}
