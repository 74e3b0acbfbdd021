//! `/admin/v1/operators`: people with a role and a token of their own (operator contract section 7). The
//! token is shown once, in the answer that creates it; only its SHA-256 is stored.

use actix_web::{web, HttpResponse};
use rand::RngCore;
use serde::Deserialize;
use serde_json::json;
use switchboard_storage::{OperatorRecord, Role, StorageError};

use super::AdminJson;
use crate::auth::{token_digest, Admin, CONFIGURED_ADMIN};
use crate::configuration::specs::validate_identifier;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// Names an operator may not take: the audit log's own actors. An operator so named would read, in the
/// log, as the configured admin (`admin`), the server (`system`) or an unidentified caller (`unknown`).
const RESERVED_NAMES: [&str; 3] = [CONFIGURED_ADMIN, "system", "unknown"];

/// An operator to create.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewOperatorIn {
    /// A name of letters, digits, `-` and `_`.
    name: String,
    /// `admin`, `support` or `auditor`.
    role: String,
}

/// Create an operator
///
/// 201 `{"name","role","token"}`: the token is shown only in this answer.
#[utoipa::path(post, path = "/admin/v1/operators", operation_id = "createOperator",
    request_body = NewOperatorIn,
    responses(
        (status = 201, description = "Created.", body = crate::wire::OperatorCreatedOut),
        (status = 400, description = "`INVALID_REQUEST`: a bad or reserved name (admin, system, unknown, in any case), or a bad role.", body = crate::wire::ErrorOut),
        (status = 409, description = "`CONFLICT`: the name is taken, in any case.", body = crate::wire::ErrorOut),
    ))]
#[tracing::instrument(name = "admin_create_operator", skip_all)]
pub async fn create_operator(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    body: AdminJson<NewOperatorIn>,
) -> Result<HttpResponse, ApiError> {
    validate_identifier("name", &body.name)?;
    let role = Role::parse(&body.role).ok_or_else(|| {
        ApiError::invalid_request(format!(
            "role: {:?} is not a role; use admin, support or auditor",
            body.role
        ))
    })?;
    if RESERVED_NAMES
        .iter()
        .any(|reserved| body.name.eq_ignore_ascii_case(reserved))
    {
        return Err(ApiError::invalid_request(format!(
            "name: {:?} is reserved, in any case: the audit log names server.admin_token \"{CONFIGURED_ADMIN}\", \
             the server itself \"system\" and callers it cannot identify \"unknown\"",
            body.name
        )));
    }
    let token = new_token();
    let record = OperatorRecord {
        name: body.name.clone(),
        role,
        token_digest: token_digest(&token),
        created_at: state.clock.now(),
    };
    let event = crate::audit::change(&state, &operator, "operator.create", "operator", &body.name);
    match state.store.create_operator(&record, event).await {
        Err(StorageError::OperatorExists(name)) => return Err(taken(&name)),
        other => other?,
    }
    Ok(HttpResponse::Created().json(json!({
        "name": record.name,
        "role": role.as_str(),
        "token": token,
    })))
}

/// List operators
///
/// `{"operators":[{"name","role","createdAt"}]}`; the configured admin first,
/// created when this server started with its token.
#[utoipa::path(get, path = "/admin/v1/operators", operation_id = "listOperators",
    responses((status = 200, description = "Every operator.", body = crate::wire::OperatorListOut)))]
pub async fn list_operators(
    _: Admin,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let at = |instant: chrono::DateTime<chrono::Utc>| {
        instant.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
    };
    let mut operators = Vec::new();
    operators.push(json!({
        "name": CONFIGURED_ADMIN,
        "role": "admin",
        "createdAt": at(state.started_at),
        "configured": true,
    }));
    for record in state.store.operators().await? {
        operators.push(json!({
            "name": record.name,
            "role": record.role.as_str(),
            "createdAt": at(record.created_at),
        }));
    }
    Ok(HttpResponse::Ok().json(json!({ "operators": operators })))
}

/// Delete an operator
///
/// 204; the token is refused from the next call on. The configured admin cannot be deleted (400).
#[utoipa::path(delete, path = "/admin/v1/operators/{name}", operation_id = "deleteOperator",
    params(("name" = String, Path, description = "The operator's name.")),
    responses(
        (status = 204, description = "Deleted."),
        (status = 400, description = "`INVALID_REQUEST`: the configured admin.", body = crate::wire::ErrorOut),
        (status = 404, description = "`NOT_FOUND`.", body = crate::wire::ErrorOut),
    ))]
#[tracing::instrument(name = "admin_delete_operator", skip_all)]
pub async fn delete_operator(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if name.as_str() == CONFIGURED_ADMIN {
        return Err(ApiError::invalid_request(
            "name: the operator admin is server.admin_token in the configuration; change it there",
        ));
    }
    let event = crate::audit::change(&state, &operator, "operator.delete", "operator", &name);
    if state.store.delete_operator(&name, event).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::new(
            Code::NotFound,
            format!("Operator '{name}' does not exist"),
        ))
    }
}

fn taken(name: &str) -> ApiError {
    ApiError::new(
        Code::Conflict,
        format!("name: an operator named {name:?} exists already (names are compared without regard to case)"),
    )
}

/// A new operator token: 32 random bytes, hex, with a prefix that tells it apart from an API token.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("sbop_{}", hex::encode(bytes))
}
