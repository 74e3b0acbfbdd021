//! The [`ConsoleScope`] extractor: whose requests a console call is about.
//!
//! The console signs in two ways. With an API bearer token it sees exactly what that token's caller sees
//! (the token's account and environment, through [`Caller`]). With the operator's admin token it names
//! the account and environment in the `account` and `environment` query parameters, so an operator can
//! watch any account without holding its secrets.

use std::future::{ready, Ready};
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};
use serde::Deserialize;
use switchboard_storage::{AccountRecord, Environment, RequestId, RequestRecord, Scope, Store};

use crate::auth::{constant_time_eq, Caller};
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
}

impl ConsoleScope {
    /// The storage scope: one account in one environment.
    pub fn scope(&self) -> Scope {
        Scope::new(self.account.id.clone(), self.environment)
    }

    /// The stored request `id` of this scope; 404 `REQUEST_NOT_FOUND` when it is missing or another
    /// scope's, so the console never tells the two apart.
    pub fn request(&self, store: &Store, id: &RequestId) -> Result<RequestRecord, ApiError> {
        match store.request(id)? {
            Some(record)
                if record.account_id == self.account.id
                    && record.environment == self.environment =>
            {
                Ok(record)
            }
            _ => Err(ApiError::new(
                Code::RequestNotFound,
                format!("Request '{id}' was not found"),
            )),
        }
    }
}

#[derive(Deserialize)]
struct ScopeQuery {
    account: Option<String>,
    environment: Option<Environment>,
}

impl FromRequest for ConsoleScope {
    type Error = actix_web::Error;
    type Future = Ready<Result<ConsoleScope, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        ready(resolve(req, payload))
    }
}

fn resolve(req: &HttpRequest, payload: &mut Payload) -> Result<ConsoleScope, actix_web::Error> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state missing")))?;
    if presents_admin_token(req, state) {
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
            .account(account_id)
            .map_err(ApiError::from)?
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
        });
    }
    let caller = Caller::from_request(req, payload).into_inner()?;
    Ok(ConsoleScope {
        account: Arc::unwrap_or_clone(caller.account),
        environment: caller.environment,
        sign_in: SignIn::ApiToken,
    })
}

/// Whether the bearer token is the configured admin token (never true when the admin API is off).
fn presents_admin_token(req: &HttpRequest, state: &AppState) -> bool {
    let Some(expected) = state.settings.server.admin_token.as_ref() else {
        return false;
    };
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .is_some_and(|(_, token)| {
            constant_time_eq(expected.expose().as_bytes(), token.trim().as_bytes())
        })
}
