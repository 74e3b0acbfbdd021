//! `/admin/v1/schemas/{id}`: publish, read and retire schemas.

use actix_web::{web, HttpResponse};
use switchboard_storage::PublishRule;

use super::AdminJson;
use crate::auth::{Admin, Reader};
use crate::configuration::specs::SchemaSpec;
use crate::domain::SchemaId;
use crate::errors::ApiError;
use crate::provisioning::{schema_definition, schema_flags};
use crate::state::AppState;
use crate::wire::{format_timestamp, ErrorOut, SchemaHeadOut};

/// Read a schema
///
/// Its head flags and its latest version as stored, retired schemas included.
#[utoipa::path(get, path = "/admin/v1/schemas/{id}", operation_id = "getSchema",
    params(("id" = String, Path, description = "The schema's id.")),
    responses(
        (status = 200, description = "The schema.", body = SchemaHeadOut),
        (status = 404, description = "`SCHEMA_NOT_FOUND`.", body = ErrorOut),
    ))]
pub async fn get_schema(
    _: Reader,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let head = state
        .store
        .schema_head(&id)
        .await?
        .ok_or_else(|| ApiError::schema_not_found(&id))?;
    let latest = state.store.schema_version(&id, head.latest_version).await?;
    let mut out = SchemaHeadOut::from(&head);
    if let Some(latest) = latest {
        out.published_at = Some(format_timestamp(latest.published_at));
        out.field_count = Some(latest.definition.fields.len());
        out.request_type = Some(latest.definition.request_type.clone());
    }
    Ok(HttpResponse::Ok().json(out))
}

/// Publish a schema
///
/// Creates the schema or publishes its next version. The body has the fields of a `[[schemas]]` table; a
/// `follow_up` must name a schema that exists.
#[utoipa::path(put, path = "/admin/v1/schemas/{id}", operation_id = "putSchema",
    params(("id" = String, Path, description = "The schema's id.")),
    request_body = SchemaSpec,
    responses(
        (status = 200, description = "A new version published.", body = SchemaHeadOut),
        (status = 201, description = "Created.", body = SchemaHeadOut),
        (status = 400, description = "`INVALID_REQUEST` naming the field; nothing changed.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_put_schema", skip_all, fields(schema = tracing::field::Empty))]
pub async fn put_schema(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
    spec: AdminJson<SchemaSpec>,
) -> Result<HttpResponse, ApiError> {
    let id = SchemaId::try_from(id.into_inner())
        .map_err(|e| ApiError::invalid_request(format!("id: {e}")))?;
    tracing::Span::current().record("schema", id.as_ref());
    if spec
        .id
        .as_deref()
        .is_some_and(|body_id| body_id != id.as_ref())
    {
        return Err(ApiError::invalid_request(
            "id: the body's id does not match the path",
        ));
    }
    let mut spec = spec.into_inner();
    spec.id = Some(id.to_string());
    spec.validate()?;
    if let Some(follow_up) = &spec.follow_up {
        if state.store.schema_head(follow_up).await?.is_none() {
            return Err(ApiError::invalid_request(format!(
                "follow_up: {follow_up:?} is not a known schema"
            )));
        }
    }
    let existed = state.store.schema_head(id.as_ref()).await?.is_some();
    let head = state
        .store
        .publish_schema(
            id.as_ref(),
            &schema_definition(&spec),
            schema_flags(&spec),
            PublishRule::Always {
                first_version: spec.version.unwrap_or(1),
            },
            state.clock.now(),
            &[crate::audit::change(
                &state,
                &operator,
                "schema.change",
                "schema",
                id.as_ref(),
            )],
        )
        .await?;
    let mut builder = if existed {
        HttpResponse::Ok()
    } else {
        HttpResponse::Created()
    };
    Ok(builder.json(SchemaHeadOut::from(&head)))
}

/// Retire a schema
///
/// The schema then answers 404 `SCHEMA_NOT_FOUND` for detail and creation; requests already made keep it.
#[utoipa::path(delete, path = "/admin/v1/schemas/{id}", operation_id = "retireSchema",
    params(("id" = String, Path, description = "The schema's id.")),
    responses(
        (status = 200, description = "Retired.", body = SchemaHeadOut),
        (status = 404, description = "`SCHEMA_NOT_FOUND`.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_retire_schema", skip_all, fields(schema = tracing::field::Empty))]
pub async fn retire_schema(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let event = crate::audit::change(&state, &operator, "schema.change", "schema", &id);
    let head = state
        .store
        .retire_schema(&id, &[event])
        .await?
        .ok_or_else(|| ApiError::schema_not_found(&id))?;
    tracing::Span::current().record("schema", id.as_str());
    Ok(HttpResponse::Ok().json(SchemaHeadOut::from(&head)))
}
