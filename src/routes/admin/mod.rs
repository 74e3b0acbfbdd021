//! The operator's admin API (operator contract section 3), behind `server.admin_token`.

mod account_patch;
mod accounts;
mod audit;
mod backup_target;
mod backups;
mod clock;
mod deliveries;
mod faults;
mod operators;
mod orchestration;
mod payers;
mod redeliver;
mod requests;
mod schemas;

use std::ops::Deref;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures::future::LocalBoxFuture;
use serde::de::DeserializeOwned;

use super::resource;
use crate::configuration::specs::SpecError;
use crate::errors::ApiError;

pub(super) fn configure(cfg: &mut web::ServiceConfig, fault_injection: bool) {
    // Full paths rather than a scope: a resource then knows the whole pattern it serves (its metrics label).
    let admin = |path: &str| resource(&format!("/admin/v1{path}"));
    if fault_injection {
        cfg.service(admin("/faults/handler-panic").post(faults::handler_panic))
            .service(admin("/faults/actor-panic/{actor}").post(faults::actor_panic));
    }
    cfg.service(admin("/accounts").get(accounts::list_accounts))
        .service(
            admin("/accounts/{id}")
                .get(accounts::get_account)
                .put(accounts::put_account)
                .patch(account_patch::patch_account)
                .delete(accounts::delete_account),
        )
        .service(admin("/accounts/{id}/credentials").post(accounts::create_credential))
        .service(
            admin("/schemas/{id}")
                .get(schemas::get_schema)
                .put(schemas::put_schema)
                .delete(schemas::retire_schema),
        )
        .service(admin("/payers").get(payers::list_payers))
        .service(admin("/payers/{name}").put(payers::put_payer))
        .service(
            admin("/clock")
                .get(clock::get_clock)
                .post(clock::move_clock),
        )
        .service(admin("/webhook-deliveries").get(deliveries::list_deliveries))
        .service(admin("/webhook-deliveries/{requestId}/redeliver").post(redeliver::redeliver))
        .service(admin("/orchestration").get(orchestration::get_stats))
        .service(
            admin("/operators")
                .get(operators::list_operators)
                .post(operators::create_operator),
        )
        .service(admin("/operators/{name}").delete(operators::delete_operator))
        .service(admin("/backups").post(backups::create_backup))
        .service(admin("/requests/{requestId}").delete(requests::purge_request))
        .service(admin("/audit").get(audit::list_events))
        .service(admin("/audit/verify").get(audit::verify));
}

impl From<SpecError> for ApiError {
    fn from(e: SpecError) -> ApiError {
        ApiError::invalid_request(e.to_string())
    }
}

/// An admin request body. `web::Json` checks size, content type and syntax; the shape is then read with
/// the path of the offending key in the message (`features[0]: unknown variant ...`), as config-file
/// errors name theirs, since serde_json alone reports only a line and column.
pub struct AdminJson<T>(T);

impl<T> AdminJson<T> {
    /// The parsed body.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for AdminJson<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for AdminJson<T> {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<AdminJson<T>, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = web::Json::<serde_json::Value>::from_request(req, payload);
        Box::pin(async move {
            let value = json.await?.into_inner();
            serde_path_to_error::deserialize(value)
                .map(AdminJson)
                .map_err(|e| {
                    let path = e.path().to_string();
                    let problem = e.into_inner();
                    let message = if path == "." {
                        format!("Request body has the wrong shape: {problem}")
                    } else {
                        format!("{path}: {problem}")
                    };
                    ApiError::invalid_request(message).into()
                })
        })
    }
}
