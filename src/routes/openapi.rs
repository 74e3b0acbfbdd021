//! `GET /openapi.json`, the OpenAPI 3.1 document of the client API as this deployment serves it, and
//! `GET /console/reference`, a readable page that renders it. The document is derived at start-up
//! (`crate::openapi`) and handed over as app data.

use actix_web::http::header::{self, ContentType};
use actix_web::web::{self, Bytes};
use actix_web::HttpResponse;

/// The served document, rendered once at start-up.
pub struct ApiDocument(pub Bytes);

/// The self-contained reference page (no external assets).
const REFERENCE: &str = include_str!("../openapi/reference.html");

/// `GET /openapi.json`.
pub async fn document(document: web::Data<ApiDocument>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(document.0.clone())
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
