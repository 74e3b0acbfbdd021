use actix_web::{web, HttpResponse};

use crate::auth::Caller;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{SchemaListOut, SchemaRowOut};

/// List the account's schemas
///
/// The account's schemas, without retired or hidden ones, sorted by id.
#[utoipa::path(get, path = "/v1/schemas", operation_id = "listSchemas",
    responses((status = 200, description = "The account's usable schemas.", body = SchemaListOut)))]
#[tracing::instrument(name = "list_schemas", skip_all, fields(account = %caller.account.id))]
pub async fn list_schemas(
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let mut rows = Vec::with_capacity(caller.account.schemas.len());
    for id in &caller.account.schemas {
        let Some(head) = state.store.schema_head(id).await? else {
            continue;
        };
        if head.retired || head.hidden {
            continue;
        }
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
        rows.push(SchemaRowOut::from_version(&version));
    }
    rows.sort_by(|a, b| a.schema_id.cmp(&b.schema_id));
    rows.dedup_by(|a, b| a.schema_id == b.schema_id);
    Ok(HttpResponse::Ok().json(SchemaListOut { schemas: rows }))
}
