//! `/admin/v1/payers`: the payer directory.

use actix_web::{web, HttpResponse};

use super::AdminJson;
use crate::auth::{Admin, Reader};
use crate::configuration::specs::PayerSpec;
use crate::errors::ApiError;
use crate::provisioning::payer_record;
use crate::state::AppState;
use crate::wire::{ErrorOut, PayerListOut, PayerOut};

/// List payers
///
/// The whole directory.
#[utoipa::path(get, path = "/admin/v1/payers", operation_id = "listPayers",
    responses((status = 200, description = "The directory.", body = PayerListOut)))]
pub async fn list_payers(_: Reader, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let payers = state.store.payers().await?;
    Ok(HttpResponse::Ok().json(PayerListOut {
        payers: payers.iter().map(PayerOut::from).collect(),
    }))
}

/// Create or replace a payer
///
/// The body has the fields of a `[[payers]]` table; the name comes from the path (a body `name` must
/// match it).
#[utoipa::path(put, path = "/admin/v1/payers/{name}", operation_id = "putPayer",
    params(("name" = String, Path, description = "The payer's directory name.")),
    request_body = PayerSpec,
    responses(
        (status = 200, description = "Stored.", body = PayerOut),
        (status = 400, description = "`INVALID_REQUEST` naming the field; nothing changed.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_put_payer", skip_all)]
pub async fn put_payer(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    name: web::Path<String>,
    spec: AdminJson<PayerSpec>,
) -> Result<HttpResponse, ApiError> {
    if name.trim().is_empty() {
        return Err(ApiError::invalid_request("name: must not be blank"));
    }
    if spec
        .name
        .as_deref()
        .is_some_and(|body_name| body_name != name.as_str())
    {
        return Err(ApiError::invalid_request(
            "name: the body's name does not match the path",
        ));
    }
    spec.validate()?;
    let record = payer_record(&name, &spec);
    let event = crate::audit::change(&state, &operator, "payer.change", "payer", &name);
    state.store.put_payer(&record, &[event]).await?;
    state.reload_directory().await?;
    Ok(HttpResponse::Ok().json(PayerOut::from(&record)))
}
