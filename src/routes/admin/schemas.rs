use actix_web::{web, HttpResponse};
use serde_json::json;
use switchboard_storage::{PublishRule, SchemaHeadRecord};

use super::AdminJson;
use crate::auth::{Admin, Reader};
use crate::configuration::specs::SchemaSpec;
use crate::domain::SchemaId;
use crate::errors::ApiError;
use crate::provisioning::{schema_definition, schema_flags};
use crate::state::AppState;
use crate::wire::format_timestamp;

fn head_out(head: &SchemaHeadRecord) -> serde_json::Value {
    json!({
        "schemaId": head.id,
        "version": head.latest_version,
        "retired": head.retired,
        "hidden": head.hidden,
    })
}

/// `GET /admin/v1/schemas/{id}`: head flags and the latest version as stored (retired ones included).
pub async fn get_schema(
    _: Reader,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let head = state
        .store
        .schema_head(&id)?
        .ok_or_else(|| ApiError::schema_not_found(&id))?;
    let latest = state.store.schema_version(&id, head.latest_version)?;
    let mut out = head_out(&head);
    if let Some(latest) = latest {
        out["publishedAt"] = json!(format_timestamp(latest.published_at));
        out["requestType"] = json!(latest.definition.request_type);
        out["fieldCount"] = json!(latest.definition.fields.len());
    }
    Ok(HttpResponse::Ok().json(out))
}

/// `PUT /admin/v1/schemas/{id}`: creates the schema (201) or publishes its next version (200).
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
        if state.store.schema_head(follow_up)?.is_none() {
            return Err(ApiError::invalid_request(format!(
                "follow_up: {follow_up:?} is not a known schema"
            )));
        }
    }
    let existed = state.store.schema_head(id.as_ref())?.is_some();
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
    Ok(builder.json(head_out(&head)))
}

/// `DELETE /admin/v1/schemas/{id}`: retires the schema (404 `SCHEMA_NOT_FOUND` for detail and creation).
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
    Ok(HttpResponse::Ok().json(head_out(&head)))
}
