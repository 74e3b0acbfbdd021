//! OpenTelemetry traces of requests (operator contract section 8): what each span is called, what it
//! carries, and how a request's spans find its trace, across restarts.
//!
//! A request's trace ids are minted at its create and stored with it ([`TraceRecord`]), so every span,
//! whichever process writes it, joins the same trace. Its `request` span is written once, when the request
//! ends, with the stored span id and the stored creation time; its children (`electronic.inquiry`, `step`,
//! `call`, `webhook.delivery`) are `tracing` spans of target [`TARGET`] whose parent is set to that stored
//! span, exported by the `tracing-opentelemetry` layer the binary installs. Without an endpoint nothing
//! here is minted or written: [`enabled`] is false, no layer exists and the spans of [`TARGET`] are off.
//! Exporting (the OTLP exporter, the layer) is the HTTP crate's business.
//!
//! Attributes are ids, states and kinds only, never an input, a result or a URL.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use opentelemetry::trace::{
    SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState, Tracer,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use switchboard_storage::{
    CallId, Disposition, Environment, RequestId, RequestRecord, Store, TraceRecord,
};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `tracing` target of the spans that are exported; nothing else is.
pub const TARGET: &str = "switchboard::otel";

/// The name the `request` spans are written under (the instrumentation scope).
pub const SCOPE: &str = "switchboard";

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns trace minting and the `request` spans on: called once by the binary after it installed the
/// exporter and the global tracer provider.
pub fn enable() {
    ENABLED.store(true, Ordering::Release);
}

/// Whether traces are exported by this process.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

/// The trace of a new request: the caller's trace when its `traceparent` named one, else a new trace;
/// and a new span id for its `request` span. `None` when traces are off.
pub fn new_trace(caller: Option<&CallerSpan>) -> Option<TraceRecord> {
    if !enabled() {
        return None;
    }
    let ids = RandomIdGenerator::default();
    Some(TraceRecord {
        trace_id: caller
            .map(|c| c.trace_id.clone())
            .unwrap_or_else(|| ids.new_trace_id().to_string()),
        span_id: ids.new_span_id().to_string(),
        parent_span_id: caller.map(|c| c.span_id.clone()),
    })
}

/// The caller's span, from a W3C `traceparent` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerSpan {
    trace_id: String,
    span_id: String,
}

impl CallerSpan {
    /// Parses `traceparent` (`00-{32 hex}-{16 hex}-{2 hex}`, lowercase). Anything else, an all-zero id
    /// included, is ignored as the W3C specification asks: the request then starts a trace of its own.
    pub fn parse(traceparent: &str) -> Option<CallerSpan> {
        let mut parts = traceparent.trim().split('-');
        let (version, trace_id, span_id, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, n: usize| {
            s.len() == n
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !hex(version, 2) || version == "ff" || !hex(flags, 2) {
            return None;
        }
        if version == "00" && parts.next().is_some() {
            return None;
        }
        if !hex(trace_id, 32) || !hex(span_id, 16) {
            return None;
        }
        if trace_id.bytes().all(|b| b == b'0') || span_id.bytes().all(|b| b == b'0') {
            return None;
        }
        Some(CallerSpan {
            trace_id: trace_id.to_owned(),
            span_id: span_id.to_owned(),
        })
    }
}

/// The `traceparent` header naming a request's `request` span, as its webhooks carry it.
pub fn traceparent(trace: &TraceRecord) -> String {
    format!("00-{}-{}-01", trace.trace_id, trace.span_id)
}

/// A context whose current span is the stored span `span_id` of `trace_id`, sampled: what children are
/// parented to.
fn remote(trace_id: &str, span_id: &str) -> Option<Context> {
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    let span = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    Some(Context::new().with_remote_span_context(span))
}

/// Makes `span` a child of the request's `request` span. Nothing happens when traces are off or the
/// request has no trace.
pub fn adopt(span: &tracing::Span, trace: Option<&TraceRecord>) {
    if !enabled() {
        return;
    }
    if let Some(parent) = trace.and_then(|t| remote(&t.trace_id, &t.span_id)) {
        let _ = span.set_parent(parent);
    }
}

/// Makes `span` a child of the span a W3C `traceparent` names (a delivery keeps its request's).
pub fn adopt_traceparent(span: &tracing::Span, traceparent: Option<&str>) {
    if !enabled() {
        return;
    }
    let parent = traceparent
        .and_then(|t| {
            let mut parts = t.split('-').skip(1);
            Some((parts.next()?, parts.next()?))
        })
        .and_then(|(trace_id, span_id)| remote(trace_id, span_id));
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
}

/// Writes the `request` span of a request that has ended: the stored trace and span ids, from its
/// creation to `ended_at`, with its final state and modality.
pub fn finish_request(record: &RequestRecord, modality: Option<&str>, ended_at: DateTime<Utc>) {
    if !enabled() {
        return;
    }
    let Some(trace) = &record.trace else {
        return;
    };
    let (Ok(trace_id), Ok(span_id)) = (
        TraceId::from_hex(&trace.trace_id),
        SpanId::from_hex(&trace.span_id),
    ) else {
        return;
    };
    let parent = trace
        .parent_span_id
        .as_deref()
        .and_then(|caller| remote(&trace.trace_id, caller))
        .unwrap_or_default();
    let mut attributes = vec![
        KeyValue::new("switchboard.request_id", record.id.as_str().to_owned()),
        KeyValue::new("switchboard.account_id", record.account_id.clone()),
        KeyValue::new("switchboard.schema_id", record.schema_id.clone()),
        KeyValue::new("switchboard.state", record.state.as_str()),
    ];
    if let Some(modality) = modality {
        attributes.push(KeyValue::new("switchboard.modality", modality.to_owned()));
    }
    let tracer = opentelemetry::global::tracer(SCOPE);
    let builder = tracer
        .span_builder("request")
        .with_start_time(SystemTime::from(record.created_at))
        .with_attributes(attributes);
    // The SDK mints the ids of a span it starts: the stored ones are handed to it through the generator.
    let span = FixedIds::with((trace_id, span_id), || {
        builder.start_with_context(&tracer, &parent)
    });
    use opentelemetry::trace::Span as _;
    let mut span = span;
    span.end_with_timestamp(SystemTime::from(ended_at.max(record.created_at)));
}

/// A child span of the request: `make` builds it (a `tracing` span of [`TARGET`] with no contextual
/// parent) only when traces are on; otherwise the span is disabled and costs nothing.
pub(crate) fn child(
    trace: Option<&TraceRecord>,
    make: impl FnOnce() -> tracing::Span,
) -> tracing::Span {
    match trace {
        Some(trace) if enabled() => {
            let span = make();
            adopt(&span, Some(trace));
            span
        }
        _ => tracing::Span::none(),
    }
}

/// Records how a call ended on its span: the disposition, and the platform holding it (`simulated` or
/// `sandbox` when none does) with the platform's id of the call.
pub(crate) async fn call_ended(
    span: &tracing::Span,
    store: &Store,
    request_id: &RequestId,
    call_id: &CallId,
    disposition: Disposition,
) {
    if span.is_disabled() {
        return;
    }
    span.record(
        "switchboard.disposition",
        crate::metrics::disposition_label(disposition),
    );
    let record = store.fetch_request(request_id).await.ok().flatten();
    let Some(record) = record else {
        return;
    };
    let call = record
        .run
        .as_ref()
        .and_then(|run| run.calls.iter().find(|call| call.id == *call_id));
    match call.and_then(|call| call.platform.as_ref()) {
        Some(platform) => {
            span.record("switchboard.platform", platform.platform.as_str());
            if let Some(id) = &platform.platform_call_id {
                span.record("switchboard.platform_call_id", id.as_str());
            }
        }
        None => {
            let dialer = match record.environment {
                Environment::Sandbox => "sandbox",
                Environment::Production => "simulated",
            };
            span.record("switchboard.platform", dialer);
        }
    }
}

thread_local! {
    static NEXT_IDS: Cell<Option<(TraceId, SpanId)>> = const { Cell::new(None) };
}

/// The tracer provider's id generator: random ids, except for a span started inside
/// [`FixedIds::with`], which gets the ids given there (a `request` span written with its stored ids).
#[derive(Debug, Default)]
pub struct FixedIds {
    random: RandomIdGenerator,
}

impl FixedIds {
    fn with<T>(ids: (TraceId, SpanId), start: impl FnOnce() -> T) -> T {
        NEXT_IDS.with(|next| next.set(Some(ids)));
        let started = start();
        NEXT_IDS.with(|next| next.set(None));
        started
    }
}

impl IdGenerator for FixedIds {
    fn new_trace_id(&self) -> TraceId {
        NEXT_IDS
            .with(|next| next.get())
            .map(|(trace_id, _)| trace_id)
            .unwrap_or_else(|| self.random.new_trace_id())
    }

    fn new_span_id(&self) -> SpanId {
        NEXT_IDS
            .with(|next| next.get())
            .map(|(_, span_id)| span_id)
            .unwrap_or_else(|| self.random.new_span_id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_w3c_traceparent_is_read_and_malformed_ones_are_ignored() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(
            CallerSpan::parse(good),
            Some(CallerSpan {
                trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
                span_id: "00f067aa0ba902b7".into(),
            })
        );
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(CallerSpan::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn nothing_is_minted_while_traces_are_off() {
        assert!(!enabled());
        assert_eq!(new_trace(None), None);
    }

    #[test]
    fn the_fixed_ids_are_handed_out_only_inside_with() {
        let ids = FixedIds::default();
        let fixed = (
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        );
        let inside = FixedIds::with(fixed, || (ids.new_trace_id(), ids.new_span_id()));
        assert_eq!(inside, fixed);
        assert_ne!(ids.new_span_id(), fixed.1);
    }
}
