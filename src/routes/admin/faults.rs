//! Deliberate failures, registered only with `server.fault_injection = true`, so tests and operators can
//! check that one failing piece never takes the server down.

use actix_web::HttpResponse;

use crate::auth::Admin;

/// `POST /admin/v1/faults/handler-panic`: panics inside a handler. The answer must be a 500 envelope and
/// the server must keep serving.
pub async fn handler_panic(_: Admin) -> HttpResponse {
    panic!("fault injection: handler panic requested through the admin API");
}
