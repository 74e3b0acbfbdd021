//! The route tables of the client API and the admin API: each operation pairs its handler with the
//! `#[utoipa::path]` that documents it. The router and the OpenAPI document are both built from a table,
//! so an operation can be neither routed without being documented nor documented without being routed.

use actix_web::http::Method;
use actix_web::{web, Route};
use utoipa::openapi::path::{HttpMethod, Operation};

use crate::http::resource;

/// Who may call an operation, as the document declares it (the handler's extractors enforce it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// No credentials (probes, signed links).
    Open,
    /// The API key and secret headers (`/v1/auth` only).
    Credentials,
    /// A bearer token from `/v1/auth`.
    Bearer,
    /// An operator token of one of these roles (the admin API; the handler's role extractor enforces it).
    Operator(&'static [&'static str]),
}

/// One operation of the client API.
pub struct Endpoint {
    /// The documented path, `{name}` for each parameter.
    pub path: String,
    /// The method it answers.
    pub method: HttpMethod,
    /// Who may call it.
    pub access: Access,
    /// The document's group.
    pub tag: &'static str,
    /// Its documentation, from the handler's `#[utoipa::path]`.
    pub operation: Operation,
    handler: fn() -> Route,
}

impl Endpoint {
    /// The operation documented by `P`, served by `handler` (a route without a method guard: the
    /// documented method becomes the guard).
    pub fn of<P: utoipa::Path>(
        tag: &'static str,
        access: Access,
        handler: fn() -> Route,
    ) -> Endpoint {
        let mut methods = P::methods();
        assert_eq!(methods.len(), 1, "{} documents one method", P::path());
        Endpoint {
            path: P::path(),
            method: methods.remove(0),
            access,
            tag,
            operation: P::operation(),
            handler,
        }
    }

    /// The actix pattern of the path. A `schemaId` may be an empty segment, so the handler can answer the
    /// spec's 400 instead of a route-level 404.
    fn pattern(&self) -> String {
        self.path.replace("{schemaId}", "{schemaId:[^/]*}")
    }
}

fn actix_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Trace => Method::TRACE,
    }
}

/// Registers the endpoints, one resource per path with every method it answers: a GET also answers HEAD,
/// and other methods get 405 with `Allow` naming those served.
pub fn register(cfg: &mut web::ServiceConfig, endpoints: &[Endpoint]) {
    register_otherwise(cfg, endpoints, None);
}

/// [`register`], the methods a path does not serve answered by `otherwise` rather than 405.
pub fn register_otherwise(
    cfg: &mut web::ServiceConfig,
    endpoints: &[Endpoint],
    otherwise: Option<fn() -> Route>,
) {
    let mut paths: Vec<&str> = Vec::new();
    for endpoint in endpoints {
        if !paths.contains(&endpoint.path.as_str()) {
            paths.push(&endpoint.path);
        }
    }
    for path in paths {
        let mut methods = endpoints.iter().filter(|e| e.path == path).peekable();
        let pattern = methods.peek().expect("a path has an endpoint").pattern();
        let resource = methods.fold(resource(&pattern), |resource, endpoint| {
            resource.route(actix_method(&endpoint.method), endpoint.handler)
        });
        cfg.service(resource.otherwise(otherwise));
    }
}
