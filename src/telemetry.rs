//! Logging through `tracing`. Initialised once, by the binary; tests keep their own (silent) setup.
//!
//! HTTP requests get their root span in `http_metrics::record`. It has no per-call `request_id`: in
//! Switchboard `request_id` means the extraction request's id, carried by the spans that work on one.

use std::io::IsTerminal;

use tracing_subscriber::{fmt::MakeWriter, EnvFilter};

/// Installs the global subscriber: `RUST_LOG` filtering (default `info`), text or JSON lines
/// (`SWITCHBOARD_LOG_FORMAT=json`), written to `writer`.
pub fn init_subscriber<W>(writer: W)
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,actix_server=warn"));
    // Colour codes only for a person at a terminal (operator contract section 1): in a file or a log
    // collector they are noise, and they split a line where someone greps it.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::stderr().is_terminal())
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
