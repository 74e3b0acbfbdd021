use actix_web::{web, HttpResponse};
use serde_json::json;
use switchboard_storage::PayerRecord;

use super::AdminJson;
use crate::auth::{Admin, Reader};
use crate::configuration::specs::PayerSpec;
use crate::errors::ApiError;
use crate::provisioning::payer_record;
use crate::state::AppState;

fn payer_out(payer: &PayerRecord) -> serde_json::Value {
    json!({
        "name": payer.name,
        "aliases": payer.aliases,
        "phone": payer.phone,
        "required_inputs": payer.required_inputs,
        "electronic": payer.electronic,
        "electronic_payer_id": payer.electronic_payer_id,
        "member_id_prefixes": payer.member_id_prefixes,
    })
}

/// `GET /admin/v1/payers`: the whole directory.
pub async fn list_payers(_: Reader, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let payers: Vec<_> = state.store.payers()?.iter().map(payer_out).collect();
    Ok(HttpResponse::Ok().json(json!({ "payers": payers })))
}

/// `PUT /admin/v1/payers/{name}`: creates or replaces a directory entry.
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
    state.reload_directory()?;
    Ok(HttpResponse::Ok().json(payer_out(&record)))
}
