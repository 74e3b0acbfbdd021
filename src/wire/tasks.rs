//! The work queue's answers (operator contract section 10): a task, the list, and the call sheet.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use switchboard_storage::{FieldRecord, RequestRecord, TaskRecord};
use utoipa::ToSchema;

use super::format_timestamp;

/// A task for a person: a request the calls could not finish.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskOut {
    /// Opaque id.
    pub task_id: String,
    /// The request it finishes.
    pub request_id: String,
    /// The request's account.
    pub account_id: String,
    /// The request's schema.
    pub schema_id: String,
    /// The failure code the request would have ended with, or `PARTIAL`.
    pub reason: String,
    /// The fields still open when the task opened.
    pub missing_fields: Vec<String>,
    /// `open`, `claimed`, `done`, `abandoned` or `expired`.
    #[schema(examples("open", "claimed", "done", "abandoned", "expired"))]
    pub state: &'static str,
    /// When it opened.
    pub opened_at: String,
    /// When it expires unless finished (the account's `task_timeout_hours` after `openedAt`).
    pub expires_at: String,
    /// The operator holding the claim, while it is live.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub claimed_by: Option<String>,
    /// When the claim lapses unless renewed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub claim_expires_at: Option<String>,
}

impl TaskOut {
    /// The task of `record`, as seen at `now`.
    pub fn new(record: &RequestRecord, task: &TaskRecord, now: DateTime<Utc>) -> TaskOut {
        let holder = task.claim_holder(now).map(str::to_owned);
        TaskOut {
            task_id: task.id.clone(),
            request_id: record.id.as_str().to_owned(),
            account_id: record.account_id.clone(),
            schema_id: record.schema_id.clone(),
            reason: task.reason.clone(),
            missing_fields: task.missing_fields.clone(),
            state: task.state_at(now).as_str(),
            opened_at: format_timestamp(task.opened_at),
            expires_at: format_timestamp(task.expires_at),
            claim_expires_at: holder
                .as_ref()
                .and(task.claim_expires_at)
                .map(format_timestamp),
            claimed_by: holder,
        }
    }
}

/// `GET /admin/v1/tasks`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskListOut {
    /// Oldest first.
    pub tasks: Vec<TaskOut>,
    /// Pass as `pageToken` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next_page_token: Option<String>,
}

/// `GET /admin/v1/tasks/{taskId}`: the task and everything a person needs to place the call.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskSheetOut {
    /// The task.
    #[serde(flatten)]
    pub task: TaskOut,
    /// The payer to call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub payer_name: Option<String>,
    /// The number to dial (ten digits).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub phone_number: Option<String>,
    /// The request's inputs, to read out.
    pub inputs: BTreeMap<String, String>,
    /// The open fields to ask.
    pub questions: Vec<QuestionOut>,
    /// The automated calls so far, oldest first.
    pub calls: Vec<SheetCallOut>,
}

/// One open field of the call sheet.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionOut {
    /// The key of the answer in `answers`.
    pub name: String,
    /// Display label.
    pub label: String,
    /// The question.
    pub description: String,
    /// `alphanumeric`, `boolean`, `multiple`, `dollar` or `date`.
    #[serde(rename = "type")]
    pub field_type: &'static str,
    /// The answers a `multiple` field takes (`CANNOT ANSWER - <reason>` is always an answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub allowed_values: Option<Vec<String>>,
    /// `SUCCESS` needs it.
    pub required: bool,
    /// Asked only when another field has this answer: `{"field", "equals"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, value_type = Object)]
    pub when: Option<serde_json::Value>,
}

impl From<&FieldRecord> for QuestionOut {
    fn from(field: &FieldRecord) -> QuestionOut {
        QuestionOut {
            name: field.name.clone(),
            label: field.label.clone(),
            description: field.description.clone(),
            field_type: field.field_type.as_str(),
            allowed_values: field.allowed_values.clone(),
            required: field.required,
            when: field
                .when
                .as_ref()
                .map(|w| serde_json::json!({"field": w.field, "equals": w.equals})),
        }
    }
}

/// An automated call of the request, as the sheet shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SheetCallOut {
    /// Its place among the request's calls, from 1.
    pub call: u32,
    /// The number dialed.
    pub to: String,
    /// When it was placed.
    pub placed_at: String,
    /// How it ended (`completed`, `voicemail`, `hold_timeout`, `referred`, `failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub disposition: Option<String>,
    /// The call's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub summary: Option<String>,
    /// The conversation, when a representative was reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub transcript: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub failure: Option<String>,
}

/// A refused task call: `TASK_CLAIMED`, `TASK_CLOSED` (409) or `INVALID_ANSWERS` (400, with `details`
/// naming each refused field and why).
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskErrorOut {
    /// The code.
    #[schema(examples("TASK_CLAIMED", "TASK_CLOSED", "INVALID_ANSWERS"))]
    pub error: &'static str,
    /// Human-readable reason.
    pub message: String,
    /// `INVALID_ANSWERS`: field name to why its answer was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub details: Option<BTreeMap<String, String>>,
}
