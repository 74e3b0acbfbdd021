//! The [`Caller`] extractor: who holds the bearer token.

use std::sync::Arc;

use futures::future::{ready, Either, LocalBoxFuture, Ready};
use futures::FutureExt;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use switchboard_storage::{AccountRecord, Environment};

use super::identity_first::AccountRead;
use super::TokenProblem;
use crate::errors::{ApiError, TokenError};
use crate::state::AppState;

/// An authenticated API client: its account as stored now, and the environment of its credential.
/// Production and sandbox tokens of one account are different callers that never see each other's data.
#[derive(Clone, Debug)]
pub struct Caller {
    /// The account, read at the start of this request (shared with the store's decoded copy).
    pub account: Arc<AccountRecord>,
    /// Which path the credential routes to.
    pub environment: Environment,
    /// The credential the token was issued for.
    pub credential_id: String,
    /// The client's address (the connection's peer), for the audit log.
    pub ip: Option<std::net::IpAddr>,
    /// When the token was checked: the instant of the call's read events, so a read asks the clock once.
    pub at: chrono::DateTime<chrono::Utc>,
}

impl Caller {
    /// The audit log's actor for this caller.
    pub fn actor(&self) -> switchboard_storage::audit::Actor {
        switchboard_storage::audit::Actor::api_key(&self.credential_id)
    }
}

/// Ready at once when the caller's account is kept as last read (nearly every call); else the account is
/// awaited from the store, never read by blocking the worker on the database.
impl FromRequest for Caller {
    type Error = actix_web::Error;
    type Future = Either<
        Ready<Result<Caller, actix_web::Error>>,
        LocalBoxFuture<'static, Result<Caller, actix_web::Error>>,
    >;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let (state, checked) = match check_token(req) {
            Ok(checked) => checked,
            Err(refused) => return Either::Left(ready(Err(refused))),
        };
        let read_ahead = req
            .extensions()
            .get::<AccountRead>()
            .filter(|read| read.id == checked.claims.sub)
            .map(|read| Arc::clone(&read.account));
        if let Some(account) =
            read_ahead.or_else(|| state.store.cached_account(&checked.claims.sub))
        {
            return Either::Left(ready(checked.caller(&state, account)));
        }
        async move {
            let account = state
                .store
                .shared_account(&checked.claims.sub)
                .await
                .map_err(ApiError::from)?
                .ok_or_else(ApiError::account_not_found)?;
            checked.caller(&state, account)
        }
        .boxed_local()
        .right_future()
    }
}

/// A token whose signature and expiry hold, before its account is read.
struct Checked {
    claims: Arc<super::Claims>,
    ip: Option<std::net::IpAddr>,
    at: chrono::DateTime<chrono::Utc>,
}

impl Checked {
    /// The caller, once its account is read: refused when the credential is gone or moved.
    fn caller(
        self,
        state: &AppState,
        account: Arc<AccountRecord>,
    ) -> Result<Caller, actix_web::Error> {
        let credential_live = account
            .credential(&self.claims.cid)
            .is_some_and(|credential| credential.environment == self.claims.env);
        if !credential_live {
            return Err(TokenError {
                realm: state.product_word().to_owned(),
                rfc_error: Some("invalid_token"),
                message: "Authorization token has been revoked".to_owned(),
            }
            .into());
        }
        Ok(Caller {
            account,
            environment: self.claims.env,
            credential_id: self.claims.cid.clone(),
            ip: self.ip,
            at: self.at,
        })
    }
}

fn check_token(req: &HttpRequest) -> Result<(web::Data<AppState>, Checked), actix_web::Error> {
    let state = req
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state missing")))?;
    let reject = |rfc_error: Option<&'static str>, message: &str| TokenError {
        realm: state.product_word().to_owned(),
        rfc_error,
        message: message.to_owned(),
    };
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return Err(reject(None, "Authorization token is missing").into());
    };
    // Not `to_str`, which checks every byte of a long token one by one: a value that is not UTF-8 is
    // no bearer token either way, and one with other invisible bytes fails the token's own checks.
    let value = std::str::from_utf8(value.as_bytes())
        .unwrap_or_default()
        .trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(reject(
            None,
            "Authorization header must use the Bearer scheme: 'Bearer <token>'",
        )
        .into());
    }
    let at = state.clock.now();
    let claims = state
        .tokens
        .verify(token.trim(), at)
        .map_err(|problem| match problem {
            TokenProblem::Malformed => reject(
                Some("invalid_token"),
                "Authorization token is not in the form header.payload.signature",
            ),
            TokenProblem::Invalid => {
                reject(Some("invalid_token"), "Authorization token is invalid")
            }
            TokenProblem::Expired => {
                reject(Some("invalid_token"), "Authorization token has expired")
            }
        })?;
    let checked = Checked {
        claims,
        ip: crate::client_ip::client_ip(req),
        at,
    };
    Ok((state.clone(), checked))
}

/// The account of the request's client token, read before the handler ([`super::identity_first`]) when
/// it is not kept in memory; `None` when there is nothing to read ahead (no valid token, a kept account,
/// no such account, a failed read: the extractor answers those as it always does).
pub(super) async fn read_account_ahead(req: &HttpRequest) -> Option<AccountRead> {
    let (state, checked) = check_token(req).ok()?;
    let id = checked.claims.sub.clone();
    if state.store.cached_account(&id).is_some() {
        return None;
    }
    let account = state.store.shared_account(&id).await.ok()??;
    Some(AccountRead { id, account })
}
