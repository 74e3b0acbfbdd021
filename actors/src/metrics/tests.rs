//! Unit tests of [`Metrics`](super::Metrics): every series exposed from start-up, and each event landing in its labelled series.

use super::*;

fn metrics() -> (tempfile::TempDir, Metrics) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let metrics = Metrics::new(&store);
    (dir, metrics)
}

/// The line of `text` that starts with `series` (name and labels), parsed as a number.
fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in:\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn every_known_label_value_is_exposed_at_zero_before_any_event() {
    let (_dir, metrics) = metrics();
    let text = metrics.render().unwrap();
    for series in [
        r#"switchboard_requests_created_total{environment="sandbox"}"#,
        r#"switchboard_requests_finished_total{state="PARTIAL"}"#,
        r#"switchboard_calls_total{disposition="hold_timeout"}"#,
        r#"switchboard_calls_total{disposition="panicked"}"#,
        r#"switchboard_webhook_attempts_total{outcome="transport_error"}"#,
        "switchboard_actor_restarts_total",
        "switchboard_panics_total",
        "switchboard_requests_running",
    ] {
        assert_eq!(value(&text, series), 0.0, "{series}");
    }
    assert!(text.contains("# TYPE switchboard_calls_total counter"));
    assert!(text.contains("# TYPE switchboard_requests_running gauge"));
    assert!(text.contains("# TYPE switchboard_store_flush_duration_seconds histogram"));
}

#[test]
fn an_http_request_is_counted_by_route_and_status_and_timed_in_buckets() {
    let (_dir, metrics) = metrics();
    metrics.http_request(
        "GET",
        "/v1/requests/{requestId}",
        200,
        Duration::from_millis(3),
    );
    metrics.http_request(
        "GET",
        "/v1/requests/{requestId}",
        200,
        Duration::from_millis(30),
    );
    metrics.http_request(
        "GET",
        "/v1/requests/{requestId}",
        404,
        Duration::from_millis(1),
    );
    let text = metrics.render().unwrap();
    let labels = r#"method="GET",route="/v1/requests/{requestId}""#;
    assert_eq!(
        value(
            &text,
            &format!(r#"switchboard_http_requests_total{{{labels},status="200"}}"#)
        ),
        2.0
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"switchboard_http_requests_total{{{labels},status="404"}}"#)
        ),
        1.0
    );
    let histogram = "switchboard_http_request_duration_seconds";
    assert_eq!(
        value(
            &text,
            &format!(r#"{histogram}_bucket{{{labels},le="0.005"}}"#)
        ),
        2.0
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"{histogram}_bucket{{{labels},le="0.05"}}"#)
        ),
        3.0
    );
    assert_eq!(
        value(
            &text,
            &format!(r#"{histogram}_bucket{{{labels},le="+Inf"}}"#)
        ),
        3.0
    );
    assert_eq!(value(&text, &format!("{histogram}_count{{{labels}}}")), 3.0);
    let sum = value(&text, &format!("{histogram}_sum{{{labels}}}"));
    assert!((sum - 0.034).abs() < 1e-9, "sum {sum}");
}

#[test]
fn orchestration_and_webhook_events_land_in_their_labelled_series() {
    let (_dir, metrics) = metrics();
    metrics.request_created(Environment::Sandbox);
    metrics.request_finished(RequestState::Success);
    metrics.call_ended(Disposition::Voicemail);
    metrics.call_ended(Disposition::Completed);
    metrics.call_panicked();
    metrics.actor_restarted();
    metrics.set_requests_running(4);
    metrics.webhook_attempt(WebhookAttempt::for_status(503));
    metrics.webhook_attempt(WebhookAttempt::for_status(404));
    metrics.webhook_attempt(WebhookAttempt::for_status(204));
    metrics.webhook_attempt(WebhookAttempt::for_status(401));
    let text = metrics.render().unwrap();
    for (series, expected) in [
        (
            r#"switchboard_requests_created_total{environment="sandbox"}"#,
            1.0,
        ),
        (
            r#"switchboard_requests_created_total{environment="production"}"#,
            0.0,
        ),
        (
            r#"switchboard_requests_finished_total{state="SUCCESS"}"#,
            1.0,
        ),
        (r#"switchboard_calls_total{disposition="voicemail"}"#, 1.0),
        (r#"switchboard_calls_total{disposition="completed"}"#, 1.0),
        (r#"switchboard_calls_total{disposition="panicked"}"#, 1.0),
        ("switchboard_panics_total", 1.0),
        ("switchboard_actor_restarts_total", 1.0),
        ("switchboard_requests_running", 4.0),
        (
            r#"switchboard_webhook_attempts_total{outcome="server_error"}"#,
            1.0,
        ),
        (
            r#"switchboard_webhook_attempts_total{outcome="rejected"}"#,
            1.0,
        ),
        (
            r#"switchboard_webhook_attempts_total{outcome="delivered"}"#,
            1.0,
        ),
        (
            r#"switchboard_webhook_attempts_total{outcome="other_status"}"#,
            1.0,
        ),
    ] {
        assert_eq!(value(&text, series), expected, "{series}");
    }
}

#[tokio::test]
async fn store_flushes_are_observed_in_the_flush_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let metrics = Metrics::new(&store);
    let request = crate::orchestration::actor_tests::request_record();
    store
        .commit_requests(std::sync::Arc::new(vec![request]))
        .await
        .unwrap();
    let text = metrics.render().unwrap();
    assert!(value(&text, "switchboard_store_flush_duration_seconds_count") >= 1.0);
    assert!(text.contains(r#"switchboard_store_flush_duration_seconds_bucket{le="+Inf"}"#));
}
