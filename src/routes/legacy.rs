//! The legacy calls interface, past its 2026-10-01 sunset (service-interface 9.4): every route answers
//! 410 with the envelope naming its replacement, so old clients fail loudly and know where to go.

use actix_web::{web, HttpRequest, HttpResponse};

use crate::errors::{ApiError, Code};

/// Registers the legacy paths.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/calls", web::route().to(gone))
        .route("/v1/calls/{callId}", web::route().to(gone))
        .route("/v1/scripts", web::route().to(gone))
        .route(
            "/v1/scripts/{scriptId}/required-inputs",
            web::route().to(gone),
        )
        .route(
            "/v1/scripts/{scriptId}/required-payer-inputs",
            web::route().to(gone),
        );
}

async fn gone(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let path = req.path();
    let replacement = if path.starts_with("/v1/calls/") {
        "GET /v1/requests/{requestId}".to_owned()
    } else if path == "/v1/calls" {
        match *req.method() {
            actix_web::http::Method::POST => "POST /v1/requests".to_owned(),
            _ => "GET /v1/requests".to_owned(),
        }
    } else if path.ends_with("/required-payer-inputs") {
        "POST /v1/schemas/{schemaId}/required-payer-inputs".to_owned()
    } else if path.ends_with("/required-inputs") {
        "GET /v1/schemas/{schemaId}/required-inputs".to_owned()
    } else {
        "GET /v1/schemas".to_owned()
    };
    Err(ApiError::new(
        Code::Gone,
        format!(
            "{} {path} was retired on 2026-10-01; use {replacement} instead",
            req.method()
        ),
    ))
}
