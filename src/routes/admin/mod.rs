//! The operator's admin API (operator contract section 3), behind `server.admin_token`.

mod accounts;
mod clock;
mod deliveries;
mod faults;
mod payers;
mod schemas;

use actix_web::web;

use super::resource;
use crate::configuration::specs::SpecError;
use crate::errors::ApiError;

pub(super) fn configure(cfg: &mut web::ServiceConfig, fault_injection: bool) {
    let mut scope = web::scope("/admin/v1");
    if fault_injection {
        scope = scope.service(resource("/faults/handler-panic").post(faults::handler_panic));
    }
    cfg.service(
        scope
            .service(resource("/accounts").get(accounts::list_accounts))
            .service(
                resource("/accounts/{id}")
                    .get(accounts::get_account)
                    .put(accounts::put_account)
                    .delete(accounts::delete_account),
            )
            .service(resource("/accounts/{id}/credentials").post(accounts::create_credential))
            .service(
                resource("/schemas/{id}")
                    .get(schemas::get_schema)
                    .put(schemas::put_schema)
                    .delete(schemas::retire_schema),
            )
            .service(resource("/payers").get(payers::list_payers))
            .service(resource("/payers/{name}").put(payers::put_payer))
            .service(
                resource("/clock")
                    .get(clock::get_clock)
                    .post(clock::move_clock),
            )
            .service(resource("/webhook-deliveries").get(deliveries::list_deliveries)),
    );
}

impl From<SpecError> for ApiError {
    fn from(e: SpecError) -> ApiError {
        ApiError::invalid_request(e.to_string())
    }
}
