//! Who is calling is settled before a handler's extractors run. actix-web polls a handler's extractors
//! together and answers with the first error to arrive, so when the caller has to be read from the
//! database (PostgreSQL, or an account not kept in memory) a malformed body would be answered 400 before a
//! role's 403 or a revoked token's 401 (service interface: authentication is checked first). The lookup
//! is awaited here, once, and the extractors take its answer from the request.

use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage};
use switchboard_storage::{AccountRecord, EngineChoice};

use super::admin::{bearer, look_up_operator, Operator};
use crate::errors::AdminUnauthorized;
use crate::state::AppState;

/// The operator a bearer token named (or none, or a failed lookup), looked up before the handler.
#[derive(Clone)]
pub(super) struct OperatorLookedUp(pub Result<Option<Operator>, AdminUnauthorized>);

/// The account a client token's subject names, read before the handler.
#[derive(Clone)]
pub(super) struct AccountRead {
    pub id: String,
    pub account: Arc<AccountRecord>,
}

/// Paths whose bearer token is an operator's (the console takes both kinds).
fn operator_paths(path: &str) -> bool {
    path.starts_with("/admin/") || path.starts_with("/console/")
}

/// The middleware: reads the caller named by the bearer token, if any, before the handler runs.
pub async fn identity_first(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    // On sled every read the extractors make is answered at their first poll, so nothing races: the
    // token is checked once, by the extractor, as on the hot path it always was.
    let reads_wait = req
        .app_data::<web::Data<AppState>>()
        .is_some_and(|state| state.settings.storage_engine != EngineChoice::Sled);
    // A clone of the request, dropped before the handler: the router needs the request to itself.
    let http = req.request().clone();
    if reads_wait && bearer(&http).is_some() {
        if operator_paths(http.path()) {
            let looked_up = look_up_operator(&http).await;
            req.extensions_mut().insert(OperatorLookedUp(looked_up));
        }
        if http.path().starts_with("/v1/") || http.path().starts_with("/console/") {
            if let Some(read) = super::caller::read_account_ahead(&http).await {
                req.extensions_mut().insert(read);
            }
        }
    }
    drop(http);
    next.call(req).await
}

/// [`identity_first`] for a node standing by, which answers only reads itself: what it forwards is
/// authenticated by the node that answers it, so nothing is read for it here.
pub async fn identity_first_on_reads(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<actix_web::body::BoxBody>, actix_web::Error> {
    let method = req.method();
    if method == actix_web::http::Method::GET || method == actix_web::http::Method::HEAD {
        Ok(identity_first(req, next).await?.map_into_boxed_body())
    } else {
        Ok(next.call(req).await?.map_into_boxed_body())
    }
}
