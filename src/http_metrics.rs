//! Counts and times every HTTP request for `/metrics`, labelled by the matched route pattern (never the raw
//! path, whose ids would make a series per request) and the final status. The metric definitions live in
//! `switchboard_actors::metrics`.

use std::sync::Arc;
use std::time::Instant;

use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::web;
use switchboard_actors::metrics::UNMATCHED_ROUTE;

use crate::state::AppState;

/// Body of [`actix_web::App::wrap_fn`]. Wraps the guard, so a panic or a not-ready refusal is counted with
/// the status the client gets.
pub fn record<S, B>(
    req: ServiceRequest,
    service: &S,
) -> impl std::future::Future<Output = Result<ServiceResponse<B>, actix_web::Error>>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    let started = Instant::now();
    let metrics = req
        .app_data::<web::Data<AppState>>()
        .map(|state| Arc::clone(&state.metrics));
    let route = req
        .match_pattern()
        .unwrap_or_else(|| UNMATCHED_ROUTE.to_owned());
    let method = method_label(req.method());
    let response = service.call(req);
    async move {
        let response = response.await;
        if let Some(metrics) = metrics {
            let status = match &response {
                Ok(response) => response.status(),
                Err(error) => error.as_response_error().status_code(),
            };
            metrics.http_request(method, &route, status.as_u16(), started.elapsed());
        }
        response
    }
}

/// The method as a label; extension methods share one value so a client cannot mint series.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}
