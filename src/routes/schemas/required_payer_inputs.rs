//! `POST /v1/schemas/{schemaId}/required-payer-inputs` (service-interface 4.5).

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::{json, Value};
use switchboard_storage::Feature;

use super::{input_lists, schema_id_param, usable_schema};
use crate::auth::Caller;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

const MAX_PAYER_NAMES: usize = 50;

/// Resolves each payer name, in order and 1:1, to the extra inputs that payer requires. A name that cannot
/// be resolved is an error entry, never a failure of the whole call.
#[tracing::instrument(name = "required_payer_inputs", skip_all, fields(account = %caller.account.id))]
pub async fn required_payer_inputs(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
    body: web::Json<Value>,
) -> Result<HttpResponse, ApiError> {
    let schema_id = schema_id_param(&req)?;
    if !caller.account.has(Feature::EnforcePayerRequiredInputs) {
        return Err(ApiError::new(
            Code::PayerRequiredInputsDisabled,
            "Per-payer required inputs are not enabled for this account",
        ));
    }
    let names = match body.get("payerNames") {
        Some(Value::Array(names)) => names,
        None | Some(Value::Null) => {
            return Err(ApiError::invalid_request("payerNames is required"))
        }
        Some(_) => {
            return Err(ApiError::invalid_request(
                "payerNames must be an array of strings",
            ))
        }
    };
    if names.is_empty() {
        return Err(ApiError::invalid_request(
            "payerNames must contain at least 1 entry",
        ));
    }
    if names.len() > MAX_PAYER_NAMES {
        return Err(ApiError::invalid_request(format!(
            "payerNames must contain at most {MAX_PAYER_NAMES} entries, got {}",
            names.len()
        )));
    }
    // The array must hold strings: a number or an object is a malformed body, not a payer name that
    // failed to resolve. Only a blank string is a per-payer error (4.5).
    let names = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            name.as_str().ok_or_else(|| {
                ApiError::invalid_request(format!(
                    "payerNames must be an array of strings; entry {i} is {}",
                    json_kind(name)
                ))
            })
        })
        .collect::<Result<Vec<&str>, ApiError>>()?;
    let schema = usable_schema(&state, &caller, &schema_id)?;
    let (required, optional) = input_lists(&schema.definition, &caller.account);
    let directory = state.directory();
    let payers: Vec<Value> = names
        .iter()
        .map(|name| match name.trim() {
            "" => json!({
                "inputPayerName": name,
                "errorCode": "INVALID_PAYER_NAME",
                "message": "Payer name must not be blank",
            }),
            trimmed => match directory.resolve(trimmed, None) {
                Some(found) => {
                    let mut fields = found.payer.required_inputs.clone();
                    fields.sort();
                    fields.dedup();
                    json!({
                        "inputPayerName": name,
                        "matchedPayerName": found.payer.name,
                        "payerRequiredInputs": { "fields": fields },
                    })
                }
                None => json!({
                    "inputPayerName": name,
                    "errorCode": "PAYER_NOT_FOUND",
                    "message": format!("Payer '{trimmed}' matched no known payer"),
                }),
            },
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({
        "schemaId": schema_id.to_string(),
        "requiredInputs": { "fields": required },
        "optionalInputs": { "fields": optional },
        "payers": payers,
    })))
}

/// "a number", "an object", ...: what a JSON value is, for a message that names no internal type.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
