//! Every route, registered in one place.

mod admin;
mod agent;
mod auth;
mod dialers;
mod fallback;
mod health;
mod legacy;
mod metrics;
mod openapi;
mod recordings;
pub(crate) mod requests;
pub(crate) mod schemas;

use actix_web::web;

pub use fallback::not_found;
pub(crate) use fallback::resource;

/// Registers the client API, the probes and, when an admin token is configured, the admin API.
pub fn configure(cfg: &mut web::ServiceConfig, admin_enabled: bool, fault_injection: bool) {
    cfg.service(resource("/healthz").get(health::healthz))
        .service(resource("/readyz").get(health::readyz))
        .service(resource("/v1/auth").get(auth::get_token))
        .service(resource("/v1/schemas").get(schemas::list::list_schemas))
        // `[^/]*` rather than the default `[^/]+`, so an empty id reaches the handler and gets the spec's
        // 400 instead of a route-level 404.
        .service(resource("/v1/schemas/{schemaId:[^/]*}").get(schemas::get::get_schema))
        .service(
            resource("/v1/schemas/{schemaId:[^/]*}/required-inputs")
                .get(schemas::required_inputs::get_required_inputs),
        )
        .service(
            resource("/v1/schemas/{schemaId:[^/]*}/required-payer-inputs")
                .post(schemas::required_payer_inputs::required_payer_inputs),
        )
        .service(
            resource("/v1/requests")
                .get(requests::list::list_requests)
                .post(requests::create::create_requests),
        )
        .service(resource("/v1/requests/{requestId}").get(requests::get::get_request))
        .service(resource("/v1/recordings/{callId}").get(recordings::download))
        .service(resource("/agent/v1/calls/{callId}/outcome").post(agent::report_outcome))
        .service(resource("/dialers/retell/events").post(dialers::retell::events))
        .service(resource("/dialers/vapi/events").post(dialers::vapi::events));
    cfg.service(resource("/openapi.json").get(openapi::document));
    cfg.service(resource("/console/reference").get(openapi::reference));
    crate::console::configure(cfg);
    cfg.service(resource("/metrics").get(metrics::metrics));
    legacy::configure(cfg);
    if admin_enabled {
        admin::configure(cfg, fault_injection);
    }
}
