//! The schema endpoints (service-interface 4.2-4.4) and the visibility rules they share.

pub mod get;
pub mod list;
pub mod required_inputs;
pub mod required_payer_inputs;

pub(crate) use required_inputs::input_lists;

use std::sync::Arc;

use actix_web::HttpRequest;
use switchboard_storage::SchemaVersionRecord;

use crate::auth::Caller;
use crate::domain::SchemaId;
use crate::errors::ApiError;
use crate::state::AppState;

/// The `schemaId` path parameter, parsed by the spec's rules (400 `INVALID_REQUEST` otherwise).
pub(crate) fn schema_id_param(req: &HttpRequest) -> Result<SchemaId, ApiError> {
    let raw = req.match_info().get("schemaId").unwrap_or_default();
    // actix leaves an encoded `/` (`%2F`) undecoded so it cannot split the path; decode it here so the
    // no-`/` rule sees it.
    let decoded = raw.replace("%2F", "/").replace("%2f", "/");
    SchemaId::try_from(decoded).map_err(|e| ApiError::invalid_request(e.to_string()))
}

/// The latest version of a schema the caller may use: provisioned to its account, existing, not retired.
/// A missing or unreadable version record, or one without fields, is a server fault (500), since an
/// empty inventory must never be answered with a 200.
pub(crate) async fn usable_schema(
    state: &AppState,
    caller: &Caller,
    schema_id: &SchemaId,
) -> Result<Arc<SchemaVersionRecord>, ApiError> {
    let id = schema_id.as_ref();
    if !caller.account.schemas.iter().any(|s| s == id) {
        return Err(ApiError::schema_not_found(id));
    }
    let head = match state.store.schema_head(id).await? {
        Some(head) if !head.retired => head,
        _ => return Err(ApiError::schema_not_found(id)),
    };
    let version = state
        .store
        .schema_version(id, head.latest_version)
        .await?
        .ok_or_else(|| {
            ApiError::internal(anyhow::anyhow!(
                "schema {id} v{} has no version record",
                head.latest_version
            ))
        })?;
    if version.definition.fields.is_empty() {
        return Err(ApiError::internal(anyhow::anyhow!(
            "schema {id} v{} has no fields",
            version.version
        )));
    }
    Ok(version)
}
