//! Logging through `tracing`. Initialised once, by the binary; tests keep their own (silent) setup.
//!
//! HTTP requests get a root span of our own rather than tracing-actix-web's default, whose `request_id`
//! field is a per-HTTP-call UUID: in Switchboard `request_id` means the extraction request's id and is
//! recorded on the span once a handler knows it.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use tracing::field::Empty;
use tracing::Span;
use tracing_actix_web::RootSpanBuilder;
use tracing_subscriber::{fmt::MakeWriter, EnvFilter};

/// Installs the global subscriber: `RUST_LOG` filtering (default `info`), text or JSON lines
/// (`SWITCHBOARD_LOG_FORMAT=json`), written to `writer`.
pub fn init_subscriber<W>(writer: W)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,actix_server=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_target(false);
    let json =
        std::env::var("SWITCHBOARD_LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"));
    // A second init (tests, embedding) keeps the first subscriber.
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Root span of every HTTP request.
pub struct SwitchboardRootSpan;

impl RootSpanBuilder for SwitchboardRootSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let route = request
            .match_pattern()
            .unwrap_or_else(|| "unmatched".to_owned());
        tracing::info_span!(
            "http",
            method = %request.method(),
            route = %route,
            status = Empty,
            request_id = Empty,
        )
    }

    fn on_request_end<B: MessageBody>(
        span: Span,
        outcome: &Result<ServiceResponse<B>, actix_web::Error>,
    ) {
        let status = match outcome {
            Ok(response) => response.status(),
            Err(error) => error.as_response_error().status_code(),
        };
        span.record("status", status.as_u16());
        span.in_scope(|| {
            if status.is_server_error() {
                tracing::warn!(status = status.as_u16(), "request failed");
            } else {
                tracing::debug!(status = status.as_u16(), "request finished");
            }
        });
    }
}
