//! The webhook body (service-interface 6.2) as the document shows it. The dispatcher in
//! `switchboard-actors` writes it (`webhooks::payload`, sorted keys); the API tests hold a delivered body
//! against this shape.

use serde::Serialize;
use switchboard_storage::{RequestBatchId, RequestId};
use utoipa::ToSchema;

/// Sent once a request reaches a terminal state (6.2). Keys sorted; no timestamps and no results: fetch
/// `GET /v1/requests/{requestId}`. The same `requestId` may arrive more than once (de-duplicate on it).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookPayloadOut {
    /// Only when supplied at creation (otherwise absent, not `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub internal_id: Option<String>,
    /// Only when supplied at creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub internal_tag: Option<String>,
    /// The request's batch.
    #[schema(value_type = String)]
    pub request_batch_id: RequestBatchId,
    /// The request.
    #[schema(value_type = String)]
    pub request_id: RequestId,
    /// The terminal state.
    pub state: TerminalStateOut,
}

/// A terminal state.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TerminalStateOut {
    /// Every field obtained.
    Success,
    /// Some fields obtained.
    Partial,
    /// Nothing usable obtained.
    Failure,
}
