//! `POST /v1/schemas/{schemaId}/required-payer-inputs` (service-interface 4.5).

use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::Value;
use switchboard_storage::Feature;

use super::{input_lists, schema_id_param, usable_schema};
use crate::auth::Caller;
use crate::errors::{ApiError, Code};
use crate::state::AppState;
use crate::wire::{
    ErrorOut, FieldListOut, PayerInputsOut, PayerMatchOut, PayerUnresolvedOut,
    RequiredPayerInputsIn, RequiredPayerInputsOut,
};

const MAX_PAYER_NAMES: usize = 50;

/// Per-payer required inputs
///
/// Resolves each payer name, in order and 1:1, to the extra inputs that payer requires. A name that cannot
/// be resolved is an error entry, never a failure of the whole call.
#[utoipa::path(post, path = "/v1/schemas/{schemaId}/required-payer-inputs",
    operation_id = "getRequiredPayerInputs",
    params(("schemaId" = String, Path, max_length = 1500, pattern = r"^([^_./\s][^/]*|\s[^/]*[^/\s][^/]*)$", example = "claim-status-basic", description = "Non-blank, at most 1500 characters, no `/`, not starting with `_` or `.`; otherwise 400 `INVALID_REQUEST`.")),
    request_body = RequiredPayerInputsIn,
    responses(
        (status = 200, description = "One entry per payer name, aligned 1:1.", body = RequiredPayerInputsOut),
        (status = 400, description = "`INVALID_REQUEST`: bad `schemaId`, body not JSON, `payerNames` missing, not an array of strings, empty or over 50 entries.", body = ErrorOut),
        (status = 403, description = "`PAYER_REQUIRED_INPUTS_DISABLED`: the account does not have per-payer required inputs.", body = ErrorOut),
        (status = 404, description = "`SCHEMA_NOT_FOUND` (absent for the account, or retired) or `ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
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
    let schema = usable_schema(&state, &caller, &schema_id).await?;
    let (required, optional) = input_lists(&schema.definition, &caller.account);
    let directory = state.directory();
    let payers = names
        .iter()
        .map(|name| match name.trim() {
            // Every entry is echoed trimmed, so a blank one comes back as "" (the interface's
            // document): a client matches its answers on the name it meant, not on its padding.
            "" => unresolved(
                "",
                "INVALID_PAYER_NAME",
                "Payer name must not be blank".into(),
            ),
            trimmed => match directory.resolve(trimmed, None) {
                Some(found) => {
                    let mut fields = found.payer.required_inputs.clone();
                    fields.sort();
                    fields.dedup();
                    PayerInputsOut::Matched(PayerMatchOut {
                        input_payer_name: trimmed.to_owned(),
                        matched_payer_name: found.payer.name.clone(),
                        payer_required_inputs: FieldListOut { fields },
                    })
                }
                None => unresolved(
                    trimmed,
                    "PAYER_NOT_FOUND",
                    format!("Payer '{trimmed}' matched no known payer"),
                ),
            },
        })
        .collect();
    Ok(HttpResponse::Ok().json(RequiredPayerInputsOut {
        schema_id: schema_id.to_string(),
        required_inputs: FieldListOut { fields: required },
        optional_inputs: FieldListOut { fields: optional },
        payers,
    }))
}

fn unresolved(name: &str, code: &'static str, message: String) -> PayerInputsOut {
    PayerInputsOut::Unresolved(PayerUnresolvedOut {
        input_payer_name: name.to_owned(),
        error_code: code,
        message,
    })
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
