//! How spans leave the process: the HTTP client the OTLP exporter posts with, and a wrapper around the
//! exporter that tells the operator when batches do not arrive.
//!
//! The exporter itself reports a failed batch only through the result of `export` (and, with the
//! `internal-logs` feature this build leaves off, through opentelemetry's own debug events), and a
//! connection failure reaches that result as "network error" without its cause. So the client notes the
//! cause of each transport failure and [`WatchedExporter`] logs the result, at most one warning a minute.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use rustls_pki_types::CertificateDer;

/// How long one post may take, connection included (the exporter's own default).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may take: a collector that does not answer fails its batch before the next one.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The most of a collector's answer read (its body is a small protobuf message, or an error text).
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;
/// At most one warning about failed exports in this long; the next one counts the failures between.
pub(super) const WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// The exporter's HTTP client: reqwest's blocking client (the batch processor posts from its own thread,
/// outside any runtime) on the rustls + ring stack the rest of the server uses, trusting the public roots
/// and any `[telemetry] ca_file` authority.
#[derive(Debug)]
pub(super) struct OtlpClient {
    client: reqwest::blocking::Client,
    health: Arc<ExportHealth>,
}

impl OtlpClient {
    /// Builds the client; call outside any async runtime (the blocking client runs one of its own).
    pub(super) fn new(
        authorities: &[CertificateDer<'static>],
        health: Arc<ExportHealth>,
    ) -> anyhow::Result<OtlpClient> {
        let mut builder = reqwest::blocking::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT);
        for authority in authorities {
            builder = builder.add_root_certificate(reqwest::Certificate::from_der(authority)?);
        }
        Ok(OtlpClient {
            client: builder.build()?,
            health,
        })
    }
}

#[async_trait]
impl HttpClient for OtlpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let request = reqwest::blocking::Request::try_from(request)?;
        let answer = match self.client.execute(request) {
            Ok(answer) => answer,
            Err(e) => {
                let e = e.without_url();
                self.health.note_cause(causes(&e));
                return Err(Box::new(e));
            }
        };
        let status = answer.status();
        let headers = answer.headers().clone();
        let mut body = Vec::new();
        answer.take(MAX_ANSWER_BYTES + 1).read_to_end(&mut body)?;
        if body.len() as u64 > MAX_ANSWER_BYTES {
            return Err("the collector's answer is larger than 4 MiB".into());
        }
        let mut response = Response::builder().status(status).body(Bytes::from(body))?;
        *response.headers_mut() = headers;
        Ok(response)
    }
}

/// An error and its sources on one line ("error sending request: client error (Connect): tcp connect
/// error: Connection refused (os error 111)"): the source is where the reason is.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        line.push_str(": ");
        line.push_str(&cause.to_string());
        source = cause.source();
    }
    line
}

/// What the operator has been told about exports to one endpoint, shared by the client (which knows why
/// a post failed) and [`WatchedExporter`] (which knows whether a batch was lost).
#[derive(Debug)]
pub(super) struct ExportHealth {
    /// The endpoint as the log shows it (no credentials or query).
    endpoint: String,
    state: Mutex<HealthState>,
}

#[derive(Debug, Default)]
struct HealthState {
    /// The last transport failure of the client, more telling than the exporter's "network error".
    cause: Option<String>,
    /// Batches lost since the last warning, or since the first failure of the current episode.
    failed: u64,
    last_warning: Option<Instant>,
    /// Whether the last batch failed: the next success says exports work again.
    failing: bool,
}

/// What one failure calls for.
#[derive(Debug, PartialEq)]
enum Warn {
    /// A warning counting the batches lost since the last one.
    Now { failed: u64 },
    /// Nothing yet: a warning went out less than [`WARNING_INTERVAL`] ago.
    Later,
}

impl HealthState {
    fn failure(&mut self, now: Instant) -> Warn {
        self.failing = true;
        self.failed += 1;
        match self.last_warning {
            Some(last) if now.duration_since(last) < WARNING_INTERVAL => Warn::Later,
            _ => {
                self.last_warning = Some(now);
                Warn::Now {
                    failed: std::mem::take(&mut self.failed),
                }
            }
        }
    }

    /// After a batch arrived: the failures not yet reported, if the last batch had failed.
    fn success(&mut self) -> Option<u64> {
        self.cause = None;
        std::mem::replace(&mut self.failing, false).then(|| std::mem::take(&mut self.failed))
    }
}

impl ExportHealth {
    pub(super) fn new(endpoint: String) -> ExportHealth {
        ExportHealth {
            endpoint,
            state: Mutex::new(HealthState::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HealthState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn note_cause(&self, cause: String) {
        self.state().cause = Some(cause);
    }

    fn failed(&self, error: &dyn std::fmt::Display) {
        let (warn, cause) = {
            let mut state = self.state();
            let cause = state.cause.take();
            (state.failure(Instant::now()), cause)
        };
        if let Warn::Now { failed } = warn {
            let cause = cause.unwrap_or_else(|| error.to_string());
            tracing::warn!(
                endpoint = %self.endpoint,
                error.message = %cause,
                failed_batches = failed,
                "traces could not be exported: {failed} batch(es) of spans lost (this warning repeats at most once a minute, counting the batches lost since)"
            );
        }
    }

    fn exported(&self) {
        let unreported = self.state().success();
        if let Some(failed) = unreported {
            tracing::info!(
                endpoint = %self.endpoint,
                failed_batches = failed,
                "traces are exported again ({failed} more batch(es) lost since the last warning)"
            );
        }
    }

    /// At shutdown: the failures a warning has not counted yet, so none goes unreported.
    pub(super) fn report_unreported(&self) {
        let failed = std::mem::take(&mut self.state().failed);
        if failed > 0 {
            tracing::warn!(
                endpoint = %self.endpoint,
                failed_batches = failed,
                "traces could not be exported: {failed} more batch(es) of spans lost since the last warning"
            );
        }
    }
}

/// The OTLP exporter, each batch's result reported to its [`ExportHealth`].
#[derive(Debug)]
pub(super) struct WatchedExporter<E> {
    inner: E,
    health: Arc<ExportHealth>,
}

impl<E> WatchedExporter<E> {
    pub(super) fn new(inner: E, health: Arc<ExportHealth>) -> WatchedExporter<E> {
        WatchedExporter { inner, health }
    }
}

impl<E: SpanExporter> SpanExporter for WatchedExporter<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let result = self.inner.export(batch).await;
        match &result {
            Ok(()) => self.health.exported(),
            Err(e) => self.health.failed(e),
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn shutdown(&self) -> OTelSdkResult {
        self.inner.shutdown()
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_warns_at_once_and_later_ones_once_a_minute_with_their_count() {
        let mut state = HealthState::default();
        let start = Instant::now();
        assert_eq!(state.failure(start), Warn::Now { failed: 1 });
        for seconds in [1, 10, 59] {
            let at = start + Duration::from_secs(seconds);
            assert_eq!(state.failure(at), Warn::Later, "{seconds} s");
        }
        let at = start + WARNING_INTERVAL;
        assert_eq!(state.failure(at), Warn::Now { failed: 4 });
        assert_eq!(state.failure(at), Warn::Later);
        assert_eq!(state.success(), Some(1), "the one not warned about yet");
        assert_eq!(state.success(), None, "working, nothing to say");
    }

    #[test]
    fn a_refused_connection_names_its_cause() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let health = Arc::new(ExportHealth::new(String::new()));
        let client = OtlpClient::new(&[], health.clone()).unwrap();
        let request = Request::post(format!("http://{address}/v1/traces"))
            .body(Bytes::new())
            .unwrap();
        let result = futures::executor::block_on(client.send_bytes(request));
        assert!(result.is_err());
        let cause = health.state().cause.clone().unwrap();
        assert!(cause.contains("onnection refused"), "{cause}");
        assert!(!cause.contains("127.0.0.1"), "no URL: {cause}");
    }
}
