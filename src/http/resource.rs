//! The router's own answers: 404 for an unmatched path, 405 for a wrong method on a known resource.

use actix_web::{web, HttpRequest, HttpResponse, Resource};

use crate::errors::{ApiError, Code};

/// The default service: no route matched.
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(
        Code::NotFound,
        format!("No route matches {} {}", req.method(), req.path()),
    ))
}

/// A resource whose unmatched methods answer 405. Without an explicit default, a resource inherits the
/// app's default service and a wrong method would look like a missing route.
pub fn resource(path: &str) -> Resource {
    web::resource(path).default_service(web::to(method_not_allowed))
}

async fn method_not_allowed(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(
        Code::MethodNotAllowed,
        format!("Method {} is not allowed on {}", req.method(), req.path()),
    ))
}
