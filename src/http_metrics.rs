//! The outermost layer: every HTTP request runs inside its root span (`http`, with method, route and
//! status), ends with one `info` line (method, route, status, latency), and is counted and timed for
//! `/metrics`, labelled by the matched route pattern (never the raw path, whose ids would make a series
//! per request) and the final status. The metric definitions live in
//! `switchboard_actors::metrics`.
//!
//! One layer for both, so the route pattern is looked up once per request (the lookup walks the resource
//! map and allocates) and no per-chunk span wraps the response body.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::{Method, StatusCode};
use actix_web::web;
use switchboard_actors::metrics::UNMATCHED_ROUTE;

use tracing::field::Empty;
use tracing::Instrument;

use crate::http::{route_label, RoutePattern};
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
    let method = method_label(req.method());
    let span = tracing::info_span!("http", method, route = Empty, status = Empty);
    let response = span.in_scope(|| service.call(req));
    async move {
        let response = response.await;
        let status = match &response {
            Ok(response) => response.status(),
            Err(error) => error.as_response_error().status_code(),
        };
        let pattern = response
            .as_ref()
            .ok()
            .and_then(|response| response.request().app_data::<RoutePattern>());
        let route = match (pattern, &response) {
            (Some(pattern), _) => std::borrow::Cow::Borrowed(pattern.pattern.as_str()),
            (None, Ok(response)) => route_label(response.request()),
            (None, Err(_)) => UNMATCHED_ROUTE.into(),
        };
        let span = tracing::Span::current();
        span.record("route", &*route);
        span.record("status", status.as_u16());
        let elapsed = started.elapsed();
        log_answer(status, elapsed);
        match (metrics, pattern) {
            (Some(metrics), Some(pattern)) => {
                pattern.observe(&metrics, method, status.as_u16(), elapsed)
            }
            (Some(metrics), None) => metrics.http_request(method, &route, status.as_u16(), elapsed),
            (None, _) => {}
        }
        response
    }
    .instrument(span)
}

/// The one `info` line every HTTP request gets (operator contract section 1), with a message of its own:
/// "request finished" is an extraction request's. A server error also gets a warning of its own, so a
/// level filter finds it; a 503 does not, since it is what `/readyz` and the closed API answer while the
/// server starts, and what a client is told to retry. Method, route and status are the fields of the
/// `http` span the lines are written in.
fn log_answer(status: StatusCode, latency: Duration) {
    let latency_ms = latency.as_micros() as f64 / 1000.0;
    tracing::info!(latency_ms, "http request answered");
    if status.is_server_error() && status != StatusCode::SERVICE_UNAVAILABLE {
        tracing::warn!("server error answered");
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
