use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;
use switchboard_actors::webhooks::{check_target, TargetError};
use switchboard_storage::{AccountRecord, Environment, StorageError};

use super::AdminJson;
use crate::auth::{Admin, Operator, Reader};
use crate::configuration::specs::{validate_identifier, AccountSpec};
use crate::errors::{ApiError, Code};
use crate::provisioning::{account_record, generate_credential, generate_webhook_secret};
use crate::state::AppState;
use crate::wire::format_timestamp;

/// The admin view of an account: everything but secrets.
#[derive(Serialize)]
struct AccountOut<'a> {
    id: &'a str,
    name: &'a str,
    daily_call_capacity: u32,
    timezone: &'a str,
    webhook_url: Option<&'a str>,
    webhook_secret_set: bool,
    features: Vec<&'static str>,
    schemas: &'a [String],
    phone_book: Vec<serde_json::Value>,
    credentials: Vec<serde_json::Value>,
    /// Days a request is kept once terminal; absent when requests are kept until purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    retention_days: Option<u32>,
    /// The account's own dialer kind; absent when it uses `[dialer] kind`.
    #[serde(skip_serializing_if = "Option::is_none")]
    dialer: Option<&'a str>,
    /// The webhook signing secret Switchboard generated: only in the answer that created the account.
    #[serde(skip_serializing_if = "Option::is_none")]
    webhook_secret: Option<&'a str>,
}

impl<'a> From<&'a AccountRecord> for AccountOut<'a> {
    fn from(account: &'a AccountRecord) -> AccountOut<'a> {
        AccountOut {
            id: &account.id,
            name: &account.name,
            daily_call_capacity: account.daily_call_capacity,
            timezone: &account.timezone,
            webhook_url: account.webhook_url.as_deref(),
            webhook_secret_set: account.webhook_secret.is_some(),
            features: account.features.iter().map(|f| f.as_str()).collect(),
            schemas: &account.schemas,
            phone_book: account
                .phone_book
                .iter()
                .map(|e| json!({ "payer": e.payer, "phone": e.phone }))
                .collect(),
            credentials: account
                .credentials
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "environment": c.environment.as_str(),
                        "key": c.key,
                        "issued_at": format_timestamp(c.issued_at),
                    })
                })
                .collect(),
            retention_days: account.retention_days,
            dialer: account.dialer.as_deref(),
            webhook_secret: None,
        }
    }
}

pub(super) fn account_not_found(id: &str) -> ApiError {
    ApiError::new(
        Code::AccountNotFound,
        format!("Account '{id}' does not exist"),
    )
}

/// `GET /admin/v1/accounts`.
pub async fn list_accounts(
    _: Reader,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let accounts = state.store.accounts()?;
    let out: Vec<AccountOut> = accounts.iter().map(AccountOut::from).collect();
    Ok(HttpResponse::Ok().json(json!({ "accounts": out })))
}

/// `GET /admin/v1/accounts/{id}`.
pub async fn get_account(
    _: Reader,
    state: web::Data<AppState>,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let account = state
        .store
        .account(&id)?
        .ok_or_else(|| account_not_found(&id))?;
    Ok(HttpResponse::Ok().json(AccountOut::from(&account)))
}

/// `PUT /admin/v1/accounts/{id}`: create (201) or replace (200). The body is the whole account: a field
/// left out takes its default, except `credentials`, whose absence keeps the pairs issued, and
/// `webhook_secret`, whose absence keeps the stored one (see [`write_account`]). An account created
/// without one gets a generated secret, shown in the 201 only.
#[tracing::instrument(name = "admin_put_account", skip_all, fields(account = tracing::field::Empty))]
pub async fn put_account(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    id: web::Path<String>,
    spec: AdminJson<AccountSpec>,
) -> Result<HttpResponse, ApiError> {
    validate_identifier("id", &id)?;
    tracing::Span::current().record("account", id.as_str());
    let existing = state.store.account(&id)?;
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
        if state.store.schema_head(schema)?.is_none() {
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

/// `DELETE /admin/v1/accounts/{id}`: its live tokens then get 404 `ACCOUNT_NOT_FOUND`.
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewCredentialIn {
    environment: Environment,
}

/// `POST /admin/v1/accounts/{id}/credentials`: issues a new pair; the secret is shown only here.
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
    Ok(HttpResponse::Created().json(json!({
        "id": record.id,
        "environment": record.environment.as_str(),
        "key": record.key,
        "secret": secret,
    })))
}
