//! Every route, registered in one place: the client API from its route table (`client_api`), which the
//! OpenAPI document is derived from too, then the routes outside the client API.

mod admin;
mod agent;
mod auth;
mod dialers;
mod health;
mod legacy;
mod metrics;
mod openapi;
mod recordings;
pub(crate) mod requests;
pub(crate) mod schemas;
mod table;

use actix_web::web;

pub use crate::http::not_found;
use crate::http::resource;
pub use health::healthz;
pub(crate) use legacy::RETIRED;
pub use openapi::ApiDocument;
pub(crate) use table::{Access, Endpoint};

/// The client API: every operation with the handler that serves it and the documentation it carries.
/// actix tries resources in the order they are registered, running the regex of each parameterized
/// path on the way, so the request routes (the busiest) come before the schema routes.
pub(crate) fn client_api() -> Vec<Endpoint> {
    use Access::{Bearer, Credentials, Open};
    vec![
        Endpoint::of::<health::__path_healthz>("Health", Open, || web::route().to(health::healthz)),
        Endpoint::of::<health::__path_readyz>("Health", Open, || web::route().to(health::readyz)),
        Endpoint::of::<auth::__path_get_token>("Authentication", Credentials, || {
            web::route().to(auth::get_token)
        }),
        Endpoint::of::<requests::list::__path_list_requests>("Requests", Bearer, || {
            web::route().to(requests::list::list_requests)
        }),
        Endpoint::of::<requests::create::__path_create_requests>("Requests", Bearer, || {
            web::route().to(requests::create::create_requests)
        }),
        Endpoint::of::<requests::get::__path_get_request>("Requests", Bearer, || {
            web::route().to(requests::get::get_request)
        }),
        Endpoint::of::<schemas::list::__path_list_schemas>("Schemas", Bearer, || {
            web::route().to(schemas::list::list_schemas)
        }),
        Endpoint::of::<schemas::get::__path_get_schema>("Schemas", Bearer, || {
            web::route().to(schemas::get::get_schema)
        }),
        Endpoint::of::<schemas::required_inputs::__path_get_required_inputs>(
            "Schemas",
            Bearer,
            || web::route().to(schemas::required_inputs::get_required_inputs),
        ),
        Endpoint::of::<schemas::required_payer_inputs::__path_required_payer_inputs>(
            "Schemas",
            Bearer,
            || web::route().to(schemas::required_payer_inputs::required_payer_inputs),
        ),
        Endpoint::of::<recordings::__path_download>("Recordings", Open, || {
            web::route().to(recordings::download)
        }),
    ]
}

/// What a node standing by on a shared database serves itself: the client API's reads (the token exchange,
/// requests, schemas, recordings) and the console's, with the same handlers as the full server. The
/// probes are the standby's own, and `otherwise` answers everything else on these paths (their writes).
pub fn configure_reads(cfg: &mut web::ServiceConfig, otherwise: fn() -> actix_web::Route) {
    let reads: Vec<Endpoint> = client_api()
        .into_iter()
        .filter(|endpoint| {
            endpoint.method == utoipa::openapi::path::HttpMethod::Get && endpoint.tag != "Health"
        })
        .collect();
    table::register_otherwise(cfg, &reads, Some(otherwise));
    crate::console::configure_reads(cfg, Some(otherwise));
}

/// Registers the client API, the probes, the retired interface and, when an admin token is configured,
/// the admin API.
pub fn configure(cfg: &mut web::ServiceConfig, admin_enabled: bool, fault_injection: bool) {
    table::register(cfg, &client_api());
    cfg.service(resource("/agent/v1/calls/{callId}/outcome").post(agent::report_outcome))
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
