//! The [`ConsoleScope`] extractor: whose requests a console call is about.
//!
//! The console signs in two ways. With an API bearer token it sees exactly what that token's caller sees
//! (the token's account and environment, through [`Caller`]). With the operator's admin token it names
//! the account and environment in the `account` and `environment` query parameters, so an operator can
//! watch any account without holding its secrets.

use futures::future::{FutureExt, LocalBoxFuture};
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use serde::Deserialize;
use std::net::IpAddr;

use chrono::{DateTime, Utc};
use switchboard_storage::audit::{Actor, NewEvent, Target};
use switchboard_storage::{
    AccountRecord, Environment, RequestId, RequestRecord, Role, Scope, Store,
};

use crate::auth::{operator_of, Caller};
use crate::errors::AdminForbidden;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

/// How the console caller proved who it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignIn {
    /// An API bearer token from `/v1/auth`.
    ApiToken,
    /// The operator's admin token, with the account and environment named in the query.
    Admin,
}

impl SignIn {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SignIn::ApiToken => "token",
            SignIn::Admin => "admin",
        }
    }
}

/// The account (as stored now) and environment a console call reads.
#[derive(Clone, Debug)]
pub struct ConsoleScope {
    /// The account.
    pub account: AccountRecord,
    /// Production or sandbox.
    pub environment: Environment,
    /// How the caller signed in.
    pub sign_in: SignIn,
    /// Who, for the audit log: the API credential, or the operator.
    pub actor: Actor,
    /// The operator's role, when an operator signed in.
    pub role: Option<Role>,
    /// The connection's peer address.
    pub ip: Option<IpAddr>,
    /// When the call began (the clock's time), for the audit log.
    pub at: DateTime<Utc>,
}

impl ConsoleScope {
    /// The storage scope: one account in one environment.
    pub fn scope(&self) -> Scope {
        Scope::new(self.account.id.clone(), self.environment)
    }

    /// The stored request `id` of this scope; 404 `REQUEST_NOT_FOUND` when it is missing or another
    /// scope's, so the console never tells the two apart.
    pub async fn request(
        &self,
        store: &Store,
        id: &RequestId,
    ) -> Result<Arc<RequestRecord>, ApiError> {
        match store.fetch_request(id).await? {
            Some(record)
                if record.account_id == self.account.id
                    && record.environment == self.environment =>
            {
                self.audit_read(store, &record.id);
                Ok(record)
            }
            _ => Err(ApiError::new(
                Code::RequestNotFound,
                format!("Request '{id}' was not found"),
            )),
        }
    }
}

impl ConsoleScope {
    /// Records that this caller read the request `id` (a detail, or an entry of a list).
    pub fn audit_read(&self, store: &Store, id: &RequestId) {
        store.audit_read(NewEvent {
            at: self.at,
            actor: self.actor.clone(),
            action: "request.read".into(),
            target: Some(Target::new("request", id.as_str())),
            outcome: "ok".into(),
            ip: self.ip,
            count: None,
        });
    }
}

#[derive(Deserialize)]
struct ScopeQuery {
    account: Option<String>,
    environment: Option<Environment>,
}

/// Awaits the account it reads from the store, never blocking the worker on the database.
impl FromRequest for ConsoleScope {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<ConsoleScope, actix_web::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        async move { resolve(&req).await }.boxed_local()
    }
}

async fn resolve(req: &HttpRequest) -> Result<ConsoleScope, actix_web::Error> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state missing")))?;
    // The console takes the admin token, so its failed sign-ins count with the admin API's.
    crate::auth::throttled(req, state)?;
    if let Some(operator) = operator_of(req).await? {
        // The auditor sees the audit log and no PHI, a caller the work queue only; the console's reads
        // show requests.
        let reads_requests = matches!(operator.role, Role::Admin | Role::Support);
        if !reads_requests || state.settings.server.admin_token.is_none() {
            crate::auth::denied(req, operator.actor());
            return Err(AdminForbidden.into());
        }
        let query = web::Query::<ScopeQuery>::from_query(req.query_string())
            .map_err(|e| ApiError::invalid_request(format!("Invalid query parameter: {e}")))?;
        let (Some(account_id), Some(environment)) = (
            query
                .account
                .as_deref()
                .map(str::trim)
                .filter(|a| !a.is_empty()),
            query.environment,
        ) else {
            return Err(ApiError::invalid_request(
                "With the admin token, the account and environment query parameters are required",
            )
            .into());
        };
        let account = state
            .store
            .shared_account(account_id)
            .await
            .map_err(ApiError::from)?
            .map(Arc::unwrap_or_clone)
            .ok_or_else(|| {
                ApiError::new(
                    Code::AccountNotFound,
                    format!("Account '{account_id}' does not exist"),
                )
            })?;
        return Ok(ConsoleScope {
            account,
            environment,
            sign_in: SignIn::Admin,
            actor: operator.actor(),
            role: Some(operator.role),
            ip: operator.ip,
            at: state.clock.now(),
        });
    }
    // The caller's token reads no body.
    let caller = Caller::from_request(req, &mut Payload::None);
    let caller = caller.await.inspect_err(|_| {
        crate::auth::count_unknown_token(req, state, Actor::operator("unknown"));
    })?;
    Ok(ConsoleScope {
        actor: caller.actor(),
        ip: caller.ip,
        account: Arc::unwrap_or_clone(caller.account),
        environment: caller.environment,
        sign_in: SignIn::ApiToken,
        role: None,
        at: state.clock.now(),
    })
}
