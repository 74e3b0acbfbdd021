use actix_web::{web, HttpRequest, HttpResponse};

use super::{schema_id_param, usable_schema};
use crate::auth::Caller;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::SchemaDetailOut;

/// `GET /v1/schemas/{schemaId}`: the latest version's field inventory.
#[tracing::instrument(name = "get_schema", skip_all, fields(account = %caller.account.id))]
pub async fn get_schema(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let schema_id = schema_id_param(&req)?;
    let version = usable_schema(&state, &caller, &schema_id)?;
    Ok(HttpResponse::Ok().json(SchemaDetailOut::from_version(&version)))
}
