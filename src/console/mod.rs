//! The console: a browser UI at `/console` for watching requests move and tracing every answer to the
//! call, step and schema behind it, plus the JSON endpoints under `/console/api/` that back it.
//!
//! The UI is plain HTML, CSS and JavaScript modules embedded in the binary ([`assets`]); there is no build
//! step and nothing is fetched from elsewhere. Its reads go through `/console/api/*`, which accept either
//! an API bearer token or the admin token with an account and environment ([`ConsoleScope`]); creating a
//! request goes through the client API itself (`/v1/schemas`, `/v1/requests`), exactly as a client would.
//! The `/console/api/*` endpoints serve this UI only and are not part of the client API or its document.

mod assets;
mod detail;
mod electronic;
mod list;
mod out;
mod schedule;
mod scope;
mod voice;

use actix_web::{web, HttpRequest, HttpResponse};

pub use scope::ConsoleScope;

use crate::errors::ApiError;
use crate::http::resource;
use crate::state::AppState;
use out::{ConfigOut, SessionOut};

/// Registers the console's pages, assets and JSON endpoints.
pub fn configure(cfg: &mut web::ServiceConfig) {
    configure_reads(cfg, None);
    cfg.service(resource("/console/api/requests/{requestId}/voice").get(voice::get_voice));
}

/// The console's pages, assets and the JSON endpoints that read the store alone: all but the voice view,
/// which shows the calls the node that runs them holds in memory. `otherwise` answers the other methods
/// of their paths (a standby forwards them); 405 without it.
pub fn configure_reads(cfg: &mut web::ServiceConfig, otherwise: Option<fn() -> actix_web::Route>) {
    let served = |served: crate::http::ServedResource| served.otherwise(otherwise);
    cfg.service(served(resource("/console").get(index)))
        .service(served(resource("/console/").get(index)))
        .service(served(resource("/console/config.json").get(config)))
        .service(served(resource("/console/api/session").get(session)))
        .service(served(
            resource("/console/api/requests").get(list::list_requests),
        ))
        .service(served(
            resource("/console/api/requests/{requestId}").get(detail::get_request),
        ))
        .service(served(
            resource("/console/api/schedule").get(schedule::get_schedule),
        ));
    for asset in assets::ASSETS {
        let path = format!("/console/{}", asset.name);
        cfg.service(served(resource(&path).get(
            move |req: HttpRequest| async move { assets::serve(&req, asset) },
        )));
    }
}

async fn index(req: HttpRequest) -> HttpResponse {
    assets::serve(
        &req,
        assets::find("index.html").expect("index.html is embedded"),
    )
}

/// `GET /console/config.json`: what the sign-in page needs before anyone has signed in. The auth header
/// word names the `/v1/auth` headers (`{word}-API-Key`, `{word}-API-Secret`).
async fn config(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-cache"))
        .json(ConfigOut {
            product_word: state.product_word(),
            auth_header_word: state.auth_header_word(),
            admin_enabled: state.settings.server.admin_token.is_some(),
        })
}

/// `GET /console/api/session`: who the console is signed in as.
async fn session(scope: ConsoleScope) -> Result<HttpResponse, ApiError> {
    let account = &scope.account;
    Ok(HttpResponse::Ok().json(SessionOut {
        account_id: &account.id,
        account_name: &account.name,
        environment: scope.environment.as_str(),
        sign_in: scope.sign_in.as_str(),
        signed_in_as: &scope.actor.id,
        role: scope.role.map(|role| role.as_str()),
        timezone: &account.timezone,
        daily_call_capacity: account.daily_call_capacity,
        features: account.features.iter().map(|f| f.as_str()).collect(),
        schemas: &account.schemas,
    }))
}
