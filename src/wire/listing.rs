//! `GET /v1/requests` (service-interface 4.8).

use serde::Serialize;
use utoipa::ToSchema;

use super::request::RequestOut;

/// A page of requests.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestListOut {
    /// Newest `dateCreated` first; may be empty. Entries omit the single-read-only fields.
    pub requests: Vec<RequestOut>,
    /// Present when another page exists; pass it as `pageToken` with the same query.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next_page_token: Option<String>,
}
