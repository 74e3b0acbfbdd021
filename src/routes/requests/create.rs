//! `POST /v1/requests`: one request, or a batch under `requests`.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono_tz::Tz;
use serde_json::Value;
use switchboard_actors::scheduler::{admit, BookingError, Creator, RequestDraft};
use switchboard_storage::{RequestRecord, Scope, StorageError};

use switchboard_actors::webhooks::{check_target, TargetError};

use crate::auth::Caller;
use crate::errors::{ApiError, Code};
use crate::intake::{prepare_entry, EntryMode, Replay, Replays, SchemaMemo};
use crate::state::AppState;
use crate::wire::{
    BatchCreatedOut, BatchEntryOut, CreateIn, CreateOut, CreateRejectedOut, CreatedOut, ErrorOut,
};

/// The most entries one POST's `requests` may hold. The request body's size limit
/// (`errors::MAX_BODY_BYTES`) leaves room for this many entries with generous inputs, and a whole-batch
/// listing (`GET /v1/requests?requestBatchId=...`) is one POST's entries at most.
pub const MAX_BATCH_ENTRIES: usize = 1000;

/// Create one request or a batch
///
/// One request (200 with its ids) or a batch under `requests` (200 / 207 / 400 / 500 with per-entry results
/// in input order). Successful entries are written and flushed before the answer; rejected ones leave no
/// trace. A reused `internalId` returns the original request and creates nothing.
#[utoipa::path(post, path = "/v1/requests", operation_id = "createRequests",
    request_body = CreateIn,
    responses(
        (status = 200, description = "Single: the created (or replayed) request. Batch: every entry created.", body = CreateOut),
        (status = 207, description = "Batch only: at least one entry created and at least one rejected with a client error.", body = BatchCreatedOut),
        (status = 400, description = "Single: `INVALID_REQUEST` (body not JSON or not an object, `schemaId`/`inputs` missing, empty `requests` or more than 1000 entries, more than 100 inputs, an input key over 128 bytes, inputs over 16 KiB together, bad or over-long `webhookUrl`, scheduling capacity exceeded), `INVALID_INPUTS` (with `details`; an input value over 1024 bytes is named there, an `internalId` or `internalTag` over 256 bytes in the message) or `PAYER_NOT_FOUND`. Batch: every entry failed, `{requests: [...]}` with each entry's envelope.", body = CreateRejectedOut,
            examples(
                ("INVALID_INPUTS" = (value = json!({ "error": "INVALID_INPUTS",
                    "message": "Input validation failed: missing required inputs: memberId",
                    "details": { "missingInputs": ["memberId"], "invalidInputs": {} } }))),
                ("PAYER_NOT_FOUND" = (value = json!({ "error": "PAYER_NOT_FOUND",
                    "message": "Payer 'Acme Health' matched no known payer" }))),
            )),
        (status = 404, description = "Single only: `SCHEMA_NOT_FOUND`; or `ACCOUNT_NOT_FOUND`.", body = ErrorOut),
        (status = 413, description = "`PAYLOAD_TOO_LARGE`: the body is over 8 MiB.", body = ErrorOut),
        (status = 500, description = "`INTERNAL_ERROR` or `PAYER_LOOKUP_FAILURE`. A batch may instead answer `{requests: [...]}`: check for a `requests` key; its successful entries are real requests.", body = CreateRejectedOut),
    ))]
#[tracing::instrument(name = "create_requests", skip_all, fields(account = %caller.account.id, environment = caller.environment.as_str()))]
pub async fn create_requests(
    state: web::Data<AppState>,
    caller: Caller,
    request: actix_web::HttpRequest,
    body: web::Json<Value>,
) -> Result<HttpResponse, ApiError> {
    // A `traceparent` makes the requests' traces continue the caller's (read only when traces are on).
    let caller_span = switchboard_actors::telemetry::enabled()
        .then(|| request.headers().get("traceparent"))
        .flatten()
        .and_then(|value| value.to_str().ok())
        .and_then(switchboard_actors::telemetry::CallerSpan::parse);
    let caller = Traced(&caller, caller_span);
    let body = body.into_inner();
    let Some(object) = body.as_object() else {
        return Err(ApiError::invalid_request(
            "Request body must be a JSON object",
        ));
    };
    match object.get("requests") {
        None => create_single(&state, &caller, &body).await,
        Some(Value::Array(items)) if items.is_empty() => {
            Err(ApiError::invalid_request("requests must not be empty"))
        }
        Some(Value::Array(items)) if items.len() > MAX_BATCH_ENTRIES => {
            Err(ApiError::invalid_request(format!(
                "requests has {} entries; at most {MAX_BATCH_ENTRIES} are accepted in one POST",
                items.len()
            )))
        }
        Some(Value::Array(items)) => create_batch(&state, &caller, items).await,
        Some(_) => Err(ApiError::invalid_request(
            "requests must be an array of request objects",
        )),
    }
}

/// The caller of a POST with the span its `traceparent` named.
struct Traced<'a>(
    &'a Caller,
    Option<switchboard_actors::telemetry::CallerSpan>,
);

impl std::ops::Deref for Traced<'_> {
    type Target = Caller;

    fn deref(&self) -> &Caller {
        self.0
    }
}

async fn create_single(
    state: &AppState,
    caller: &Traced<'_>,
    item: &Value,
) -> Result<HttpResponse, ApiError> {
    let mut outcomes =
        admit_entries(state, caller, std::slice::from_ref(item), EntryMode::Single).await?;
    let record = outcomes.pop().expect("one outcome per entry")?;
    let created = CreatedOut::new(&record, &caller.account, state.lookup_source_word());
    Ok(HttpResponse::Ok().json(CreateOut::Single(created)))
}

async fn create_batch(
    state: &AppState,
    caller: &Traced<'_>,
    items: &[Value],
) -> Result<HttpResponse, ApiError> {
    let outcomes = admit_entries(state, caller, items, EntryMode::Batch).await?;
    let mut any_success = false;
    let mut any_server_error = false;
    let entries: Vec<BatchEntryOut> = outcomes
        .iter()
        .map(|outcome| match outcome {
            Ok(record) => {
                any_success = true;
                BatchEntryOut::Created(CreatedOut::new(
                    record,
                    &caller.account,
                    state.lookup_source_word(),
                ))
            }
            Err(error) => {
                any_server_error |= error.code().status().is_server_error();
                BatchEntryOut::Rejected(entry_error(error))
            }
        })
        .collect();
    let status = match (any_success, any_server_error) {
        (_, true) => StatusCode::INTERNAL_SERVER_ERROR,
        (true, false)
            if entries
                .iter()
                .any(|e| matches!(e, BatchEntryOut::Rejected(_))) =>
        {
            StatusCode::MULTI_STATUS
        }
        (true, false) => StatusCode::OK,
        (false, false) => StatusCode::BAD_REQUEST,
    };
    Ok(HttpResponse::build(status).json(BatchCreatedOut { requests: entries }))
}

/// How often a POST decides its replays: the optimistic first decision, and again after each race on an
/// internal id lost to a concurrent POST. Each loss means the key is now stored, so the next decision sees
/// it; more than one is rare.
const ATTEMPTS: usize = 4;

/// Each entry's request, in input order: a new one, or the one its internal id replays; or the entry's
/// error. New requests are stored and flushed before this returns; rejected entries leave no trace.
async fn admit_entries(
    state: &AppState,
    caller: &Traced<'_>,
    items: &[Value],
    mode: EntryMode,
) -> Result<Vec<Result<RequestRecord, ApiError>>, ApiError> {
    let scope = Scope::new(caller.account.id.clone(), caller.environment);
    let creator = creator(caller, scope.clone())?;
    let directory = state.directory();
    let mut attempt = 1;
    loop {
        // The first decision looks keys up only for entries that fail validation; a stored key then
        // declines the insert below, and the next decision looks every key up.
        let optimistic = attempt == 1;
        let mut replays = Replays::new(&state.store, scope.clone(), optimistic);
        let mut schemas = SchemaMemo::new();
        let (mut drafts, mut slots) = (Vec::new(), Vec::with_capacity(items.len()));
        for item in items {
            let key = Replays::key(item);
            let slot = match replays.check(key).await {
                Ok(Some(replay)) => Ok(Slot::Replay(replay)),
                Ok(None) => {
                    let prepared =
                        prepare_entry(state, caller, &directory, &mut schemas, item, mode).await;
                    let draft = match prepared {
                        Ok(draft) => check_webhook_target(state, draft).await,
                        Err(error) => Err(error),
                    };
                    match draft {
                        Ok(draft) => {
                            replays.claim(key, drafts.len());
                            drafts.push(draft);
                            Ok(Slot::New(drafts.len() - 1))
                        }
                        Err(error) => match replays.check_rejected(key).await {
                            Ok(replay) => replay.map(Slot::Replay).ok_or(error),
                            Err(e) => Err(e),
                        },
                    }
                }
                Err(error) => Err(error),
            };
            slots.push(slot);
        }
        let replays_only = drafts.is_empty();
        let keyed = drafts.iter().any(|draft| draft.internal_id.is_some());
        let created = match admit(
            &state.scheduler,
            &state.store,
            &state.metrics,
            &creator,
            drafts,
        )
        .await
        {
            Ok(created) => created,
            Err(BookingError::Storage(StorageError::InternalIdClaimed(_)))
                if attempt < ATTEMPTS =>
            {
                // After the optimistic decision, a stored key is the usual replay, not a race.
                if !optimistic {
                    tracing::info!(
                        attempt,
                        "internalId claimed by a concurrent create; deciding replays again"
                    );
                }
                attempt += 1;
                continue;
            }
            // Entries that replay take no place: booked as new, they may not have fit.
            Err(BookingError::Unplaceable { .. }) if optimistic && keyed => {
                attempt += 1;
                continue;
            }
            Err(error @ BookingError::Unplaceable { .. }) => {
                return Err(ApiError::invalid_request(error.to_string()))
            }
            Err(BookingError::Storage(error)) => return Err(error.into()),
            Err(error @ BookingError::Unavailable(_)) => return Err(ApiError::internal(error)),
        };
        // Requests booked for a day that has begun run now, not at the orchestrator's next sweep.
        let now = state.clock.now();
        if created.iter().any(|record| record.due_at <= now) {
            state.due_work.announce();
        }
        // A replayed request may be a concurrent POST's whose flush is still running. A POST that stored
        // requests of its own has waited for its flush, which covers every group before it.
        let stored_replays = slots
            .iter()
            .any(|slot| matches!(slot, Ok(Slot::Replay(Replay::Stored(_)))));
        if replays_only && stored_replays {
            state.store.replays_durable().await?;
        }
        // Backwards, so that each new request is moved out at its own entry, after the later entries
        // replaying it took their copies.
        let mut created: Vec<Option<RequestRecord>> = created.into_iter().map(Some).collect();
        let mut outcomes: Vec<_> = slots
            .into_iter()
            .rev()
            .map(|slot| {
                slot.map(|slot| match slot {
                    Slot::New(index) => created[index].take().expect("one entry creates it"),
                    Slot::Replay(Replay::Entry(index)) => {
                        created[index].clone().expect("created by an earlier entry")
                    }
                    Slot::Replay(Replay::Stored(record)) => *record,
                })
            })
            .collect();
        outcomes.reverse();
        return Ok(outcomes);
    }
}

/// An entry's fate before booking: new request number `n` of the POST, or a replay.
enum Slot {
    New(usize),
    Replay(Replay),
}

/// Refuses a per-request webhook URL that is not http(s) or resolves to a private or reserved address
/// (unless the operator allows such targets), at creation rather than silently at delivery.
async fn check_webhook_target(
    state: &AppState,
    draft: RequestDraft,
) -> Result<RequestDraft, ApiError> {
    if let Some(url) = &draft.webhook_url {
        match check_target(url, state.settings.webhooks.allow_private_targets).await {
            // A name that does not resolve now may resolve by the time the request finishes; delivery
            // checks again, so only a definite refusal fails the create.
            Ok(_) | Err(TargetError::Unresolvable(_)) => {}
            Err(refused) => {
                return Err(ApiError::invalid_request(format!("webhookUrl: {refused}")))
            }
        }
    }
    Ok(draft)
}

/// A failed entry's envelope. Server-side failures of one entry surface as `INVALID_REQUEST` (4.6) while
/// the aggregate status reports the 500.
fn entry_error(error: &ApiError) -> ErrorOut {
    if error.code().status().is_server_error() {
        if let ApiError::Internal(cause) = error {
            tracing::error!(error.message = %cause, "batch entry failed");
        }
        let message = match error {
            ApiError::Client { message, .. } => message.clone(),
            ApiError::Internal(_) => {
                "An unexpected error occurred for this entry; please retry it.".to_owned()
            }
        };
        return ApiError::new(Code::InvalidRequest, message).body();
    }
    error.body()
}

/// Who creates, for the scheduler.
fn creator(traced: &Traced<'_>, scope: Scope) -> Result<Creator, ApiError> {
    let caller = traced.0;
    let timezone: Tz = caller.account.timezone.parse().map_err(|_| {
        ApiError::internal(anyhow::anyhow!(
            "account {} has an invalid time zone",
            caller.account.id
        ))
    })?;
    Ok(Creator {
        scope,
        capacity: caller.account.daily_call_capacity,
        timezone,
        credential_id: caller.credential_id.clone(),
        ip: caller.ip,
        caller_span: traced.1.clone(),
    })
}
