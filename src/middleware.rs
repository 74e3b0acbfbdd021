//! The outer layer every request passes through: it refuses header fields over their limit, keeps the API
//! closed until start-up recovery is done, turns a panicking handler into a 500 envelope
//! (actix-web would otherwise drop the connection), and makes sure no error leaves in a framework's
//! plain-text or empty body.

use std::panic::AssertUnwindSafe;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::{Condition, DefaultHeaders};
use actix_web::{web, HttpResponse, ResponseError};
use futures::FutureExt;

use crate::errors::{ApiError, Code, MAX_HEADER_BYTES};
use crate::state::AppState;

/// The routes that answer while start-up recovery runs: the probes, the metrics, the documents and the
/// console's own files, none of which reads stored work. Every other route (the APIs, the platforms'
/// events, routes added later) waits for recovery.
fn open_before_ready(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics" | "/openapi.json")
        || (path.starts_with("/console") && !path.starts_with("/console/api"))
}

fn header_bytes(req: &ServiceRequest) -> usize {
    req.headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum()
}

/// How long a browser that saw one answer over TLS keeps using HTTPS for this host: a year, the usual
/// value. Subdomains are left out: they may be other services than this one.
const STRICT_TRANSPORT_SECURITY: &str = "max-age=31536000";

/// `Strict-Transport-Security` on every answer when the listener speaks TLS (`[server.tls]`), so a browser
/// that reached the console once over HTTPS never sends its token over plain HTTP to the same host. Without
/// TLS, HSTS is the business of whatever terminates TLS in front.
pub fn strict_transport_security(tls: bool) -> Condition<DefaultHeaders> {
    Condition::new(
        tls,
        DefaultHeaders::new().add((header::STRICT_TRANSPORT_SECURITY, STRICT_TRANSPORT_SECURITY)),
    )
}

/// Body of [`actix_web::App::wrap_fn`].
pub fn guard<S, B>(
    req: ServiceRequest,
    service: &S,
) -> impl std::future::Future<Output = Result<ServiceResponse<BoxBody>, actix_web::Error>>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody + 'static,
{
    let gated = req
        .app_data::<web::Data<AppState>>()
        .is_some_and(|state| !state.is_ready())
        && !open_before_ready(req.path());
    let header_bytes = header_bytes(&req);
    // The request is not cloned before the call: actix routing needs to own it uniquely. So a panic is
    // answered with an `Err`, which the dispatcher renders through `ApiError::error_response`.
    let call = if header_bytes > MAX_HEADER_BYTES {
        Err(req.into_response(
            ApiError::new(
                Code::RequestHeadersTooLarge,
                format!(
                    "Request header fields total {header_bytes} bytes; the limit is {MAX_HEADER_BYTES}"
                ),
            )
            .error_response(),
        ))
    } else if gated {
        Err(req.into_response(ApiError::not_ready(
            "Switchboard is starting; retry shortly",
        )))
    } else {
        Ok(std::panic::catch_unwind(AssertUnwindSafe(|| {
            service.call(req)
        })))
    };
    async move {
        let outcome = match call {
            Err(refused) => return Ok(refused),
            Ok(Err(panic)) => Err(panic),
            Ok(Ok(future)) => AssertUnwindSafe(future).catch_unwind().await,
        };
        match outcome {
            Ok(Ok(response)) => {
                let mut response = ensure_envelope(response.map_into_boxed_body());
                // Answers carry request data (reads, creates, recordings, the console's API): no cache
                // along the way or in the browser keeps a copy. The console's own files say otherwise.
                let headers = response.headers_mut();
                if !headers.contains_key(header::CACHE_CONTROL) {
                    headers.insert(
                        header::CACHE_CONTROL,
                        header::HeaderValue::from_static("no-store"),
                    );
                }
                Ok(response)
            }
            Ok(Err(error)) => Err(error),
            Err(panic) => {
                // Logged as the error's cause: only what the panic hook would log of it.
                let what = switchboard_actors::panic_text::loggable_message(&*panic);
                Err(ApiError::internal(anyhow::anyhow!("handler panicked: {what}")).into())
            }
        }
    }
}

/// Replaces a non-JSON error body (actix's 404/405/413 text, an empty body) with the standard envelope.
fn ensure_envelope(response: ServiceResponse<BoxBody>) -> ServiceResponse<BoxBody> {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return response;
    }
    let code = Code::for_status(status);
    let request = response.request();
    let message = match code {
        Code::NotFound => format!("No route matches {} {}", request.method(), request.path()),
        Code::MethodNotAllowed => format!(
            "Method {} is not allowed on {}",
            request.method(),
            request.path()
        ),
        Code::InternalError => "An unexpected error occurred; please retry the request.".to_owned(),
        _ => response
            .response()
            .error()
            .map(|e| e.to_string())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| {
                status
                    .canonical_reason()
                    .unwrap_or("Request failed")
                    .to_owned()
            }),
    };
    let allow = response.headers().get(header::ALLOW).cloned();
    let (request, _) = response.into_parts();
    let mut builder = HttpResponse::build(status);
    if let Some(allow) = allow {
        builder.insert_header((header::ALLOW, allow));
    }
    let body = ApiError::new(code, message).body();
    ServiceResponse::new(request, builder.json(body))
}
