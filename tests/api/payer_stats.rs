//! What Switchboard learns of each payer's line (operator contract §11): production calls to a payer of
//! the directory, by hour of the week in the payer's zone, served by `GET /admin/v1/payers/{name}/stats`
//! to admin and support, audited, kept across restarts and never counted twice.

use std::time::Duration;

use futures::future::join_all;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    spawn_app_with, status_and_json, write_config, Api, BinaryServer, TestApp, TestConfig,
};
use crate::operators::operator;

/// Two days and seven hours: from the test clock's Monday 8:00 in Chicago to Wednesday 15:00 there.
const TO_WEDNESDAY_AFTERNOON: i64 = (2 * 24 + 7) * 3600;

/// A dispatching configuration (calls take milliseconds) whose Aetna answers in Chicago time and whose
/// demo account has no electronic channel (every request is called).
pub fn config() -> TestConfig {
    let mut config = TestConfig::default();
    config.dispatching().features(&["payer_phone_lookup"]);
    let payers = config.table_mut()["payers"].as_array_mut().unwrap();
    let aetna = payers
        .iter_mut()
        .find(|p| p["name"].as_str() == Some("Aetna"))
        .unwrap();
    aetna
        .as_table_mut()
        .unwrap()
        .insert("timezone".into(), "America/Chicago".into());
    config
}

/// Creates `count` production (or sandbox) `vob-basic` requests to Aetna and waits until every one ends.
pub async fn run_requests(api: &Api, token: &str, first: usize, count: usize) {
    let mut ids = Vec::new();
    for n in first..first + count {
        let body = json!({
            "schemaId": "vob-basic",
            "inputs": {
                "payerName": "Aetna", "memberId": format!("W{:09}", 200_000_000 + n),
                "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
                "billingProviderNpi": "1234567890", "groupNumber": "GRP100"
            }
        });
        ids.push(api.create_request(token, &body).await);
    }
    join_all(ids.iter().map(|id| api.wait_terminal(token, id))).await;
}

/// `GET /admin/v1/payers/{name}/stats` as the configured admin: status and body.
pub async fn stats(api: &Api, name: &str) -> (u16, Value) {
    status_and_json(
        api.admin(Method::GET, &format!("/admin/v1/payers/{name}/stats"), None)
            .await,
    )
    .await
}

/// The `byHour` entry of `weekday` and `hour`.
fn hour(stats: &Value, weekday: u64, hour: u64) -> Option<Value> {
    stats["byHour"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["weekday"] == weekday && h["hour"] == hour)
        .cloned()
}

#[actix_web::test]
async fn calls_are_learned_by_hour_of_the_week_in_the_payers_zone() {
    let app = spawn_app_with(&config()).await;
    let token = app.live_token().await;
    let (status, empty) = stats(&app, "Aetna").await;
    assert_eq!(status, 200, "{empty}");
    assert_eq!(
        empty,
        json!({ "payer": "Aetna", "calls": 0, "reached": 0, "medianHoldSeconds": null, "holdSeconds": 0,
                "completedRequests": 0, "costPerCompletedRequest": null, "byHour": [] })
    );

    // Monday 8:00 in Chicago (9:00 in the account's New York).
    run_requests(&app, &token, 0, 8).await;
    let (_, monday) = stats(&app, "Aetna").await;
    let calls = monday["calls"].as_u64().unwrap();
    assert!(calls >= 8, "every request placed a call: {monday}");
    assert_eq!(monday["byHour"].as_array().unwrap().len(), 1, "{monday}");
    let morning = hour(&monday, 1, 8).expect("Monday 8:00, Chicago time");
    assert_eq!(morning["calls"], calls);
    assert!(morning["reached"].as_u64().unwrap() <= calls);
    let hold = monday["medianHoldSeconds"].as_u64().unwrap();
    assert!((120..=45 * 60).contains(&hold), "{monday}");
    let cost: f64 = monday["costPerCompletedRequest"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // Phone tree, hold and talk at 0.12 a minute: a few dollars per answer.
    assert!((0.5..30.0).contains(&cost), "{monday}");

    // Wednesday 15:00 in Chicago: the quiet afternoon holds shorter.
    app.advance_clock(TO_WEDNESDAY_AFTERNOON).await;
    let token = app.live_token().await;
    run_requests(&app, &token, 100, 8).await;
    let (_, week) = stats(&app, "Aetna").await;
    let afternoon = hour(&week, 3, 15).expect("Wednesday 15:00, Chicago time");
    assert_eq!(
        hour(&week, 1, 8),
        Some(morning.clone()),
        "Monday kept as it was"
    );
    assert_eq!(
        week["calls"].as_u64().unwrap(),
        calls + afternoon["calls"].as_u64().unwrap()
    );
    let (mon, wed) = (
        morning["medianHoldSeconds"].as_u64().unwrap(),
        afternoon["medianHoldSeconds"].as_u64().unwrap(),
    );
    assert!(mon > wed, "Monday 8:00 {mon} s, Wednesday 15:00 {wed} s");

    // Sandbox requests never dial: they teach nothing.
    let sandbox = app.sandbox_token().await;
    run_requests(&app, &sandbox, 200, 3).await;
    assert_eq!(stats(&app, "Aetna").await.1, week);
}

#[actix_web::test]
async fn support_reads_the_stats_auditors_may_not_unknown_payers_are_404_and_each_read_is_audited()
{
    let app: TestApp = spawn_app_with(&config()).await;
    let support = operator(&app, "sam", "support").await;
    let auditor = operator(&app, "aud", "auditor").await;
    let read = |token: String| {
        let request = app
            .client
            .get(app.url("/admin/v1/payers/Aetna/stats"))
            .bearer_auth(token);
        async move { status_and_json(request.send().await.unwrap()).await }
    };
    assert_eq!(read(support).await.0, 200);
    assert_eq!(read(auditor).await, (403, json!({ "error": "FORBIDDEN" })));
    assert_eq!(
        stats(&app, "Nobody%20Health").await,
        (
            404,
            json!({ "error": "NOT_FOUND", "message": "Payer 'Nobody Health' is not in the directory" })
        )
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (status, page) = status_and_json(
            app.admin(Method::GET, "/admin/v1/audit?action=payer.stats.read", None)
                .await,
        )
        .await;
        assert_eq!(status, 200, "{page}");
        let events = page["events"].as_array().unwrap();
        if events.len() == 1 || std::time::Instant::now() > deadline {
            assert_eq!(events.len(), 1, "one read, by sam: {page}");
            assert_eq!(events[0]["actor"]["id"], "sam");
            assert_eq!(
                events[0]["target"],
                json!({ "kind": "payer", "id": "Aetna" })
            );
            break;
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_was_learned_survives_a_restart_and_is_never_counted_twice() {
    let dir = tempfile::tempdir().unwrap();
    let config_path = write_config(dir.path(), &config());
    let data = dir.path().join("data");
    let server = BinaryServer::start_ready(&config_path, &data).await;
    let token = server.live_token().await;
    run_requests(&server, &token, 0, 6).await;
    let (status, before) = stats(&server, "Aetna").await;
    assert_eq!(status, 200, "{before}");
    assert!(before["calls"].as_u64().unwrap() >= 6, "{before}");
    assert_eq!(server.terminate(), Some(0));

    let server = BinaryServer::start_ready(&config_path, &data).await;
    assert_eq!(stats(&server, "Aetna").await.1, before);
    assert_eq!(server.terminate(), Some(0));
}
