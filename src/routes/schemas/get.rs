use actix_web::{web, HttpRequest, HttpResponse};

use super::{schema_id_param, usable_schema};
use crate::auth::Caller;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{ErrorOut, SchemaDetailOut};

/// Field inventory of a schema
///
/// Every field the schema's latest version can put in `results`.
#[utoipa::path(get, path = "/v1/schemas/{schemaId}", operation_id = "getSchema",
    params(("schemaId" = String, Path, max_length = 1500, pattern = r"^([^_./\s][^/]*|\s[^/]*[^/\s][^/]*)$", example = "claim-status-basic", description = "Non-blank, at most 1500 characters, no `/`, not starting with `_` or `.`; otherwise 400 `INVALID_REQUEST`.")),
    responses(
        (status = 200, description = "The schema's latest version.", body = SchemaDetailOut),
        (status = 400, description = "`INVALID_REQUEST`: the `schemaId` path parameter breaks the rules (blank, over 1500 characters, contains `/`, starts with `_` or `.`).", body = ErrorOut),
        (status = 404, description = "`SCHEMA_NOT_FOUND` (absent for the account, or retired) or `ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "get_schema", skip_all, fields(account = %caller.account.id))]
pub async fn get_schema(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let schema_id = schema_id_param(&req)?;
    let version = usable_schema(&state, &caller, &schema_id).await?;
    Ok(HttpResponse::Ok().json(SchemaDetailOut::from_version(&version)))
}
