//! What a person does to a task: claim, release, complete, give up. Each is one write of the request
//! with its task (see `switchboard_storage::Store::change_task`), durable before the answer, and audited
//! in the same transaction; a refused change writes nothing. Completing or giving up then tells the
//! orchestrator, whose request actor ends the request through the terminal write every request takes.

use std::collections::BTreeMap;

use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use switchboard_actors::dialer::sandbox::failure_for_code;
use switchboard_actors::orchestration::TaskChanged;
use switchboard_actors::work_queue::{self, check_answers, PersonCall, TaskRefusal};
use switchboard_storage::{FailureCode, RequestRecord, Role, TaskRecord};

use super::tasks::{find_task, step_schema};
use super::AdminJson;
use crate::auth::{Operator, TaskWorker};
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{ErrorOut, TaskErrorOut, TaskOut};

/// Body of `complete`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteIn {
    /// Field name to the answer.
    #[schema(value_type = Object)]
    pub answers: BTreeMap<String, serde_json::Value>,
    /// The call the person placed.
    pub call: PersonCallIn,
}

/// The person's call.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersonCallIn {
    /// The number dialed.
    pub phone_number: String,
    /// When it was placed (RFC 3339).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub started_at: Option<DateTime<Utc>>,
    /// When it ended (RFC 3339).
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ended_at: Option<DateTime<Utc>>,
    /// Who answered at the payer.
    pub representative_name: Option<String>,
    /// The payer's reference number.
    pub reference_number: Option<String>,
    /// Notes: the call's summary.
    pub notes: Option<String>,
}

/// Body of `give-up`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GiveUpIn {
    /// A failure code of the service interface (7.3), such as `PAYER_REFUSAL`.
    pub error_code: String,
}

/// Claim a task
///
/// The task is the caller's for 30 minutes; claiming again renews the claim.
#[utoipa::path(post, path = "/admin/v1/tasks/{taskId}/claim", operation_id = "claimTask",
    params(("taskId" = String, Path, description = "The task.")),
    responses(
        (status = 200, description = "Claimed.", body = TaskOut),
        (status = 404, description = "`NOT_FOUND`: no such task.", body = ErrorOut),
        (status = 409, description = "`TASK_CLAIMED` (another operator holds it) or `TASK_CLOSED`.", body = TaskErrorOut),
    ))]
pub async fn claim_task(
    TaskWorker(operator): TaskWorker,
    state: web::Data<AppState>,
    task_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let now = state.clock.now();
    let name = operator.name.clone();
    let (_, task) = find_task(&state, &task_id).await?;
    apply(&state, &operator, &task, "task.claim", move |r| {
        work_queue::claim(r, &name, now)
    })
    .await
}

/// Release a task
///
/// The claim is dropped and the task is open to anyone again. An operator releases their own claim; an
/// `admin` anyone's.
#[utoipa::path(post, path = "/admin/v1/tasks/{taskId}/release", operation_id = "releaseTask",
    params(("taskId" = String, Path, description = "The task.")),
    responses(
        (status = 200, description = "Open again.", body = TaskOut),
        (status = 404, description = "`NOT_FOUND`: no such task.", body = ErrorOut),
        (status = 409, description = "`TASK_CLAIMED` (another operator holds it) or `TASK_CLOSED`.", body = TaskErrorOut),
    ))]
pub async fn release_task(
    TaskWorker(operator): TaskWorker,
    state: web::Data<AppState>,
    task_id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let now = state.clock.now();
    let name = operator.name.clone();
    let any_claim = operator.role == Role::Admin;
    let (_, task) = find_task(&state, &task_id).await?;
    apply(&state, &operator, &task, "task.release", move |r| {
        work_queue::release(r, &name, any_claim, now)
    })
    .await
}

/// Complete a task
///
/// The answers the person obtained, checked against the schema as a call's are; the request then ends
/// as if a call had captured them (`SUCCESS` when every required field is answered, else `PARTIAL`),
/// with the person's call among its `contributingCalls`, and its webhook goes out as always. The caller
/// must hold the claim.
#[utoipa::path(post, path = "/admin/v1/tasks/{taskId}/complete", operation_id = "completeTask",
    params(("taskId" = String, Path, description = "The task.")),
    request_body = CompleteIn,
    responses(
        (status = 200, description = "Done.", body = TaskOut),
        (status = 400, description = "`INVALID_ANSWERS` (nothing changed) or `INVALID_REQUEST`.", body = TaskErrorOut),
        (status = 404, description = "`NOT_FOUND`: no such task.", body = ErrorOut),
        (status = 409, description = "`TASK_CLAIMED` (the caller holds no claim) or `TASK_CLOSED`.", body = TaskErrorOut),
    ))]
pub async fn complete_task(
    TaskWorker(operator): TaskWorker,
    state: web::Data<AppState>,
    task_id: web::Path<String>,
    body: AdminJson<CompleteIn>,
) -> Result<HttpResponse, ApiError> {
    let body = body.into_inner();
    let now = state.clock.now();
    let (record, task) = find_task(&state, &task_id).await?;
    // A closed task or another's claim says so before the answers are looked at.
    if let Some(refusal) = precheck(&task, &operator.name, now) {
        return Ok(refused(refusal));
    }
    let schema = step_schema(&state, &record, &task).await?;
    let values = match check_answers(&schema, &body.answers) {
        Ok(values) => values,
        Err(details) => {
            return Ok(HttpResponse::BadRequest().json(TaskErrorOut {
                error: "INVALID_ANSWERS",
                message: "Some answers do not fit their fields; nothing was changed".to_owned(),
                details: Some(details),
            }))
        }
    };
    let call = PersonCall {
        phone_number: body.call.phone_number,
        started_at: body.call.started_at,
        ended_at: body.call.ended_at,
        representative_name: body.call.representative_name,
        reference_number: body.call.reference_number,
        notes: body.call.notes,
    };
    let name = operator.name.clone();
    apply(&state, &operator, &task, "task.complete", move |r| {
        work_queue::complete(r, &name, &schema, values.clone(), &call, now)
    })
    .await
}

/// Give a task up
///
/// The request ends `FAILURE` with the code the person chose.
#[utoipa::path(post, path = "/admin/v1/tasks/{taskId}/give-up", operation_id = "giveUpTask",
    params(("taskId" = String, Path, description = "The task.")),
    request_body = GiveUpIn,
    responses(
        (status = 200, description = "Abandoned.", body = TaskOut),
        (status = 400, description = "`INVALID_REQUEST`: not a failure code of the service interface.", body = ErrorOut),
        (status = 404, description = "`NOT_FOUND`: no such task.", body = ErrorOut),
        (status = 409, description = "`TASK_CLAIMED` (another operator holds it) or `TASK_CLOSED`.", body = TaskErrorOut),
    ))]
pub async fn give_up_task(
    TaskWorker(operator): TaskWorker,
    state: web::Data<AppState>,
    task_id: web::Path<String>,
    body: AdminJson<GiveUpIn>,
) -> Result<HttpResponse, ApiError> {
    let code = FailureCode::from(body.error_code.as_str());
    if matches!(code, FailureCode::Unknown(_)) {
        return Err(ApiError::invalid_request(format!(
            "errorCode '{}' is not a failure code of the service interface",
            body.error_code
        )));
    }
    let failure = failure_for_code(&code);
    let now = state.clock.now();
    let name = operator.name.clone();
    let (_, task) = find_task(&state, &task_id).await?;
    apply(&state, &operator, &task, "task.give_up", move |r| {
        work_queue::give_up(r, &name, failure.clone(), now)
    })
    .await
}

/// The refusal a change would meet, as read before it (the change itself checks again).
fn precheck(task: &TaskRecord, operator: &str, now: DateTime<Utc>) -> Option<TaskRefusal> {
    if task.state.is_closed() {
        return Some(TaskRefusal::Closed);
    }
    (task.claim_holder(now) != Some(operator)).then_some(TaskRefusal::Claimed)
}

/// Applies `change` to the task's request in one audited write; a closed task wakes the request.
async fn apply(
    state: &AppState,
    operator: &Operator,
    task: &TaskRecord,
    action: &'static str,
    mut change: impl FnMut(&mut RequestRecord) -> Result<TaskRecord, TaskRefusal> + Send + 'static,
) -> Result<HttpResponse, ApiError> {
    let event = crate::audit::change(state, operator, action, "task", &task.id);
    let task_id = task.id.clone();
    let request_id = state
        .store
        .task_request(&task.id)
        .await?
        .ok_or_else(|| ApiError::new(Code::NotFound, "Task was not found"))?;
    let changed = state
        .store
        .change_task(&request_id, Some(event), move |r| {
            // The task the index named, not one a later write put there.
            match r.run.as_ref().and_then(|run| run.task.as_ref()) {
                Some(task) if task.id == task_id => change(r),
                _ => Err(TaskRefusal::NoTask),
            }
        })
        .await?;
    match changed {
        Ok((record, task)) => {
            if task.state.is_closed() {
                state.orchestrator.do_send(TaskChanged(record.id.clone()));
            }
            let now = state.clock.now();
            Ok(HttpResponse::Ok().json(TaskOut::new(&record, &task, now)))
        }
        Err(refusal) => Ok(refused(refusal)),
    }
}

fn refused(refusal: TaskRefusal) -> HttpResponse {
    let (error, message) = match refusal {
        TaskRefusal::Claimed => (
            "TASK_CLAIMED",
            "Another operator holds this task, or the caller holds no claim on it",
        ),
        TaskRefusal::Closed => ("TASK_CLOSED", "The task is done, abandoned or expired"),
        TaskRefusal::NoTask => {
            return actix_web::ResponseError::error_response(&ApiError::new(
                Code::NotFound,
                "Task was not found",
            ));
        }
    };
    HttpResponse::Conflict().json(TaskErrorOut {
        error,
        message: message.to_owned(),
        details: None,
    })
}
