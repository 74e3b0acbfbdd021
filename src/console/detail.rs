//! `GET /console/api/requests/{requestId}`: one request as the single read shows it, with what the detail
//! view needs around it: the field inventory of every schema behind its steps (labels for the results
//! table), the webhook delivery log and the electronic transaction's trace.

use std::collections::{BTreeMap, BTreeSet};

use actix_web::{web, HttpResponse};
use serde::Serialize;
use switchboard_storage::{RequestId, RequestRecord};

use super::ConsoleScope;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{
    dollars, ReadKind, RequestOut, SchemaDetailOut, WebhookAttemptOut, WebhookDeliveryOut,
};
use switchboard_actors::cost::Prices;

/// The detail view's data.
#[derive(Serialize)]
struct RequestDetailOut<'a> {
    request: RequestOut,
    /// Keyed by schema id.
    schemas: BTreeMap<String, VersionedSchemaOut>,
    /// `null` when no webhook was enqueued (not terminal yet, or no webhook URL).
    webhook: Option<WebhookDeliveryOut>,
    /// `null` when no electronic transaction was made.
    electronic: Option<super::electronic::ElectronicTraceOut<'a>>,
    /// What each ended call cost, by its `call` number: every call, where the single read prices only
    /// the contributing calls of a `SUCCESS` or `PARTIAL` request.
    #[serde(rename = "callCosts")]
    call_costs: BTreeMap<u32, String>,
}

/// A schema's detail at the version shown.
#[derive(Serialize)]
struct VersionedSchemaOut {
    #[serde(flatten)]
    detail: SchemaDetailOut,
    version: u32,
}

/// The request (404 `REQUEST_NOT_FOUND` outside the scope), its schemas and its webhook delivery.
#[tracing::instrument(name = "console_get_request", skip_all, fields(request_id = tracing::field::Empty))]
pub async fn get_request(
    state: web::Data<AppState>,
    scope: ConsoleScope,
    request_id: web::Path<RequestId>,
) -> Result<HttpResponse, ApiError> {
    let record = scope.request(&state.store, &request_id).await?;
    // Recorded once the path names a request in scope: until then it is the client's text.
    tracing::Span::current().record("request_id", record.id.as_str());
    let read = state.read_context(&scope.account, ReadKind::Single);
    let request = RequestOut::new(&record, &read);
    let schemas = schemas_behind(&state, &record, &request).await?;
    let webhook = webhook(&state, &record.id).await?;
    Ok(HttpResponse::Ok().json(RequestDetailOut {
        request,
        schemas,
        webhook,
        electronic: super::electronic::electronic_trace(&record),
        call_costs: call_costs(&record, state.settings.prices),
    }))
}

/// The detail of the request's schema (at the version the request is pinned to) and of every other
/// schema named in `callSteps` (at its latest version), keyed by id. A schema that no longer exists is
/// left out: the view then shows bare field names.
async fn schemas_behind(
    state: &AppState,
    record: &RequestRecord,
    request: &RequestOut,
) -> Result<BTreeMap<String, VersionedSchemaOut>, ApiError> {
    let mut ids = BTreeSet::from([record.schema_id.clone()]);
    if let Some(steps) = &request.call_steps {
        ids.extend(steps.iter().map(|step| step.schema_id.clone()));
    }
    let mut schemas = BTreeMap::new();
    for id in ids {
        let Some(head) = state.store.schema_head(&id).await? else {
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
        let version = match state.store.schema_version(&id, pinned).await? {
            Some(version) => Some(version),
            None => state.store.schema_version(&id, head.latest_version).await?,
        };
        if let Some(version) = version {
            let detail = VersionedSchemaOut {
                detail: SchemaDetailOut::from_version(&version),
                version: version.version,
            };
            schemas.insert(id, detail);
        }
    }
    Ok(schemas)
}

/// Every ended call's price, as the single read writes it.
fn call_costs(record: &RequestRecord, prices: Prices) -> BTreeMap<u32, String> {
    let prices = prices.for_environment(record.environment);
    let calls = record.run.iter().flat_map(|run| &run.calls);
    calls
        .filter_map(|call| {
            let outcome = call.outcome.as_ref()?;
            Some((call.seq, dollars(prices.call_cents(outcome))))
        })
        .collect()
}

/// The webhook delivery and every attempt, if one was enqueued.
async fn webhook(
    state: &AppState,
    request_id: &RequestId,
) -> Result<Option<WebhookDeliveryOut>, ApiError> {
    let Some(delivery) = state.store.delivery(request_id).await? else {
        return Ok(None);
    };
    let attempts = state
        .store
        .attempts(request_id)
        .await?
        .iter()
        .map(WebhookAttemptOut::from)
        .collect();
    Ok(Some(WebhookDeliveryOut::new(&delivery, attempts)))
}
