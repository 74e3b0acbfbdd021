//! Calling when the payer answers fastest (operator contract §11, `learned_call_windows`): once an hour
//! of the week has 20 calls of a payer, a call waits for the hour of its due date with the shortest
//! learned hold, inside calling hours; the chosen hour is written before the wait, so a restart keeps it.

use crate::helpers::{write_config, BinaryServer};
use crate::payer_stats::{config, run_requests, stats};

const HOUR: i64 = 3600;

/// The calls of the `byHour` entry of `weekday` and `hour` (0 when absent).
fn calls_at(stats: &serde_json::Value, weekday: u64, hour: u64) -> u64 {
    stats["byHour"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["weekday"] == weekday && h["hour"] == hour)
        .map_or(0, |h| h["calls"].as_u64().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_waits_for_the_learned_quiet_hour_and_keeps_it_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config();
    config.features(&["payer_phone_lookup", "learned_call_windows"]);
    let config_path = write_config(dir.path(), &config);
    let data = dir.path().join("data");
    let server = BinaryServer::start_ready(&config_path, &data).await;

    // Learning: Monday 8:00 and 15:00 in Chicago, 25 requests each. Nothing is known yet, so every call
    // goes at once, as without the feature.
    let token = server.live_token().await;
    run_requests(&server, &token, 0, 25).await;
    server.advance_clock(7 * HOUR).await;
    let token = server.live_token().await;
    run_requests(&server, &token, 100, 25).await;
    let (_, learned) = stats(&server, "Aetna").await;
    let (morning, afternoon) = (calls_at(&learned, 1, 8), calls_at(&learned, 1, 15));
    assert!(morning >= 25 && afternoon >= 25, "{learned}");
    let hold = |hour: u64| {
        learned["byHour"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["weekday"] == 1 && h["hour"] == hour)
            .unwrap()["medianHoldSeconds"]
            .as_u64()
            .unwrap()
    };
    assert!(hold(15) < hold(8), "{learned}");

    // The next Monday, 8:00 in Chicago: a request waits for 15:00.
    server.advance_clock(7 * 24 * HOUR - 7 * HOUR).await;
    let token = server.live_token().await;
    let body = serde_json::json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "memberId": "W300000001", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890", "groupNumber": "GRP100"
        }
    });
    let id = server.create_request(&token, &body).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert_eq!(
        server.read_request(&token, &id).await["state"],
        "PROCESSING"
    );
    assert_eq!(
        stats(&server, "Aetna").await.1,
        learned,
        "no call placed yet"
    );

    // A restart keeps the chosen hour: the call is placed once, at 15:00, not at once after the start.
    assert_eq!(server.terminate(), Some(0));
    let server = BinaryServer::start_ready(&config_path, &data).await;
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let token = server.live_token().await;
    assert_eq!(
        server.read_request(&token, &id).await["state"],
        "PROCESSING"
    );
    server.advance_clock(7 * HOUR).await;
    let token = server.live_token().await;
    server.wait_terminal(&token, &id).await;
    let (_, after) = stats(&server, "Aetna").await;
    assert_eq!(calls_at(&after, 1, 8), morning, "{after}");
    assert!(calls_at(&after, 1, 15) > afternoon, "{after}");
    assert_eq!(server.terminate(), Some(0));
}
