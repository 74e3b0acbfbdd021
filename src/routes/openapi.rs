//! The OpenAPI 3.1 document of the client API (`GET /openapi.json`) and a readable reference page that
//! renders it (`GET /console/reference`). Both are hand-written files embedded at build time; the
//! `openapi` API test keeps the document and the registered routes in step.

use actix_web::http::header::{self, ContentType};
use actix_web::HttpResponse;

/// The document, as served.
const DOCUMENT: &str = include_str!("../openapi/openapi.json");

/// The self-contained reference page (no external assets).
const REFERENCE: &str = include_str!("../openapi/reference.html");

/// `GET /openapi.json`.
pub async fn document() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(DOCUMENT)
}

/// `GET /console/reference`.
pub async fn reference() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::html())
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; connect-src 'self'; script-src 'unsafe-inline'; \
             style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'",
        ))
        .body(REFERENCE)
}
