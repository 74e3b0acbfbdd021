use actix_web::{web, HttpRequest, HttpResponse};
use switchboard_storage::{AccountRecord, Feature, SchemaDefinition};

use super::{schema_id_param, usable_schema};
use crate::auth::Caller;
use crate::errors::ApiError;
use crate::state::AppState;
use crate::wire::{ErrorOut, FieldListOut, RequiredInputsOut};

/// The input key payer phone number lookup makes optional.
const PHONE_NUMBER: &str = "phoneNumber";

/// Input keys a schema requires and accepts
#[utoipa::path(get, path = "/v1/schemas/{schemaId}/required-inputs",
    operation_id = "getRequiredInputs",
    params(("schemaId" = String, Path, max_length = 1500, pattern = r"^([^_./\s][^/]*|\s[^/]*[^/\s][^/]*)$", example = "claim-status-basic", description = "Non-blank, at most 1500 characters, no `/`, not starting with `_` or `.`; otherwise 400 `INVALID_REQUEST`.")),
    responses(
        (status = 200, description = "Required and optional input keys.", body = RequiredInputsOut),
        (status = 400, description = "`INVALID_REQUEST`: the `schemaId` path parameter breaks the rules (blank, over 1500 characters, contains `/`, starts with `_` or `.`).", body = ErrorOut),
        (status = 404, description = "`SCHEMA_NOT_FOUND` (absent for the account, or retired) or `ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "get_required_inputs", skip_all, fields(account = %caller.account.id))]
pub async fn get_required_inputs(
    req: HttpRequest,
    state: web::Data<AppState>,
    caller: Caller,
) -> Result<HttpResponse, ApiError> {
    let schema_id = schema_id_param(&req)?;
    let version = usable_schema(&state, &caller, &schema_id).await?;
    let (required, optional) = input_lists(&version.definition, &caller.account);
    Ok(HttpResponse::Ok().json(RequiredInputsOut {
        schema_id: schema_id.to_string(),
        required_inputs: FieldListOut { fields: required },
        optional_inputs: FieldListOut { fields: optional },
    }))
}

/// The schema's required and optional input keys for this account, each sorted and disjoint. With payer
/// phone number lookup the number can be looked up from `payerName`, so `phoneNumber` becomes optional.
pub(crate) fn input_lists(
    definition: &SchemaDefinition,
    account: &AccountRecord,
) -> (Vec<String>, Vec<String>) {
    let mut required = definition.required_inputs.clone();
    let mut optional = definition.optional_inputs.clone();
    if account.has(Feature::PayerPhoneLookup) {
        if let Some(at) = required.iter().position(|k| k == PHONE_NUMBER) {
            required.remove(at);
            optional.push(PHONE_NUMBER.to_owned());
        }
    }
    required.sort();
    optional.sort();
    optional.dedup();
    optional.retain(|k| !required.contains(k));
    (required, optional)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(features: Vec<Feature>) -> AccountRecord {
        AccountRecord {
            id: "a".into(),
            name: "A".into(),
            daily_call_capacity: 1,
            timezone: "UTC".into(),
            webhook_url: None,
            webhook_secret: None,
            features,
            schemas: vec![],
            phone_book: vec![],
            credentials: vec![],
            provider_name: None,
            retention_days: None,
            task_timeout_hours: None,
            dialer: None,
        }
    }

    fn definition() -> SchemaDefinition {
        SchemaDefinition {
            name: None,
            request_type: "claim-status".into(),
            required_inputs: vec!["phoneNumber".into(), "payerName".into(), "memberId".into()],
            optional_inputs: vec!["claimNumber".into(), "claimChargeAmount".into()],
            follow_up: None,
            fields: vec![],
            electronic: Default::default(),
        }
    }

    #[test]
    fn lists_are_sorted_and_phone_number_stays_required_without_lookup() {
        let (required, optional) = input_lists(&definition(), &account(vec![]));
        assert_eq!(required, ["memberId", "payerName", "phoneNumber"]);
        assert_eq!(optional, ["claimChargeAmount", "claimNumber"]);
    }

    #[test]
    fn payer_lookup_moves_phone_number_to_optional() {
        let (required, optional) =
            input_lists(&definition(), &account(vec![Feature::PayerPhoneLookup]));
        assert_eq!(required, ["memberId", "payerName"]);
        assert_eq!(
            optional,
            ["claimChargeAmount", "claimNumber", "phoneNumber"]
        );
    }
}
