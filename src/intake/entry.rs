//! One request item (service-interface 4.6): shape, schema, payer, inputs, number.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use switchboard_actors::scheduler::RequestDraft;
use switchboard_storage::{DialTarget, Feature, NumberSource, SchemaVersionRecord};

use super::payer_lookup::{decide, find_number};
use crate::auth::Caller;
use crate::configuration::specs::validate_http_url;
use crate::domain::{ClientLabel, LabelTooLong, SchemaId, UsPhone};
use crate::errors::{ApiError, Code};
use crate::payers::PayerDirectory;
use crate::routes::schemas::{input_lists, usable_schema};
use crate::state::AppState;
use crate::validation::{check_input_bounds, validate_inputs, InputRules, MemberIdRules};

/// The most bytes a per-request `webhookUrl` may have: room for any real receiver's URL, which is stored
/// with the request.
pub const MAX_WEBHOOK_URL_BYTES: usize = 2048;

/// The schemas one POST has looked up, so a batch reads and decodes each schema once and all its entries
/// see the same version.
pub type SchemaMemo = HashMap<String, Arc<SchemaVersionRecord>>;

/// A single POST answers a missing schema with 404; a batch entry with a per-entry 400 (4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryMode {
    /// `POST /v1/requests` with one item.
    Single,
    /// One entry of `{ requests: [...] }`.
    Batch,
}

/// Validates one request item and resolves its number. Whether it replays an earlier `internalId` is
/// decided before (`Replays`). Any error is the entry's answer.
pub async fn prepare_entry(
    state: &AppState,
    caller: &Caller,
    directory: &PayerDirectory,
    schemas: &mut SchemaMemo,
    item: &Value,
    mode: EntryMode,
) -> Result<RequestDraft, ApiError> {
    let item = item
        .as_object()
        .ok_or_else(|| ApiError::invalid_request("Each request must be a JSON object"))?;
    let internal_id = optional_label(item, "internalId")?;
    let schema_id = match item.get("schemaId") {
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        Some(Value::String(_)) | None | Some(Value::Null) => {
            return Err(ApiError::invalid_request("schemaId is required"))
        }
        Some(_) => return Err(ApiError::invalid_request("schemaId must be a string")),
    };
    let inputs = match item.get("inputs") {
        Some(Value::Object(inputs)) => inputs,
        None | Some(Value::Null) => return Err(ApiError::invalid_request("inputs is required")),
        Some(_) => {
            return Err(ApiError::invalid_request(
                "inputs must be an object of strings",
            ))
        }
    };
    check_input_bounds(inputs).map_err(|e| inputs_refused(&e.to_string()))?;
    let webhook_url = optional_string(item, "webhookUrl")?;
    if let Some(url) = webhook_url
        .as_ref()
        .filter(|url| url.len() > MAX_WEBHOOK_URL_BYTES)
    {
        return Err(ApiError::invalid_request(format!(
            "webhookUrl is longer than {MAX_WEBHOOK_URL_BYTES} bytes ({} bytes)",
            url.len()
        )));
    }
    if let Some(url) = &webhook_url {
        validate_http_url("webhookUrl", url)
            .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    }
    let internal_tag = optional_label(item, "internalTag")?;
    let use_matched = optional_bool(item, "useMatchedPayerPhone")?;
    let ai_only = optional_bool(item, "aiOnly")?;
    let onshore_only = optional_bool(item, "onshoreOnly")?;

    let schema = match schemas.get(&schema_id) {
        Some(known) => Ok(Arc::clone(known)),
        None => match SchemaId::try_from(schema_id.clone()) {
            Ok(id) => usable_schema(state, caller, &id).await.inspect(|found| {
                schemas.insert(schema_id.clone(), Arc::clone(found));
            }),
            Err(_) => Err(ApiError::schema_not_found(&schema_id)),
        },
    };
    let schema = match (schema, mode) {
        (Err(e), EntryMode::Batch) if e.code() == Code::SchemaNotFound => {
            return Err(ApiError::invalid_request(format!(
                "Schema '{schema_id}' was not found"
            )))
        }
        (other, _) => other?,
    };

    let account = &caller.account;
    let payer_name = text(inputs, "payerName");
    let member_id = text(inputs, "memberId");
    let (mut required, _) = input_lists(&schema.definition, account);
    let matched_payer = payer_name.and_then(|name| directory.resolve(name, member_id));
    if account.has(Feature::EnforcePayerRequiredInputs) {
        if let Some(matched) = &matched_payer {
            required.extend(matched.payer.required_inputs.iter().cloned());
        }
    }
    let member_rules = account.has(Feature::EnforceMemberIdValidation).then(|| {
        MemberIdRules::for_payer(
            payer_name.unwrap_or_default(),
            account.has(Feature::EnforceMemberIdPrefix),
        )
    });
    let rules = InputRules {
        required: &required,
        catalogue: &state.settings.input_types,
        member_id: member_rules,
    };
    let accepted = validate_inputs(inputs, &rules).map_err(|errors| ApiError::Client {
        code: Code::InvalidInputs,
        message: errors.message(),
        details: Some(errors.details()),
    })?;

    let input_phone = accepted.get("phoneNumber").map(String::as_str);
    let (payer_lookup, dial) = if account.has(Feature::PayerPhoneLookup) {
        let name = payer_name.unwrap_or_default();
        // A supplied number is dialed as-is unless the client asks for the matched one (rules 1 and 3), and
        // then payerLookup names no match: the phone book and directory are consulted only when they can
        // change the answer (rules 2 and 4).
        let found = (input_phone.is_none() || use_matched)
            .then(|| find_number(account, directory, name, matched_payer.as_ref()))
            .flatten();
        let (lookup, dial) = decide(name, input_phone, use_matched, found.as_ref())?;
        (Some(lookup), Some(dial))
    } else {
        let dial = input_phone
            .and_then(UsPhone::parse)
            .map(|phone| DialTarget {
                number: phone.digits().to_owned(),
                source: NumberSource::Input,
            });
        (None, dial)
    };

    let payer_electronic = matched_payer.as_ref().is_some_and(|m| m.payer.electronic);
    let electronic_payer_id = matched_payer
        .as_ref()
        .and_then(|m| m.payer.electronic_payer_id.clone());
    Ok(RequestDraft {
        schema_id,
        schema_version: schema.version,
        request_type: schema.definition.request_type.clone(),
        inputs: accepted,
        internal_id: internal_id.map(ClientLabel::into_inner),
        internal_tag: internal_tag.map(ClientLabel::into_inner),
        webhook_url,
        ai_only,
        onshore_only,
        payer_lookup,
        dial,
        payer_electronic,
        electronic_payer_id,
    })
}

fn text<'a>(inputs: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    inputs
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn optional_string(item: &Map<String, Value>, key: &str) -> Result<Option<String>, ApiError> {
    match item.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::invalid_request(format!("{key} must be a string"))),
    }
}

/// An `internalId` or `internalTag`: absent, or at most [`crate::domain::MAX_LABEL_BYTES`]. One over the
/// limit is `INVALID_INPUTS` naming the field in the message (it is not an input, so `details` stays
/// empty: operator contract section 12).
fn optional_label(
    item: &Map<String, Value>,
    key: &'static str,
) -> Result<Option<ClientLabel>, ApiError> {
    optional_string(item, key)?
        .map(|raw| ClientLabel::parse(key, raw))
        .transpose()
        .map_err(label_too_long)
}

fn label_too_long(error: LabelTooLong) -> ApiError {
    inputs_refused(&error.to_string())
}

/// `INVALID_INPUTS` for a bound that no single input key answers for (an id too long, too many inputs,
/// too much of them together): the envelope's message names the field and its limit.
fn inputs_refused(why: &str) -> ApiError {
    ApiError::Client {
        code: Code::InvalidInputs,
        message: format!("Input validation failed: {why}"),
        details: Some(Default::default()),
    }
}

fn optional_bool(item: &Map<String, Value>, key: &str) -> Result<bool, ApiError> {
    match item.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ApiError::invalid_request(format!(
            "{key} must be a boolean"
        ))),
    }
}
