//! Logging through `tracing`. Initialised once, by the binary; tests keep their own (silent) setup.
//!
//! HTTP requests get their root span in `http_metrics::record`. It has no per-call `request_id`: in
//! Switchboard `request_id` means the extraction request's id, carried by the spans that work on one.
//!
//! Besides the subscriber, this module owns two promises of operator contract section 1: a panic is
//! written through the logger (so a JSON log stays JSON), and a client's malformed request is not logged
//! as a server error.

use std::io::IsTerminal;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, fmt::MakeWriter, EnvFilter, Layer};

/// Installs the global subscriber: `RUST_LOG` filtering (default `info`), text or JSON lines
/// (`SWITCHBOARD_LOG_FORMAT=json`), written to `writer`; then routes panics through it.
pub fn init_subscriber<W>(writer: W)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,actix_server=warn"));
    // Colour codes only for a person at a terminal (operator contract section 1): in a file or a log
    // collector they are noise, and they split a line where someone greps it.
    let lines = fmt::layer()
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    let json =
        std::env::var("SWITCHBOARD_LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"));
    let lines = if json {
        lines.json().boxed()
    } else {
        lines.boxed()
    };
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(ClientStreamErrors)
        .with(lines)
        .try_init();
    // A second init (tests, embedding) keeps the first subscriber, and the panic hook that goes with it.
    if installed.is_ok() {
        std::panic::set_hook(Box::new(log_panic));
    }
}

/// The panic hook: one `error` event with the message, where it happened and, when `RUST_BACKTRACE`
/// asks for one, the backtrace as a field. The default hook writes plain text to stderr, which breaks
/// a JSON log into lines no collector can parse.
fn log_panic(info: &std::panic::PanicHookInfo<'_>) {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic without a message)");
    let location = info
        .location()
        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let thread = std::thread::current();
    let thread = thread.name().unwrap_or("unnamed");
    let backtrace = std::backtrace::Backtrace::capture();
    if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
        tracing::error!(
            panic.message = message,
            panic.location = %location,
            thread,
            backtrace = %backtrace,
            "a thread panicked"
        );
    } else {
        tracing::error!(
            panic.message = message,
            panic.location = %location,
            thread,
            "a thread panicked"
        );
    }
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
