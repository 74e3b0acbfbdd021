//! `PATCH /admin/v1/accounts/{id}`: a partial update. The given fields replace the stored ones; every
//! other field keeps its stored value. The merged account is then checked and written exactly as a `PUT`
//! of the whole account would be (same role, same checks, same audit event), so the two cannot drift.

use actix_web::{web, HttpResponse};
use serde_json::{json, Map, Value};
use switchboard_storage::AccountRecord;

use super::accounts::{account_not_found, with_status, write_account};
use super::AdminJson;
use crate::auth::Admin;
use crate::configuration::specs::AccountSpec;
use crate::errors::ApiError;
use crate::state::AppState;

/// Change some fields of an account
///
/// The given fields replace the stored ones (`null` clears an optional one); the others keep their stored
/// values. The body has the fields of the `PUT`'s body, none required. The merged account is checked and
/// written as a `PUT` of it would be. An account that does not exist is 404 (a partial body cannot create
/// one).
#[utoipa::path(patch, path = "/admin/v1/accounts/{id}", operation_id = "patchAccount",
    params(("id" = String, Path, description = "The account's id.")),
    request_body(content = Object, description = "Any of the fields of `AccountSpec`."),
    responses(
        (status = 200, description = "The account as now stored.", body = crate::wire::AccountOut),
        (status = 400, description = "`INVALID_REQUEST` naming the field; nothing changed.", body = crate::wire::ErrorOut),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`.", body = crate::wire::ErrorOut),
    ))]
#[tracing::instrument(name = "admin_patch_account", skip_all, fields(account = tracing::field::Empty))]
pub async fn patch_account(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
    patch: AdminJson<Map<String, Value>>,
) -> Result<HttpResponse, ApiError> {
    let existing = state
        .store
        .account(&id)
        .await?
        .ok_or_else(|| account_not_found(&id))?;
    tracing::Span::current().record("account", id.as_str());
    let mut merged = declaration_of(&existing);
    merged.extend(patch.into_inner());
    let spec: AccountSpec =
        serde_path_to_error::deserialize(Value::Object(merged)).map_err(|e| {
            let path = e.path().to_string();
            ApiError::invalid_request(format!("{path}: {}", e.into_inner()))
        })?;
    let record = write_account(&state, &operator, &id, &spec, Some(&existing)).await?;
    Ok(with_status(HttpResponse::Ok(), &record))
}

/// The stored account as the body of a `PUT` would declare it. `credentials` is left out, which keeps the
/// issued pairs (their secrets are stored only as digests, so they cannot be declared again).
fn declaration_of(account: &AccountRecord) -> Map<String, Value> {
    let declaration = json!({
        "name": account.name,
        "daily_call_capacity": account.daily_call_capacity,
        "timezone": account.timezone,
        "webhook_url": account.webhook_url,
        "webhook_secret": account.webhook_secret,
        "features": account.features.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        "schemas": account.schemas,
        "phone_book": account
            .phone_book
            .iter()
            .map(|e| json!({ "payer": e.payer, "phone": e.phone }))
            .collect::<Vec<_>>(),
        "provider_name": account.provider_name,
        "retention_days": account.retention_days,
        "task_timeout_hours": account.task_timeout_hours,
    });
    match declaration {
        Value::Object(map) => map,
        _ => unreachable!("built as an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provisioning::account_record;

    /// A field added to accounts but not to [`declaration_of`] would be reset by every `PATCH`.
    #[test]
    fn the_declaration_of_a_stored_account_stores_that_same_account_again() {
        let declared: AccountSpec = serde_json::from_value(json!({
            "name": "Acme",
            "daily_call_capacity": 7,
            "timezone": "America/Chicago",
            "webhook_url": "https://hooks.example.test/a",
            "webhook_secret": "whsec_test",
            "features": ["payer_phone_lookup", "attempt_details"],
            "schemas": ["vob-basic"],
            "phone_book": [{ "payer": "Aetna", "phone": "8005550142" }],
            "credentials": [{ "environment": "sandbox", "key": "sk_test_a", "secret": "s" }],
            "provider_name": "Acme Clinic",
            "retention_days": 30,
        }))
        .unwrap();
        let now = chrono::Utc::now();
        let stored = account_record("acme", &declared, None, now);

        let again: AccountSpec =
            serde_json::from_value(Value::Object(declaration_of(&stored))).unwrap();

        assert_eq!(account_record("acme", &again, Some(&stored), now), stored);
    }
}
