//! Logging through `tracing`. Initialised once, by the binary; tests keep their own (silent) setup.
//!
//! HTTP requests get their root span in `http_metrics::record`. It has no per-call `request_id`: in
//! Switchboard `request_id` means the extraction request's id, carried by the spans that work on one.
//!
//! With `[telemetry] otlp_endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`), [`Traces::start`] builds the OTLP/HTTP
//! exporter (posting through `export`'s client, over HTTP or HTTPS, its failures logged) and the tracer
//! provider, and the subscriber gets one more layer: `tracing-opentelemetry`, fed only the spans of
//! `switchboard_actors::telemetry::TARGET` (what the spans are is the actors' business). Without an
//! endpoint neither exists.
//!
//! Besides the subscriber, this module owns two promises of operator contract section 1: a panic is
//! written through the logger (so a JSON log stays JSON), and a client's malformed request is not logged
//! as a server error. And one of section 6: actix-web's own lines about a request it could not extract
//! (which quote the request's path, ids chosen by the client included) never reach the log, at any level.

mod export;

use std::io::IsTerminal;
use std::sync::Arc;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use switchboard_actors::telemetry::{FixedIds, SCOPE, TARGET as OTEL_TARGET};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, fmt::MakeWriter, EnvFilter, Layer};

use crate::configuration::{read_ca_file, TelemetrySettings};
use export::{ExportHealth, OtlpClient, WatchedExporter};

/// Replaces whatever `RUST_LOG` says of the PostgreSQL driver: at debug it logs every statement with its
/// parameters, and those are audit columns, ids chosen by clients and sealed values (operator contract
/// section 6). Its notices and errors still pass.
const QUIET_DATABASE_DRIVER: &str = "tokio_postgres=info";

/// The OpenTelemetry export of one process: the tracer provider behind the exported spans.
pub struct Traces {
    provider: SdkTracerProvider,
    health: Arc<ExportHealth>,
    /// Where spans go, as the log shows it.
    endpoint: String,
}

impl Traces {
    /// The exporter and provider for `settings`, or `None` without an endpoint. Call before any async
    /// runtime starts (the exporter's HTTP client is a blocking one, run on the batch processor's thread).
    pub fn start(settings: &TelemetrySettings) -> anyhow::Result<Option<Traces>> {
        let Some(url) = &settings.traces_url else {
            return Ok(None);
        };
        let endpoint = settings.shown_traces_url().unwrap_or_default();
        let authorities = match &settings.ca_file {
            Some(path) => read_ca_file(path).map_err(anyhow::Error::msg)?,
            None => Vec::new(),
        };
        let health = Arc::new(ExportHealth::new(endpoint.clone()));
        let client = OtlpClient::new(&authorities, health.clone())?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(client)
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_endpoint(url.as_str())
            .build()?;
        let resource = Resource::builder()
            .with_service_name(settings.service_name.clone())
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(WatchedExporter::new(exporter, health.clone()))
            .with_sampler(Sampler::AlwaysOn)
            .with_id_generator(FixedIds::default())
            .with_resource(resource)
            .build();
        opentelemetry::global::set_tracer_provider(provider.clone());
        switchboard_actors::telemetry::enable();
        Ok(Some(Traces {
            provider,
            health,
            endpoint,
        }))
    }

    /// Sends the spans still queued; at a graceful stop.
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error.message = %e, "traces not all exported at shutdown");
        }
        self.health.report_unreported();
    }
}

/// Installs the global subscriber: `RUST_LOG` filtering (default `info`), text or JSON lines
/// (`SWITCHBOARD_LOG_FORMAT=json`), written to `writer`; then routes panics through it.
pub fn init_subscriber<W>(writer: W)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    init_subscriber_with(writer, None)
}

/// [`init_subscriber`], exporting the spans of requests through `traces` when given.
pub fn init_subscriber_with<W>(writer: W, traces: Option<&Traces>)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,actix_server=warn"))
        .add_directive(QUIET_DATABASE_DRIVER.parse().expect("a valid directive"));
    // The exported spans pass whatever `RUST_LOG` says; the lines below never show them.
    let (filter, otel, lines_filter) = match traces {
        Some(traces) => {
            let directive = format!("{OTEL_TARGET}=info")
                .parse()
                .expect("a valid directive");
            let layer = tracing_opentelemetry::layer()
                .with_tracer(traces.provider.tracer(SCOPE))
                // No `target` attribute: every exported span has the same one, `switchboard::otel`.
                .with_target(false)
                .with_location(false)
                .with_threads(false)
                .with_tracked_inactivity(false)
                .with_filter(Targets::new().with_target(OTEL_TARGET, Level::TRACE));
            let lines_filter = Targets::new()
                .with_default(Level::TRACE)
                .with_target(OTEL_TARGET, LevelFilter::OFF);
            (
                filter.add_directive(directive),
                Some(layer),
                Some(lines_filter),
            )
        }
        None => (filter, None, None),
    };
    // Colour codes only for a person at a terminal (operator contract section 1): in a file or a log
    // collector they are noise, and they split a line where someone greps it.
    let lines = fmt::layer()
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    let lines = if json_lines_wanted() {
        lines.json().with_filter(lines_filter).boxed()
    } else {
        lines.with_filter(lines_filter).boxed()
    };
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(ClientStreamErrors)
        .with(ExtractorPaths)
        .with(lines)
        .with(otel)
        .try_init();
    // A second init (tests, embedding) keeps the first subscriber, and the panic hook that goes with it.
    if installed.is_ok() {
        std::panic::set_hook(Box::new(crate::panic_log::log_panic));
    }
    if let Some(traces) = traces {
        tracing::info!(
            endpoint = %traces.endpoint,
            "traces are on: spans are posted over OTLP/HTTP to {}",
            traces.endpoint
        );
    }
}

/// Whether the log is JSON lines (`SWITCHBOARD_LOG_FORMAT=json`).
fn json_lines_wanted() -> bool {
    std::env::var("SWITCHBOARD_LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"))
}

/// Writes the message a failed start or run ends on to stderr: as it stands, or with JSON lines as one
/// `ERROR` line shaped like the log's, so every line stays JSON (operator contract section 1) also when
/// the failure comes before the log is set up (a configuration error) or after it stopped.
pub fn report_fatal(message: &str) {
    if !json_lines_wanted() {
        eprintln!("{message}");
        return;
    }
    // A log line's time is the wall's, as the subscriber's own lines are, not the service clock's.
    let now = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now());
    let line = serde_json::json!({
        "timestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "level": "ERROR",
        "fields": { "message": message },
    });
    eprintln!("{line}");
}

/// Drops actix-http's `ERROR stream error: ...` event. The HTTP/1 dispatcher logs it when a client sends
/// bytes that are not HTTP (a header with a NUL byte, a garbled request line) and closes that connection
/// with a 400: the client's mistake, which must not page the operator as a server error. The message
/// names only the kind of parse error, so nothing useful is lost with it.
struct ClientStreamErrors;

/// The module that logs the client's stream errors.
const HTTP1_DISPATCHER: &str = "actix_http::h1::dispatcher";

impl<S: Subscriber> Layer<S> for ClientStreamErrors {
    fn event_enabled(&self, event: &Event<'_>, _: Context<'_, S>) -> bool {
        let metadata = event.metadata();
        if metadata.target() != HTTP1_DISPATCHER || *metadata.level() != Level::ERROR {
            return true;
        }
        let mut message = MessageStart::default();
        event.record(&mut message);
        !message.0.starts_with("stream error")
    }
}

/// Drops actix-web's `debug` lines about a request whose path, query or body it could not extract
/// ("Failed to deserialize Json from payload. Request path: /v1/schemas/{what the client wrote}/..."):
/// the path carries ids the client chose, before anything checked them, and a client can put anything
/// there. The envelope error handlers (`errors::extractors`) log the refusal by route pattern instead.
struct ExtractorPaths;

/// The actix-web modules whose lines quote the request's path or an extracted value.
const EXTRACTOR_MODULES: [&str; 5] = [
    "actix_web::types",
    "actix_web::request_data",
    "actix_web::data",
    "actix_web::thin_data",
    "actix_web::extract",
];

/// `enabled`, not `event_enabled`: actix-web writes through the `log` crate, and the bridge from `log`
/// asks `enabled` with the record's own target, where the events it then sends all name the target `log`.
/// Disabled here, they are disabled for every layer.
impl<S: Subscriber> Layer<S> for ExtractorPaths {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        let target = metadata.target();
        !EXTRACTOR_MODULES.iter().any(|module| {
            target
                .strip_prefix(module)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
        })
    }
}

/// The first characters of an event's message, enough to tell which message it is.
#[derive(Default)]
struct MessageStart(String);

impl tracing::field::Visit for MessageStart {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let text = format!("{value:?}");
            self.0 = text.chars().take(32).collect();
        }
    }
}
