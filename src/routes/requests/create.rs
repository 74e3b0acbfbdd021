//! `POST /v1/requests`: one request, or a batch under `requests`.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono_tz::Tz;
use serde_json::Value;
use switchboard_actors::scheduler::{BookRequests, Booked, BookingError};
use switchboard_storage::{RequestRecord, Scope};

use switchboard_actors::webhooks::{check_target, TargetError};

use crate::auth::Caller;
use crate::errors::{ApiError, Code};
use crate::intake::{prepare_entry, EntryMode, Prepared, SchemaMemo};
use crate::state::AppState;
use crate::wire::{
    BatchCreatedOut, BatchEntryOut, CreateIn, CreateOut, CreateRejectedOut, CreatedOut, ErrorOut,
};

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
        (status = 400, description = "Single: `INVALID_REQUEST` (body not JSON or not an object, `schemaId`/`inputs` missing, empty `requests`, bad `webhookUrl`, scheduling capacity exceeded), `INVALID_INPUTS` (with `details`) or `PAYER_NOT_FOUND`. Batch: every entry failed, `{requests: [...]}` with each entry's envelope.", body = CreateRejectedOut,
            examples(
                ("INVALID_INPUTS" = (value = json!({ "error": "INVALID_INPUTS",
                    "message": "Input validation failed: missing required inputs: memberId",
                    "details": { "missingInputs": ["memberId"], "invalidInputs": {} } }))),
                ("PAYER_NOT_FOUND" = (value = json!({ "error": "PAYER_NOT_FOUND",
                    "message": "Payer 'Acme Health' matched no known payer" }))),
            )),
        (status = 404, description = "Single only: `SCHEMA_NOT_FOUND`; or `ACCOUNT_NOT_FOUND`.", body = ErrorOut),
        (status = 500, description = "`INTERNAL_ERROR` or `PAYER_LOOKUP_FAILURE`. A batch may instead answer `{requests: [...]}`: check for a `requests` key; its successful entries are real requests.", body = CreateRejectedOut),
    ))]
#[tracing::instrument(name = "create_requests", skip_all, fields(account = %caller.account.id, environment = caller.environment.as_str()))]
pub async fn create_requests(
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<Value>,
) -> Result<HttpResponse, ApiError> {
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
        Some(Value::Array(items)) => create_batch(&state, &caller, items).await,
        Some(_) => Err(ApiError::invalid_request(
            "requests must be an array of request objects",
        )),
    }
}

async fn create_single(
    state: &AppState,
    caller: &Caller,
    item: &Value,
) -> Result<HttpResponse, ApiError> {
    let mut schemas = SchemaMemo::new();
    let prepared = prepare_entry(
        state,
        caller,
        &state.directory(),
        &mut schemas,
        item,
        EntryMode::Single,
    )?;
    let record = match check_webhook_target(state, prepared).await? {
        Prepared::Replay(original) => *original,
        Prepared::Draft(draft) => {
            let mut booked = book(state, caller, vec![*draft]).await?;
            booked
                .pop()
                .expect("one outcome per draft")
                .record()
                .clone()
        }
    };
    let created = CreatedOut::new(&record, &caller.account, state.lookup_source_word());
    Ok(HttpResponse::Ok().json(CreateOut::Single(created)))
}

async fn create_batch(
    state: &AppState,
    caller: &Caller,
    items: &[Value],
) -> Result<HttpResponse, ApiError> {
    let directory = state.directory();
    // Each slot is an entry's fate: a draft's index among those booked, an earlier request, or an error.
    // An entry repeating the internalId of an earlier valid entry of this POST is that entry's replay,
    // decided before its own body is looked at, as a replay of an earlier POST is.
    let (mut drafts, mut slots) = (Vec::new(), Vec::with_capacity(items.len()));
    let mut first_use: HashMap<String, usize> = HashMap::new();
    let mut schemas = SchemaMemo::new();
    for item in items {
        let internal_id = item
            .get("internalId")
            .and_then(Value::as_str)
            .filter(|k| !k.trim().is_empty());
        if let Some(&index) = internal_id.and_then(|key| first_use.get(key)) {
            slots.push(Ok(Slot::Booked(index)));
            continue;
        }
        let entry = match prepare_entry(
            state,
            caller,
            &directory,
            &mut schemas,
            item,
            EntryMode::Batch,
        ) {
            Ok(entry) => check_webhook_target(state, entry).await,
            Err(error) => Err(error),
        };
        slots.push(match entry {
            Ok(Prepared::Draft(draft)) => {
                drafts.push(*draft);
                if let Some(key) = internal_id {
                    first_use.insert(key.to_owned(), drafts.len() - 1);
                }
                Ok(Slot::Booked(drafts.len() - 1))
            }
            Ok(Prepared::Replay(original)) => Ok(Slot::Replay(original)),
            Err(error) => Err(error),
        });
    }
    let booked = if drafts.is_empty() {
        Vec::new()
    } else {
        book(state, caller, drafts).await?
    };

    let mut any_success = false;
    let mut any_server_error = false;
    let entries: Vec<BatchEntryOut> = slots
        .into_iter()
        .map(|slot| match slot {
            Ok(slot) => {
                any_success = true;
                let record = match &slot {
                    Slot::Booked(index) => booked[*index].record(),
                    Slot::Replay(original) => original,
                };
                BatchEntryOut::Created(CreatedOut::new(
                    record,
                    &caller.account,
                    state.lookup_source_word(),
                ))
            }
            Err(error) => {
                any_server_error |= error.code().status().is_server_error();
                BatchEntryOut::Rejected(entry_error(&error))
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

/// Refuses a per-request webhook URL that is not http(s) or resolves to a private or reserved address
/// (unless the operator allows such targets), at creation rather than silently at delivery.
async fn check_webhook_target(state: &AppState, prepared: Prepared) -> Result<Prepared, ApiError> {
    if let Prepared::Draft(draft) = &prepared {
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
    }
    Ok(prepared)
}

enum Slot {
    Booked(usize),
    Replay(Box<RequestRecord>),
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

/// Books the drafts through the capacity scheduler, then waits until the writes are on disk.
async fn book(
    state: &AppState,
    caller: &Caller,
    drafts: Vec<switchboard_actors::scheduler::RequestDraft>,
) -> Result<Vec<Booked>, ApiError> {
    let timezone: Tz = caller.account.timezone.parse().map_err(|_| {
        ApiError::internal(anyhow::anyhow!(
            "account {} has an invalid time zone",
            caller.account.id
        ))
    })?;
    let message = BookRequests {
        scope: Scope::new(caller.account.id.clone(), caller.environment),
        capacity: caller.account.daily_call_capacity,
        timezone,
        credential_id: caller.credential_id.clone(),
        drafts,
    };
    let booked = match state
        .scheduler
        .send(message)
        .await
        .map_err(ApiError::internal)?
    {
        Ok(booked) => booked,
        Err(error @ BookingError::Unplaceable { .. }) => {
            return Err(ApiError::invalid_request(error.to_string()))
        }
        Err(BookingError::Storage(error)) => return Err(error.into()),
    };
    state.store.durable().await?;
    Ok(booked)
}
