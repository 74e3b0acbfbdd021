//! The work queue's reads: `GET /admin/v1/tasks` (oldest first) and `GET /admin/v1/tasks/{taskId}`, the
//! task with its call sheet. A sheet holds the request's inputs and transcripts: reading it is audited
//! (`task.read`) like a request read.

use std::sync::Arc;

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use switchboard_storage::{task_of, RequestRecord, TaskRecord, TaskState};

use crate::auth::TaskReader;
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{ErrorOut, QuestionOut, SheetCallOut, TaskListOut, TaskOut, TaskSheetOut};

const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 500;
/// Index entries read per round while a filtered page fills.
const SCAN: usize = 256;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskQuery {
    state: Option<String>,
    account_id: Option<String>,
    page_size: Option<usize>,
    page_token: Option<String>,
}

/// List tasks
///
/// Tasks oldest first, optionally only those in one `state` or of one account.
#[utoipa::path(get, path = "/admin/v1/tasks", operation_id = "listTasks",
    params(
        ("state" = Option<String>, Query, description = "`open`, `claimed`, `done`, `abandoned` or `expired`."),
        ("accountId" = Option<String>, Query, description = "Only this account's tasks."),
        ("pageSize" = Option<usize>, Query, description = "1 to 500; 50 by default."),
        ("pageToken" = Option<String>, Query, description = "`nextPageToken` of the page before."),
    ),
    responses(
        (status = 200, description = "A page of tasks.", body = TaskListOut),
        (status = 400, description = "`INVALID_REQUEST`: an unknown state or a page size out of range.", body = ErrorOut),
    ))]
pub async fn list_tasks(
    TaskReader(_operator): TaskReader,
    state: web::Data<AppState>,
    query: web::Query<TaskQuery>,
) -> Result<HttpResponse, ApiError> {
    let wanted = match query.state.as_deref() {
        None => None,
        Some(name) => Some(TaskState::parse(name).ok_or_else(|| {
            ApiError::invalid_request(format!(
                "state must be open, claimed, done, abandoned or expired, not '{name}'"
            ))
        })?),
    };
    let page_size = query.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(ApiError::invalid_request(format!(
            "pageSize must be between 1 and {MAX_PAGE_SIZE}"
        )));
    }
    let now = state.clock.now();
    let mut after = query.page_token.clone().filter(|t| !t.is_empty());
    let mut tasks = Vec::new();
    let mut more = false;
    'scan: loop {
        let entries = state.store.task_entries(after.as_deref(), SCAN).await?;
        let exhausted = entries.len() < SCAN;
        for (task_id, request_id) in entries {
            after = Some(task_id.clone());
            let Some(record) = state.store.fetch_request(&request_id).await? else {
                continue; // purged
            };
            let Some(task) = task_of(&record).filter(|t| t.id == task_id) else {
                continue;
            };
            let fits = wanted.is_none_or(|s| task.state_at(now) == s)
                && query
                    .account_id
                    .as_ref()
                    .is_none_or(|a| a == &record.account_id);
            if !fits {
                continue;
            }
            if tasks.len() == page_size {
                more = true;
                break 'scan;
            }
            tasks.push(TaskOut::new(&record, task, now));
        }
        if exhausted {
            break;
        }
    }
    let next_page_token = more
        .then(|| tasks.last().map(|t| t.task_id.clone()))
        .flatten();
    Ok(HttpResponse::Ok().json(TaskListOut {
        tasks,
        next_page_token,
    }))
}

/// Read a task's call sheet
///
/// The task and what a person needs to place the call: the payer, the number, the inputs to read out,
/// the open questions and what the automated calls heard. Audited as `task.read`.
#[utoipa::path(get, path = "/admin/v1/tasks/{taskId}", operation_id = "getTask",
    params(("taskId" = String, Path, description = "The task.")),
    responses(
        (status = 200, description = "The task and its call sheet.", body = TaskSheetOut),
        (status = 404, description = "`NOT_FOUND`: no such task.", body = ErrorOut),
    ))]
pub async fn get_task(
    TaskReader(operator): TaskReader,
    state: web::Data<AppState>,
    task_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (record, task) = find_task(&state, &task_id).await?;
    let read = crate::audit::change(&state, &operator, "task.read", "task", &task.id);
    state.store.audit_read(read);
    let sheet = sheet(&state, &record, &task).await?;
    Ok(HttpResponse::Ok().json(sheet))
}

/// The request holding task `task_id` and the task, or 404.
pub(super) async fn find_task(
    state: &AppState,
    task_id: &str,
) -> Result<(Arc<RequestRecord>, TaskRecord), ApiError> {
    let not_found = || ApiError::new(Code::NotFound, format!("Task '{task_id}' was not found"));
    let request_id = state
        .store
        .task_request(task_id)
        .await?
        .ok_or_else(not_found)?;
    let record = state
        .store
        .fetch_request(&request_id)
        .await?
        .ok_or_else(not_found)?;
    let task = task_of(&record)
        .filter(|t| t.id == task_id)
        .cloned()
        .ok_or_else(not_found)?;
    Ok((record, task))
}

/// The schema version the task's step runs: its fields are the questions, and the answers are held to it.
pub(super) async fn step_schema(
    state: &AppState,
    record: &RequestRecord,
    task: &TaskRecord,
) -> Result<Arc<switchboard_storage::SchemaVersionRecord>, ApiError> {
    let step = record
        .run
        .as_ref()
        .and_then(|run| run.steps.iter().find(|s| s.key == task.step_key))
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("a task's step is missing")))?;
    state
        .store
        .schema_version(&step.schema_id, step.schema_version)
        .await?
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("a task's schema version is missing")))
}

async fn sheet(
    state: &AppState,
    record: &RequestRecord,
    task: &TaskRecord,
) -> Result<TaskSheetOut, ApiError> {
    let schema = step_schema(state, record, task).await?;
    let run = record.run.as_ref();
    let calls = run.map(|run| run.calls.as_slice()).unwrap_or_default();
    let answered: Vec<&String> = calls
        .iter()
        .filter(|c| c.step_key == task.step_key)
        .filter_map(|c| c.outcome.as_ref())
        .flat_map(|o| o.captured.keys())
        .collect();
    let questions = schema
        .definition
        .fields
        .iter()
        .filter(|f| !answered.contains(&&f.name))
        .map(QuestionOut::from)
        .collect();
    let calls = calls
        .iter()
        .map(|call| {
            let outcome = call.outcome.as_ref();
            SheetCallOut {
                call: call.seq,
                to: call.to.clone(),
                placed_at: crate::wire::format_timestamp(call.placed_at),
                disposition: outcome.map(|o| {
                    serde_json::to_value(o.disposition)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                }),
                summary: outcome.and_then(|o| o.summary.clone()),
                transcript: outcome.and_then(|o| o.transcript.clone()),
                failure: outcome
                    .and_then(|o| o.failure.as_ref())
                    .map(|f| format!("{}: {}", f.code.as_str(), f.message)),
            }
        })
        .collect();
    Ok(TaskSheetOut {
        task: TaskOut::new(record, task, state.clock.now()),
        payer_name: record.inputs.get("payerName").cloned(),
        phone_number: record
            .dial
            .as_ref()
            .map(|d| d.number.clone())
            .or_else(|| record.inputs.get("phoneNumber").cloned()),
        inputs: record.inputs.clone(),
        questions,
        calls,
    })
}
