//! Operators of the admin API: `server.admin_token` is the operator `admin`; every other operator has a
//! token of their own (only its SHA-256 is stored). Each admin route takes the extractor of the roles that
//! may call it, so a route's signature states its rule:
//! - [`Admin`]: `admin` only (every change);
//! - [`Reader`]: `admin` or `support` (reading requests, deliveries and configuration across accounts);
//! - [`Auditor`]: `admin` or `auditor` (the audit log, which holds no PHI);
//! - [`TaskWorker`]: `admin` or `caller` (working the queue of tasks for people);
//! - [`TaskReader`]: `admin`, `support` or `caller` (reading that queue).
//!
//! An unknown or deleted operator's token is 401; a known operator whose role may not is 403 `FORBIDDEN`.
//! Both are audited as `admin.access` `denied`. Unknown tokens also count towards the address's throttle
//! (`crate::throttle`): past its limit, every admin call from the address is 429 until its window ends.

use futures::future::{FutureExt, LocalBoxFuture};
use std::net::IpAddr;
use std::time::Instant;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use sha2::{Digest, Sha256};
use switchboard_storage::audit::{Actor, Target};
use switchboard_storage::Role;

use super::constant_time_eq;
use crate::errors::{AdminForbidden, AdminUnauthorized, SignInThrottled};
use crate::state::AppState;
use crate::throttle::Denial;

/// The name `server.admin_token` signs in as.
pub const CONFIGURED_ADMIN: &str = "admin";

/// A signed-in operator.
#[derive(Clone, Debug)]
pub struct Operator {
    /// Their name.
    pub name: String,
    /// Their role.
    pub role: Role,
    /// The connection's peer address.
    pub ip: Option<IpAddr>,
}

impl Operator {
    /// The audit log's actor.
    pub fn actor(&self) -> Actor {
        Actor::operator(&self.name)
    }
}

/// The SHA-256 of an operator token, hex: what the store keeps.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The operator the request's bearer token names, if any: as [`super::identity_first`] found it.
pub async fn operator_of(req: &HttpRequest) -> Result<Option<Operator>, AdminUnauthorized> {
    let looked_up = req
        .extensions()
        .get::<super::identity_first::OperatorLookedUp>()
        .map(|found| found.0.clone());
    match looked_up {
        Some(found) => found,
        None => look_up_operator(req).await,
    }
}

/// Reads the operator the request's bearer token names from the configuration and the store.
pub(super) async fn look_up_operator(
    req: &HttpRequest,
) -> Result<Option<Operator>, AdminUnauthorized> {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return Ok(None);
    };
    let Some(presented) = bearer(req) else {
        return Ok(None);
    };
    let ip = crate::client_ip::client_ip(req);
    if let Some(configured) = &state.settings.server.admin_token {
        if constant_time_eq(configured.expose().as_bytes(), presented.as_bytes()) {
            return Ok(Some(Operator {
                name: CONFIGURED_ADMIN.to_owned(),
                role: Role::Admin,
                ip,
            }));
        }
    }
    let stored = state
        .store
        .operator_by_token_digest(&token_digest(presented))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "operator lookup failed");
            AdminUnauthorized
        })?;
    Ok(stored.map(|record| Operator {
        name: record.name,
        role: record.role,
        ip,
    }))
}

pub(super) fn bearer(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// The admin API is off without `server.admin_token`: no operator token opens it either.
async fn signed_in(req: &HttpRequest, roles: &[Role]) -> Result<Operator, actix_web::Error> {
    let Some(state) = req
        .app_data::<web::Data<AppState>>()
        .filter(|state| state.settings.server.admin_token.is_some())
    else {
        return Err(AdminUnauthorized.into());
    };
    throttled(req, state)?;
    let operator = match operator_of(req).await? {
        Some(operator) => operator,
        None => {
            unknown_token(req, state);
            return Err(AdminUnauthorized.into());
        }
    };
    if roles.contains(&operator.role) {
        Ok(operator)
    } else {
        denied(req, operator.actor());
        Err(AdminForbidden.into())
    }
}

/// 429 when the caller's address is throttled after unknown tokens, before its token is looked at (a right
/// token must not be told apart from a wrong one); the refusal counts in its window's audit event.
pub fn throttled(req: &HttpRequest, state: &AppState) -> Result<(), SignInThrottled> {
    let ip = crate::client_ip::client_ip(req);
    match state.throttle.admin_refused(ip, Instant::now()) {
        Some(refusal) => {
            tracing::debug!(
                kind = refusal.kind.as_str(),
                "admin or console call throttled"
            );
            Err(SignInThrottled(refusal))
        }
        None => Ok(()),
    }
}

/// Audits an admin call whose token nobody holds and counts it towards the address's throttle.
fn unknown_token(req: &HttpRequest, state: &AppState) {
    // A token nobody holds is named only by a digest of it.
    let who = bearer(req).map_or("unknown".to_owned(), crate::audit::unknown);
    let actor = Actor::operator(&who);
    denied(req, actor.clone());
    count_unknown_token(req, state, actor);
}

/// Counts a call with an unknown token (admin API or console) towards the address's throttle.
pub fn count_unknown_token(req: &HttpRequest, state: &AppState, actor: Actor) {
    let ip = crate::client_ip::client_ip(req);
    let route = req.match_pattern().unwrap_or_else(|| "unknown".to_owned());
    let denial = Denial {
        actor,
        action: "admin.access",
        target: Some(Target::new("route", &route)),
        ip,
    };
    state.throttle.admin_failed(ip, denial, Instant::now());
}

/// Audits a refused admin call (`admin.access`, `denied`): who tried which route, by its pattern, so the
/// event holds no id a path carries.
pub fn denied(req: &HttpRequest, actor: Actor) {
    let Some(state) = req.app_data::<web::Data<AppState>>() else {
        return;
    };
    let route = req.match_pattern().unwrap_or_else(|| "unknown".to_owned());
    let event = crate::audit::event(
        state,
        actor,
        "admin.access",
        Some(Target::new("route", &route)),
        "denied",
        crate::client_ip::client_ip(req),
    );
    state.store.audit_read(event);
}

macro_rules! role_extractor {
    ($(#[$doc:meta])* $name:ident, $roles:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name(pub Operator);

        impl FromRequest for $name {
            type Error = actix_web::Error;
            type Future = LocalBoxFuture<'static, Result<$name, actix_web::Error>>;

            fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
                let req = req.clone();
                async move { signed_in(&req, $roles).await.map($name) }.boxed_local()
            }
        }
    };
}

role_extractor! {
    /// An operator with the `admin` role: every call, changes included.
    Admin, &[Role::Admin]
}

role_extractor! {
    /// An operator who may read requests, deliveries and configuration: `admin` or `support`.
    Reader, &[Role::Admin, Role::Support]
}

role_extractor! {
    /// An operator who may read the audit log: `admin` or `auditor`.
    Auditor, &[Role::Admin, Role::Auditor]
}

role_extractor! {
    /// Any operator, whatever the role (the admin API's own document).
    AnyOperator, &[Role::Admin, Role::Support, Role::Auditor]
}

role_extractor! {
    /// An operator who may work tasks (claim, release, complete, give up): `admin` or `caller`.
    TaskWorker, &[Role::Admin, Role::Caller]
}

role_extractor! {
    /// An operator who may list and read tasks: `admin`, `support` or `caller`.
    TaskReader, &[Role::Admin, Role::Support, Role::Caller]
}
