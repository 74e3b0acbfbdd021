//! The operator's admin API (operator contract section 3), behind `server.admin_token`.

mod account_patch;
mod accounts;
mod audit;
mod backup_target;
mod backups;
mod clock;
mod deliveries;
mod document;
mod faults;
mod operators;
mod orchestration;
mod payer_stats;
mod payers;
mod redeliver;
mod requests;
mod schemas;
mod task_actions;
mod tasks;

use std::ops::Deref;

use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures::future::LocalBoxFuture;
use serde::de::DeserializeOwned;

use super::{resource, Access, Endpoint};
use crate::configuration::specs::SpecError;
use crate::errors::ApiError;

/// The admin API: every operation with the handler that serves it, the roles it is open to (its
/// handler's extractor enforces them; the tests check the two agree) and its documentation. The fault
/// routes exist only with `server.fault_injection`.
pub(crate) fn admin_api(fault_injection: bool) -> Vec<Endpoint> {
    use Access::Operator;
    const ADMIN: Access = Operator(&["admin"]);
    const READER: Access = Operator(&["admin", "support"]);
    const AUDITOR: Access = Operator(&["admin", "auditor"]);
    const TASK_READER: Access = Operator(&["admin", "support", "caller"]);
    const TASK_WORKER: Access = Operator(&["admin", "caller"]);
    let mut endpoints = vec![
        Endpoint::of::<accounts::__path_list_accounts>("Accounts", READER, || {
            web::route().to(accounts::list_accounts)
        }),
        Endpoint::of::<accounts::__path_get_account>("Accounts", READER, || {
            web::route().to(accounts::get_account)
        }),
        Endpoint::of::<accounts::__path_put_account>("Accounts", ADMIN, || {
            web::route().to(accounts::put_account)
        }),
        Endpoint::of::<account_patch::__path_patch_account>("Accounts", ADMIN, || {
            web::route().to(account_patch::patch_account)
        }),
        Endpoint::of::<accounts::__path_delete_account>("Accounts", ADMIN, || {
            web::route().to(accounts::delete_account)
        }),
        Endpoint::of::<accounts::__path_create_credential>("Accounts", ADMIN, || {
            web::route().to(accounts::create_credential)
        }),
        Endpoint::of::<schemas::__path_get_schema>("Schemas", READER, || {
            web::route().to(schemas::get_schema)
        }),
        Endpoint::of::<schemas::__path_put_schema>("Schemas", ADMIN, || {
            web::route().to(schemas::put_schema)
        }),
        Endpoint::of::<schemas::__path_retire_schema>("Schemas", ADMIN, || {
            web::route().to(schemas::retire_schema)
        }),
        Endpoint::of::<payers::__path_list_payers>("Payers", READER, || {
            web::route().to(payers::list_payers)
        }),
        Endpoint::of::<payers::__path_put_payer>("Payers", ADMIN, || {
            web::route().to(payers::put_payer)
        }),
        Endpoint::of::<payer_stats::__path_get_payer_stats>("Payers", READER, || {
            web::route().to(payer_stats::get_payer_stats)
        }),
        Endpoint::of::<clock::__path_get_clock>("Clock", READER, || {
            web::route().to(clock::get_clock)
        }),
        Endpoint::of::<clock::__path_move_clock>("Clock", ADMIN, || {
            web::route().to(clock::move_clock)
        }),
        Endpoint::of::<deliveries::__path_list_deliveries>("Webhooks", READER, || {
            web::route().to(deliveries::list_deliveries)
        }),
        Endpoint::of::<redeliver::__path_redeliver>("Webhooks", ADMIN, || {
            web::route().to(redeliver::redeliver)
        }),
        Endpoint::of::<orchestration::__path_get_stats>("Orchestration", READER, || {
            web::route().to(orchestration::get_stats)
        }),
        Endpoint::of::<operators::__path_list_operators>("Operators", ADMIN, || {
            web::route().to(operators::list_operators)
        }),
        Endpoint::of::<operators::__path_create_operator>("Operators", ADMIN, || {
            web::route().to(operators::create_operator)
        }),
        Endpoint::of::<operators::__path_delete_operator>("Operators", ADMIN, || {
            web::route().to(operators::delete_operator)
        }),
        Endpoint::of::<backups::__path_create_backup>("Backups", ADMIN, || {
            web::route().to(backups::create_backup)
        }),
        Endpoint::of::<requests::__path_purge_request>("Requests", ADMIN, || {
            web::route().to(requests::purge_request)
        }),
        Endpoint::of::<audit::__path_list_events>("Audit", AUDITOR, || {
            web::route().to(audit::list_events)
        }),
        Endpoint::of::<audit::__path_verify>("Audit", AUDITOR, || web::route().to(audit::verify)),
        Endpoint::of::<audit::__path_verify_checkpoints>("Audit", AUDITOR, || {
            web::route().to(audit::verify_checkpoints)
        }),
        Endpoint::of::<audit::__path_checkpoint>("Audit", AUDITOR, || {
            web::route().to(audit::checkpoint)
        }),
        Endpoint::of::<tasks::__path_list_tasks>("Tasks", TASK_READER, || {
            web::route().to(tasks::list_tasks)
        }),
        Endpoint::of::<tasks::__path_get_task>("Tasks", TASK_READER, || {
            web::route().to(tasks::get_task)
        }),
        Endpoint::of::<task_actions::__path_claim_task>("Tasks", TASK_WORKER, || {
            web::route().to(task_actions::claim_task)
        }),
        Endpoint::of::<task_actions::__path_release_task>("Tasks", TASK_WORKER, || {
            web::route().to(task_actions::release_task)
        }),
        Endpoint::of::<task_actions::__path_complete_task>("Tasks", TASK_WORKER, || {
            web::route().to(task_actions::complete_task)
        }),
        Endpoint::of::<task_actions::__path_give_up_task>("Tasks", TASK_WORKER, || {
            web::route().to(task_actions::give_up_task)
        }),
    ];
    if fault_injection {
        endpoints.extend([
            Endpoint::of::<faults::__path_handler_panic>("Faults", ADMIN, || {
                web::route().to(faults::handler_panic)
            }),
            Endpoint::of::<faults::__path_actor_panic>("Faults", ADMIN, || {
                web::route().to(faults::actor_panic)
            }),
        ]);
    }
    endpoints
}

/// Registers the admin API from its table (full paths rather than a scope: a resource then knows the
/// whole pattern it serves, its metrics label), and its document.
pub(super) fn configure(cfg: &mut web::ServiceConfig, fault_injection: bool) {
    cfg.service(resource(document::PATH).get(document::serve));
    super::table::register(cfg, &admin_api(fault_injection));
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
