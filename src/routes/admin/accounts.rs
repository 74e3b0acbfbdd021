//! `/admin/v1/accounts`: accounts and their key pairs.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use switchboard_actors::webhooks::{check_target, TargetError};
use switchboard_storage::{AccountRecord, Environment, StorageError};

use super::AdminJson;
use crate::auth::{Admin, Operator, Reader};
use crate::configuration::specs::{validate_identifier, AccountSpec};
use crate::errors::{ApiError, Code};
use crate::provisioning::{account_record, generate_credential, generate_webhook_secret};
use crate::state::AppState;
use crate::wire::{AccountListOut, AccountOut, CredentialIssuedOut, ErrorOut};
use utoipa::ToSchema;

pub(super) fn account_not_found(id: &str) -> ApiError {
    ApiError::new(
        Code::AccountNotFound,
        format!("Account '{id}' does not exist"),
    )
}

/// List accounts
///
/// Every account, without secrets.
#[utoipa::path(get, path = "/admin/v1/accounts", operation_id = "listAccounts",
    responses((status = 200, description = "Every account.", body = AccountListOut)))]
pub async fn list_accounts(
    _: Reader,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let accounts = state.store.accounts().await?;
    Ok(HttpResponse::Ok().json(AccountListOut {
        accounts: accounts.iter().map(AccountOut::from).collect(),
    }))
}

/// Read an account
///
/// The account, without secrets.
#[utoipa::path(get, path = "/admin/v1/accounts/{id}", operation_id = "getAccount",
    params(("id" = String, Path, description = "The account's id.")),
    responses(
        (status = 200, description = "The account.", body = AccountOut),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
pub async fn get_account(
    _: Reader,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let account = state
        .store
        .account(&id)
        .await?
        .ok_or_else(|| account_not_found(&id))?;
    Ok(HttpResponse::Ok().json(AccountOut::from(&account)))
}

/// Create or replace an account
///
/// The body is the whole account, the fields of an `[[accounts]]` table: a field left out takes its
/// default, except `credentials`, whose absence keeps the pairs issued (pairs not listed again are
/// revoked with their tokens), and `webhook_secret`, whose absence keeps the stored one. Schemas named
/// must exist. An account created without a webhook secret gets a generated one, shown in the 201 only.
#[utoipa::path(put, path = "/admin/v1/accounts/{id}", operation_id = "putAccount",
    params(("id" = String, Path, description = "The account's id.")),
    request_body = AccountSpec,
    responses(
        (status = 200, description = "Replaced.", body = AccountOut),
        (status = 201, description = "Created.", body = AccountOut),
        (status = 400, description = "`INVALID_REQUEST` naming the field; nothing changed.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_put_account", skip_all, fields(account = tracing::field::Empty))]
pub async fn put_account(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
    spec: AdminJson<AccountSpec>,
) -> Result<HttpResponse, ApiError> {
    validate_identifier("id", &id)?;
    tracing::Span::current().record("account", id.as_str());
    let existing = state.store.account(&id).await?;
    let record = write_account(&state, &operator, &id, &spec, existing.as_ref()).await?;
    if existing.is_some() {
        return Ok(with_status(HttpResponse::Ok(), &record));
    }
    let mut created = AccountOut::from(&record);
    if spec.webhook_secret.is_none() {
        created.webhook_secret = record.webhook_secret.as_deref();
    }
    Ok(HttpResponse::Created().json(created))
}

/// Checks `spec` as a declaration of account `id` and stores it over `existing`, with its audit event.
/// The one way both `PUT` and `PATCH` write an account.
pub(super) async fn write_account(
    state: &AppState,
    operator: &Operator,
    id: &str,
    spec: &AccountSpec,
    existing: Option<&AccountRecord>,
) -> Result<AccountRecord, ApiError> {
    if spec.id.as_deref().is_some_and(|body_id| body_id != id) {
        return Err(ApiError::invalid_request(
            "id: the body's id does not match the path",
        ));
    }
    spec.validate()?;
    if let Some(kind) = spec.dialer {
        if state.settings.dialer_of(kind).is_none() {
            return Err(ApiError::invalid_request(format!(
                "dialer: {:?} has no settings on this server (its [dialer] keys or [dialer.{}] table)",
                kind.as_str(),
                kind.as_str()
            )));
        }
    }
    if let Some(url) = &spec.webhook_url {
        // The same refusal as a request's webhookUrl, so a private target is reported here rather than
        // only in the delivery log later.
        match check_target(url, state.settings.webhooks.allow_private_targets).await {
            Ok(_) | Err(TargetError::Unresolvable(_)) => {}
            Err(refused) => {
                return Err(ApiError::invalid_request(format!("webhook_url: {refused}")))
            }
        }
    }
    for (i, schema) in spec.schemas.iter().enumerate() {
        if state.store.schema_head(schema).await?.is_none() {
            return Err(ApiError::invalid_request(format!(
                "schemas[{i}]: {schema:?} is not a known schema"
            )));
        }
    }
    let mut record = account_record(id, spec, existing, state.clock.now());
    // Without a secret of its own, an account's production webhooks would be signed with its API key,
    // which its clients hold: an account made here gets one, and a body without `webhook_secret` keeps
    // the stored one rather than falling back. (Accounts of the configuration file keep the fallback.)
    if spec.webhook_secret.is_none() {
        record.webhook_secret = match existing {
            Some(stored) => stored.webhook_secret.clone(),
            None => Some(generate_webhook_secret()),
        };
    }
    let event = crate::audit::change(state, operator, "account.change", "account", id);
    match state.store.put_account(&record, &[event]).await {
        Err(StorageError::CredentialKeyTaken) => Err(ApiError::invalid_request(
            "credentials: a key is already issued to another account",
        )),
        other => {
            other?;
            Ok(record)
        }
    }
}

pub(super) fn with_status(
    mut builder: actix_web::HttpResponseBuilder,
    account: &AccountRecord,
) -> HttpResponse {
    builder.json(AccountOut::from(account))
}

/// Delete an account
///
/// Its live tokens then get 404 `ACCOUNT_NOT_FOUND`.
#[utoipa::path(delete, path = "/admin/v1/accounts/{id}", operation_id = "deleteAccount",
    params(("id" = String, Path, description = "The account's id.")),
    responses(
        (status = 204, description = "Deleted."),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_delete_account", skip_all, fields(account = tracing::field::Empty))]
pub async fn delete_account(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let event = crate::audit::change(&state, &operator, "account.change", "account", &id);
    if state.store.delete_account(&id, &[event]).await? {
        tracing::Span::current().record("account", id.as_str());
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(account_not_found(&id))
    }
}

/// A key pair to issue.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCredentialIn {
    /// `production` or `sandbox`.
    #[schema(value_type = String, examples("production", "sandbox"))]
    environment: Environment,
}

/// Issue a key pair
///
/// A new key and secret for the account; the secret is shown only in this answer.
#[utoipa::path(post, path = "/admin/v1/accounts/{id}/credentials", operation_id = "createCredential",
    params(("id" = String, Path, description = "The account's id.")),
    request_body = NewCredentialIn,
    responses(
        (status = 201, description = "Issued.", body = CredentialIssuedOut),
        (status = 400, description = "`INVALID_REQUEST`.", body = ErrorOut),
        (status = 404, description = "`ACCOUNT_NOT_FOUND`.", body = ErrorOut),
    ))]
#[tracing::instrument(name = "admin_create_credential", skip_all, fields(account = tracing::field::Empty))]
pub async fn create_credential(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
    body: AdminJson<NewCredentialIn>,
) -> Result<HttpResponse, ApiError> {
    let (record, secret) = generate_credential(body.environment, state.clock.now());
    let event = crate::audit::change(&state, &operator, "account.change", "account", &id);
    match state
        .store
        .add_credential(&id, record.clone(), &[event])
        .await
    {
        Err(StorageError::AccountMissing(_)) => return Err(account_not_found(&id)),
        other => other?,
    }
    tracing::Span::current().record("account", id.as_str());
    Ok(HttpResponse::Created().json(CredentialIssuedOut {
        id: record.id,
        environment: record.environment.as_str(),
        key: record.key,
        secret,
    }))
}
