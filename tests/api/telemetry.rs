//! OpenTelemetry traces (operator contract section 8) against a local OTLP/HTTP receiver started by the
//! test, which decodes what the exporter posts with the protocol's own protobuf types: one request's spans
//! share one trace, named and parented as the contract says, with ids-only attributes; a `traceparent` on
//! the create continues the caller's trace; the webhook carries the request's `traceparent`; and a request
//! created before a kill -9 finishes after the restart in the trace it was given.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpResponse, HttpServer};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;

use crate::helpers::{client, status_and_json, write_config, BinaryServer, TestConfig};
use crate::receiver::Receiver;

pub(crate) const LIMIT: Duration = Duration::from_secs(20);
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// The spans an OTLP/HTTP receiver was sent, with the service name each came under.
#[derive(Clone, Default)]
pub(crate) struct Collected(Arc<Mutex<Vec<(String, Span)>>>);

impl Collected {
    pub(crate) fn spans(&self) -> Vec<(String, Span)> {
        self.0.lock().unwrap().clone()
    }
}

/// An OTLP/HTTP receiver on a free loopback port: its base URL, and what it collects.
fn start_collector() -> (String, Collected) {
    start_collector_with(None)
}

/// [`start_collector`], serving HTTPS with `tls` when given (its base URL then names `localhost`).
pub(crate) fn start_collector_with(tls: Option<rustls::ServerConfig>) -> (String, Collected) {
    let collected = Collected::default();
    let sink = collected.clone();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let sink = sink.clone();
        App::new().route(
            "/v1/traces",
            web::post().to(move |body: web::Bytes| {
                let sink = sink.clone();
                async move {
                    let Ok(request) = ExportTraceServiceRequest::decode(body.as_ref()) else {
                        return HttpResponse::BadRequest().finish();
                    };
                    let mut spans = sink.0.lock().unwrap();
                    for resource in request.resource_spans {
                        let service = resource
                            .resource
                            .iter()
                            .flat_map(|r| r.attributes.iter())
                            .find(|kv| kv.key == "service.name")
                            .and_then(|kv| text(kv.value.as_ref()?.value.as_ref()?))
                            .unwrap_or_default();
                        for scope in resource.scope_spans {
                            for span in scope.spans {
                                spans.push((service.clone(), span));
                            }
                        }
                    }
                    HttpResponse::Ok()
                        .content_type("application/x-protobuf")
                        .finish()
                }
            }),
        )
    })
    .workers(1);
    let (base, server) = match tls {
        Some(tls) => (
            format!("https://localhost:{port}"),
            server.listen_rustls_0_23(listener, tls),
        ),
        None => (format!("http://127.0.0.1:{port}"), server.listen(listener)),
    };
    actix_web::rt::spawn(server.unwrap().run());
    (base, collected)
}

fn text(value: &AnyValue) -> Option<String> {
    match value {
        AnyValue::StringValue(s) => Some(s.clone()),
        AnyValue::IntValue(n) => Some(n.to_string()),
        AnyValue::BoolValue(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The attribute `key` of `span` when it is an int attribute (`None` for any other type, a string included).
fn int_attribute(span: &Span, key: &str) -> Option<i64> {
    let value = span
        .attributes
        .iter()
        .find(|kv| kv.key == key)?
        .value
        .as_ref()?;
    match value.value.as_ref()? {
        AnyValue::IntValue(n) => Some(*n),
        _ => None,
    }
}

fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes
        .iter()
        .filter_map(|kv| Some((kv.key.clone(), text(kv.value.as_ref()?.value.as_ref()?)?)))
        .collect()
}

pub(crate) fn config(paused: bool) -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("dialer.paused", paused)
        .set("webhooks.allow_private_targets", true)
        .set("telemetry.service_name", "switchboard-under-test");
    config
}

pub(crate) async fn token(base: &str) -> String {
    let response = client()
        .get(format!("{base}/v1/auth"))
        .header("Switchboard-API-Key", crate::helpers::SANDBOX_KEY)
        .header("Switchboard-API-Secret", crate::helpers::SANDBOX_SECRET)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body["token"].as_str().unwrap().to_owned()
}

pub(crate) async fn create(
    base: &str,
    token: &str,
    webhook: &str,
    traceparent: Option<&str>,
) -> String {
    create_scenario(base, token, webhook, traceparent, "success").await
}

async fn create_scenario(
    base: &str,
    token: &str,
    webhook: &str,
    traceparent: Option<&str>,
    scenario: &str,
) -> String {
    let mut request = client()
        .post(format!("{base}/v1/requests"))
        .bearer_auth(token)
        .json(&json!({
            "schemaId": "vob-basic",
            "webhookUrl": webhook,
            "inputs": {
                "payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Annabel",
                "patientLastName": "Leequist", "patientDateOfBirth": "1980-01-02",
                "billingProviderNpi": "1234567890", "sandboxScenario": scenario
            }
        }));
    if let Some(traceparent) = traceparent {
        request = request.header("traceparent", traceparent);
    }
    let (status, body) = status_and_json(request.send().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    body["requestId"].as_str().unwrap().to_owned()
}

/// The exported `request` span of request `id`, once it has arrived.
pub(crate) async fn request_span(collected: &Collected, id: &str) -> Span {
    let deadline = Instant::now() + LIMIT;
    loop {
        let found = collected.spans().into_iter().find(|(_, span)| {
            span.name == "request"
                && attributes(span)
                    .get("switchboard.request_id")
                    .map(String::as_str)
                    == Some(id)
        });
        if let Some((service, span)) = found {
            assert_eq!(service, "switchboard-under-test");
            return span;
        }
        assert!(Instant::now() < deadline, "no request span for {id}");
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The children of `parent` exported so far, by name.
fn children(collected: &Collected, parent: &Span) -> HashMap<String, Vec<Span>> {
    let mut by_name: HashMap<String, Vec<Span>> = HashMap::new();
    for (_, span) in collected.spans() {
        if span.parent_span_id == parent.span_id {
            assert_eq!(span.trace_id, parent.trace_id, "{}: one trace", span.name);
            by_name.entry(span.name.clone()).or_default().push(span);
        }
    }
    by_name
}

/// Waits until `parent` has children named `step`, `call` and `webhook.delivery`.
async fn wait_children(collected: &Collected, parent: &Span) -> HashMap<String, Vec<Span>> {
    let deadline = Instant::now() + LIMIT;
    loop {
        let found = children(collected, parent);
        if ["step", "call", "webhook.delivery"]
            .iter()
            .all(|name| found.contains_key(*name))
        {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "children so far: {:?}",
            found.keys()
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[actix_web::test]
async fn a_requests_life_is_one_trace_that_continues_the_callers_and_survives_a_kill_9() {
    let (collector, collected) = start_collector();
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let paused = write_config(config_dir.path(), &config(true));
    let running_dir = tempfile::tempdir().unwrap();
    let running = write_config(running_dir.path(), &config(false));
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ];

    // Created while dispatch is paused, then the server dies hard: every span of the run is written by
    // the next process, which knows the trace only from the store.
    let first = BinaryServer::start_with_env(&paused, data_dir.path(), &env);
    first.wait_ready().await;
    let token_first = token(&first.address).await;
    let webhook = receiver.url("/hook");
    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let continued = create(&first.address, &token_first, &webhook, Some(&caller)).await;
    let own = create(&first.address, &token_first, &webhook, None).await;
    first.kill_hard();

    let second = BinaryServer::start_with_env(&running, data_dir.path(), &env);
    second.wait_ready().await;
    let webhooks = receiver.wait_for(2, LIMIT).await;

    let request = request_span(&collected, &continued).await;
    assert_eq!(hex(&request.trace_id), CALLER_TRACE, "the caller's trace");
    assert_eq!(
        hex(&request.parent_span_id),
        CALLER_SPAN,
        "under the caller's span"
    );
    let attrs = attributes(&request);
    assert_eq!(attrs["switchboard.account_id"], "demo");
    assert_eq!(attrs["switchboard.schema_id"], "vob-basic");
    assert_eq!(attrs["switchboard.state"], "SUCCESS");
    assert!(attrs.contains_key("switchboard.modality"), "{attrs:?}");

    let found = wait_children(&collected, &request).await;
    let step = attributes(&found["step"][0]);
    assert_eq!(step["switchboard.step"], "step-1");
    let call = attributes(&found["call"][0]);
    assert!(!call["switchboard.call_id"].is_empty());
    assert_eq!(call["switchboard.disposition"], "completed");
    assert_eq!(call["switchboard.platform"], "sandbox");
    let delivery = attributes(&found["webhook.delivery"][0]);
    assert_eq!(delivery["switchboard.attempt"], "1");
    assert_eq!(delivery["http.response.status_code"], "200");
    // Numbers are int attributes, as OpenTelemetry's conventions type them; no span carries `target`.
    let delivery = &found["webhook.delivery"][0];
    for (key, value) in [
        ("http.response.status_code", 200),
        ("switchboard.attempt", 1),
        ("switchboard.round", 0),
    ] {
        assert_eq!(int_attribute(delivery, key), Some(value), "{key}");
    }
    for (_, span) in collected.spans() {
        assert!(
            !attributes(&span).contains_key("target"),
            "{} carries target",
            span.name
        );
    }

    // The webhook names the request's span, so the client's trace links the create to the callback.
    let hook = webhooks
        .iter()
        .find(|w| w.json()["requestId"] == continued)
        .expect("the continued request's webhook");
    assert_eq!(
        hook.header("traceparent"),
        Some(format!("00-{CALLER_TRACE}-{}-01", hex(&request.span_id)).as_str())
    );

    // Without a traceparent the request starts a trace of its own, at its root.
    let root = request_span(&collected, &own).await;
    assert_ne!(hex(&root.trace_id), CALLER_TRACE);
    assert!(root.parent_span_id.is_empty(), "a root span");
    wait_children(&collected, &root).await;
    let hook = webhooks
        .iter()
        .find(|w| w.json()["requestId"] == own)
        .expect("the other request's webhook");
    assert_eq!(
        hook.header("traceparent"),
        Some(format!("00-{}-{}-01", hex(&root.trace_id), hex(&root.span_id)).as_str())
    );

    // An account with the electronic channel asks it first: an `electronic.inquiry` child.
    let token_second = token(&second.address).await;
    let digital = create_scenario(
        &second.address,
        &token_second,
        &webhook,
        None,
        "digital_plus_phone",
    )
    .await;
    let request = request_span(&collected, &digital).await;
    assert_eq!(
        attributes(&request)["switchboard.modality"],
        "digital_plus_phone"
    );
    let found = wait_children(&collected, &request).await;
    assert!(
        found.contains_key("electronic.inquiry"),
        "{:?}",
        found.keys()
    );

    // Ids and states only: no input value reaches an exported attribute.
    for (_, span) in collected.spans() {
        for value in attributes(&span).values() {
            for phi in ["Annabel", "Leequist", "W123456789", "1980-01-02", "Aetna"] {
                assert!(!value.contains(phi), "{} carries {phi}", span.name);
            }
        }
    }
}

#[actix_web::test]
async fn without_an_endpoint_webhooks_carry_no_traceparent() {
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let path = write_config(config_dir.path(), &config(false));
    let server = BinaryServer::start_with_env(&path, data_dir.path(), &[]);
    server.wait_ready().await;
    let token = token(&server.address).await;
    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    create(
        &server.address,
        &token,
        &receiver.url("/hook"),
        Some(&caller),
    )
    .await;
    let got = receiver.wait_for(1, LIMIT).await;
    assert_eq!(got[0].header("traceparent"), None);
}

#[actix_web::test]
async fn a_graceful_stop_sends_the_spans_still_queued() {
    let (collector, collected) = start_collector();
    let receiver = Receiver::start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let path = write_config(config_dir.path(), &config(false));
    // Batches every ten minutes: only the stop can send these spans within the test.
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
    ];
    let server = BinaryServer::start_with_env(&path, data_dir.path(), &env);
    server.wait_ready().await;
    let token = token(&server.address).await;
    let id = create(&server.address, &token, &receiver.url("/hook"), None).await;
    receiver.wait_for(1, LIMIT).await;
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert!(collected.spans().is_empty(), "nothing sent before the stop");
    assert_eq!(server.terminate(), Some(0), "clean exit on SIGTERM");
    let request = request_span(&collected, &id).await;
    let found = children(&collected, &request);
    assert!(found.contains_key("call"), "{:?}", found.keys());
}
