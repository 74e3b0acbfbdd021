//! Capacity scheduling (service-interface 1, 2.4 `dueDate`, 4.6 batch ids, 8 daily call capacity): each
//! account and environment keeps a ledger of requests booked per business day (Monday to Friday in the
//! account's time zone, minus observed US federal holidays); a POST's new requests fill the earliest days
//! with room, entries on the same day share a `requestBatchId`, and a POST that cannot be placed within the
//! 365-day horizon is refused whole.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    client, spawn_app_with, status_and_json, write_config, BinaryServer, TestApp, TestConfig,
    SANDBOX_KEY, SANDBOX_SECRET,
};
use crate::requests_read::{
    claim_item, create_batch, create_one, ids, list_ok, plain_config, post_requests, read,
    MONDAY_DUE,
};

// ---- helpers -------------------------------------------------------------------------------------------

/// The start of a day in America/New_York (EST, UTC-5, all through late November and December).
fn est_day(date: &str) -> String {
    format!("{date}T05:00:00.000000+00:00")
}

const TUESDAY_DUE: &str = "2026-11-24T05:00:00.000000+00:00";
const WEDNESDAY_DUE: &str = "2026-11-25T05:00:00.000000+00:00";

/// No features, and the demo account's daily call capacity set to `capacity`.
fn capacity_config(capacity: i64) -> TestConfig {
    let mut config = plain_config();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), capacity.into());
    config
}

/// Moves the manual clock to `instant`.
async fn set_clock(app: &TestApp, instant: &str) {
    let response = app
        .admin(
            Method::POST,
            "/admin/v1/clock",
            Some(json!({ "set": instant })),
        )
        .await;
    assert_eq!(response.status(), 200, "setting the clock to {instant}");
}

/// The `requestBatchId` of each create entry.
fn batch_ids(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| e["requestBatchId"].as_str().unwrap().to_owned())
        .collect()
}

/// The `dueDate` of each created request, read back one by one.
async fn due_dates(app: &TestApp, token: &str, entries: &[Value]) -> Vec<String> {
    let mut dates = Vec::with_capacity(entries.len());
    for entry in entries {
        let request = read(app, token, entry["requestId"].as_str().unwrap()).await;
        assert_eq!(request["requestBatchId"], entry["requestBatchId"]);
        dates.push(request["dueDate"].as_str().unwrap().to_owned());
    }
    dates
}

/// Asserts that entries with equal due dates share a batch id and entries with different ones do not.
fn assert_one_batch_per_day(entries: &[Value], dates: &[String]) {
    let batches = batch_ids(entries);
    for i in 0..entries.len() {
        for j in 0..entries.len() {
            assert_eq!(
                batches[i] == batches[j],
                dates[i] == dates[j],
                "entries {i} and {j}: batches {} / {}, due {} / {}",
                batches[i],
                batches[j],
                dates[i],
                dates[j]
            );
        }
    }
}

/// Asserts the 400 `INVALID_REQUEST` of an unplaceable POST whose message starts with `count`
/// (for example "3 of 3 ").
fn assert_unplaceable(status: u16, body: &Value, count: &str) {
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["error", "message"],
        "{body}"
    );
    assert_eq!(body["error"], "INVALID_REQUEST", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with(count),
        "message {message:?} should start with {count:?}"
    );
}

/// A batch body of `n` valid requests.
fn batch_body(n: usize) -> Value {
    json!({ "requests": (0..n).map(claim_item).collect::<Vec<_>>() })
}

// ---- splitting a batch across days ----------------------------------------------------------------------

#[actix_web::test]
async fn a_batch_beyond_daily_capacity_is_split_across_business_days_with_one_batch_id_per_day() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let token = app.live_token().await;

    let entries = create_batch(&app, &token, 5).await;

    for entry in &entries {
        assert_eq!(
            entry.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["requestBatchId", "requestId"],
            "{entry}"
        );
    }
    let batches = batch_ids(&entries);
    assert_eq!(batches[0], batches[1]);
    assert_eq!(batches[2], batches[3]);
    assert_ne!(batches[0], batches[2]);
    assert_ne!(batches[0], batches[4]);
    assert_ne!(batches[2], batches[4]);
    let dates = due_dates(&app, &token, &entries).await;
    assert_eq!(
        dates,
        [
            MONDAY_DUE,
            MONDAY_DUE,
            TUESDAY_DUE,
            TUESDAY_DUE,
            WEDNESDAY_DUE
        ]
    );
    assert_one_batch_per_day(&entries, &dates);
}

#[actix_web::test]
async fn a_batch_within_capacity_is_one_batch_due_today() {
    let app = spawn_app_with(&capacity_config(200)).await;
    let token = app.live_token().await;

    let entries = create_batch(&app, &token, 200).await;

    let batches = batch_ids(&entries);
    assert!(batches.iter().all(|b| *b == batches[0]), "{batches:?}");
    let listed = list_ok(
        &app,
        &token,
        &[("requestBatchId", &batches[0]), ("pageSize", "500")],
    )
    .await;
    assert_eq!(listed.len(), 200);
    assert!(listed.iter().all(|r| r["dueDate"] == MONDAY_DUE));

    // The 201st request of the day goes to Tuesday, in a batch of its own.
    let next = create_one(&app, &token).await;
    assert_ne!(next["requestBatchId"], *batches[0]);
    assert_eq!(due_dates(&app, &token, &[next]).await, [TUESDAY_DUE]);
}

#[actix_web::test]
async fn a_single_post_is_a_batch_of_one_and_separate_posts_never_share_a_batch() {
    let app = spawn_app_with(&capacity_config(200)).await;
    let token = app.live_token().await;

    let first = create_one(&app, &token).await;
    let second = create_one(&app, &token).await;
    let array_a = create_batch(&app, &token, 2).await;
    let array_b = create_batch(&app, &token, 2).await;
    let one_entry_array = create_batch(&app, &token, 1).await;

    // All due on Monday, yet every POST is its own batch.
    let all: Vec<Value> = [
        vec![first.clone(), second.clone()],
        array_a.clone(),
        array_b.clone(),
        one_entry_array,
    ]
    .concat();
    let dates = due_dates(&app, &token, &all).await;
    assert!(dates.iter().all(|d| d == MONDAY_DUE), "{dates:?}");
    let batches = batch_ids(&all);
    assert_eq!(batches[2], batches[3], "one array POST, one day");
    assert_eq!(batches[4], batches[5], "one array POST, one day");
    let mut distinct = batches.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{batches:?}");
    for single in [&first, &second] {
        let batch = single["requestBatchId"].as_str().unwrap();
        assert_eq!(
            ids(&list_ok(&app, &token, &[("requestBatchId", batch)]).await),
            ids(std::slice::from_ref(single))
        );
    }
}

#[actix_web::test]
async fn listing_by_each_request_batch_id_returns_exactly_its_entries() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let token = app.live_token().await;
    let entries = create_batch(&app, &token, 5).await;
    let mut by_batch: HashMap<String, Vec<String>> = HashMap::new();
    for entry in &entries {
        by_batch
            .entry(entry["requestBatchId"].as_str().unwrap().to_owned())
            .or_default()
            .push(entry["requestId"].as_str().unwrap().to_owned());
    }
    assert_eq!(by_batch.len(), 3);

    // Still so after the days have passed.
    for advance in [0, 3 * 86_400] {
        app.advance_clock(advance).await;
        let token = app.live_token().await;
        for (batch, expected) in &by_batch {
            let listed = list_ok(&app, &token, &[("requestBatchId", batch)]).await;
            let mut got = ids(&listed);
            got.sort();
            let mut expected = expected.clone();
            expected.sort();
            assert_eq!(got, expected, "batch {batch} after {advance} s");
            let due = &listed[0]["dueDate"];
            assert!(listed
                .iter()
                .all(|r| r["dueDate"] == *due && r["requestBatchId"] == **batch));
        }
    }
}

// ---- what counts against capacity -----------------------------------------------------------------------

#[actix_web::test]
async fn work_already_pending_counts_against_capacity() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let token = app.live_token().await;

    let first = create_batch(&app, &token, 3).await;
    let second = create_one(&app, &token).await;
    let third = create_batch(&app, &token, 3).await;

    assert_eq!(
        due_dates(&app, &token, &first).await,
        [MONDAY_DUE, MONDAY_DUE, TUESDAY_DUE]
    );
    assert_eq!(
        due_dates(&app, &token, std::slice::from_ref(&second)).await,
        [TUESDAY_DUE]
    );
    assert_eq!(
        due_dates(&app, &token, &third).await,
        [WEDNESDAY_DUE, WEDNESDAY_DUE, &est_day("2026-11-27")],
        "Thursday 2026-11-26 is Thanksgiving"
    );
    // Tuesday holds requests of two POSTs, in two batches.
    assert_ne!(first[2]["requestBatchId"], second["requestBatchId"]);
    assert_eq!(third[0]["requestBatchId"], third[1]["requestBatchId"]);
    assert_ne!(third[1]["requestBatchId"], third[2]["requestBatchId"]);
}

#[actix_web::test]
async fn concurrent_posts_never_overbook_a_day() {
    // Creates share one store transaction per flush; the ledger they book against must still count every
    // request of every POST exactly once.
    let app = spawn_app_with(&capacity_config(3)).await;
    let token = app.live_token().await;
    let bodies: Vec<Value> = (0..12)
        .map(|n| json!({ "requests": [claim_item(n), claim_item(n + 100)] }))
        .collect();
    let answers =
        futures::future::join_all(bodies.iter().map(|body| post_requests(&app, &token, body)))
            .await;
    let mut entries = Vec::new();
    for (status, body) in answers {
        assert_eq!(status, 200, "{body}");
        entries.extend(body["requests"].as_array().unwrap().iter().cloned());
    }
    let mut per_day: HashMap<String, usize> = HashMap::new();
    for date in due_dates(&app, &token, &entries).await {
        *per_day.entry(date).or_default() += 1;
    }
    assert_eq!(per_day.values().sum::<usize>(), 24);
    assert!(per_day.values().all(|&n| n <= 3), "{per_day:?}");
    assert_eq!(
        per_day.len(),
        8,
        "24 requests at 3 a day fill 8 business days: {per_day:?}"
    );
}

#[actix_web::test]
async fn days_that_have_passed_no_longer_count_and_today_keeps_its_bookings() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let token = app.live_token().await;
    let monday = create_batch(&app, &token, 3).await;
    assert_eq!(
        due_dates(&app, &token, &monday).await,
        [MONDAY_DUE, MONDAY_DUE, TUESDAY_DUE]
    );

    // Tuesday 09:00 in New York: Monday's bookings are history, Tuesday's one booking still counts.
    app.advance_clock(86_400).await;
    let token = app.live_token().await;
    let tuesday = create_batch(&app, &token, 2).await;

    assert_eq!(
        due_dates(&app, &token, &tuesday).await,
        [TUESDAY_DUE, WEDNESDAY_DUE]
    );
    assert_ne!(tuesday[0]["requestBatchId"], tuesday[1]["requestBatchId"]);
}

#[actix_web::test]
async fn an_idempotent_replay_books_no_capacity() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let token = app.live_token().await;
    let mut item = claim_item(0);
    item["internalId"] = json!("crm-1");
    let (status, original) = post_requests(&app, &token, &item).await;
    assert_eq!(status, 200, "{original}");

    for _ in 0..3 {
        let (status, replay) = post_requests(&app, &token, &item).await;
        assert_eq!((status, &replay), (200, &original));
    }
    let next = create_batch(&app, &token, 2).await;

    assert_eq!(
        due_dates(&app, &token, &next).await,
        [MONDAY_DUE, TUESDAY_DUE]
    );
}

#[actix_web::test]
async fn rejected_entries_of_a_batch_book_no_capacity() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let token = app.live_token().await;
    let mut invalid = claim_item(9);
    invalid["inputs"]["phoneNumber"] = json!("not a phone");
    let body = json!({ "requests": [claim_item(0), invalid.clone(), invalid, claim_item(1), claim_item(2)] });

    let (status, body) = post_requests(&app, &token, &body).await;

    assert_eq!(status, 207, "{body}");
    let entries = body["requests"].as_array().unwrap();
    assert_eq!(entries[1]["error"], "INVALID_INPUTS");
    assert_eq!(entries[2]["error"], "INVALID_INPUTS");
    let created = [entries[0].clone(), entries[3].clone(), entries[4].clone()];
    let dates = due_dates(&app, &token, &created).await;
    assert_eq!(dates, [MONDAY_DUE, MONDAY_DUE, TUESDAY_DUE]);
    assert_one_batch_per_day(&created, &dates);
}

// ---- the business-day calendar --------------------------------------------------------------------------

#[actix_web::test]
async fn thanksgiving_and_the_weekend_are_skipped() {
    let app = spawn_app_with(&capacity_config(1)).await;
    set_clock(&app, "2026-11-25T14:00:00Z").await; // Wednesday
    let token = app.live_token().await;

    let entries = create_batch(&app, &token, 3).await;

    let dates = due_dates(&app, &token, &entries).await;
    assert_eq!(
        dates,
        [
            est_day("2026-11-25"),
            est_day("2026-11-27"),
            est_day("2026-11-30")
        ]
    );
    assert_one_batch_per_day(&entries, &dates);
}

#[actix_web::test]
async fn a_post_on_a_weekend_or_holiday_books_the_next_business_day() {
    let cases = [
        // Thanksgiving, Thursday: Friday.
        ("2026-11-26T14:00:00Z", 2, ["2026-11-27", "2026-11-30"]),
        // Friday after Thanksgiving: Friday, then Monday.
        ("2026-11-27T14:00:00Z", 2, ["2026-11-27", "2026-11-30"]),
        // Saturday: Monday.
        ("2026-11-28T14:00:00Z", 2, ["2026-11-30", "2026-12-01"]),
        // Sunday evening in New York (already Monday in UTC): Monday.
        ("2026-11-30T03:00:00Z", 2, ["2026-11-30", "2026-12-01"]),
        // Christmas Eve, Thursday: Thursday, then Monday (Friday is Christmas Day).
        ("2026-12-24T14:00:00Z", 2, ["2026-12-24", "2026-12-28"]),
        // Thursday 2026-12-31: New Year's Day on Friday, then Monday 2027-01-04.
        ("2026-12-31T14:00:00Z", 2, ["2026-12-31", "2027-01-04"]),
    ];
    for (now, n, expected) in cases {
        let app = spawn_app_with(&capacity_config(1)).await;
        set_clock(&app, now).await;
        let token = app.live_token().await;
        let entries = create_batch(&app, &token, n).await;
        assert_eq!(
            due_dates(&app, &token, &entries).await,
            expected.map(est_day),
            "booked at {now}"
        );
    }
}

#[actix_web::test]
async fn due_date_is_the_start_of_the_booked_day_in_the_account_time_zone() {
    // 22:00 on Monday in New York is 03:00 on Tuesday in UTC: the request is due Monday.
    let app = spawn_app_with(&capacity_config(2)).await;
    set_clock(&app, "2026-11-24T03:00:00Z").await;
    let token = app.live_token().await;
    let entries = create_batch(&app, &token, 3).await;
    assert_eq!(
        due_dates(&app, &token, &entries).await,
        [MONDAY_DUE, MONDAY_DUE, TUESDAY_DUE]
    );

    // Honolulu (UTC-10): days begin at 10:00 UTC.
    let mut config = capacity_config(1);
    config
        .demo_account()
        .insert("timezone".into(), "Pacific/Honolulu".into());
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    let entries = create_batch(&app, &token, 2).await;
    assert_eq!(
        due_dates(&app, &token, &entries).await,
        [
            "2026-11-23T10:00:00.000000+00:00",
            "2026-11-24T10:00:00.000000+00:00"
        ]
    );

    // Summer time in New York (UTC-4): Monday 2027-07-05 is Independence Day observed.
    let app = spawn_app_with(&capacity_config(1)).await;
    set_clock(&app, "2027-07-05T14:00:00Z").await;
    let token = app.live_token().await;
    let entries = create_batch(&app, &token, 2).await;
    assert_eq!(
        due_dates(&app, &token, &entries).await,
        [
            "2027-07-06T04:00:00.000000+00:00",
            "2027-07-07T04:00:00.000000+00:00"
        ]
    );
}

// ---- refusals ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn zero_capacity_refuses_the_whole_post_and_creates_nothing() {
    let app = spawn_app_with(&capacity_config(0)).await;
    let live = app.live_token().await;
    let sandbox = app.sandbox_token().await;

    let (status, body) = post_requests(&app, &live, &batch_body(3)).await;
    assert_unplaceable(status, &body, "3 of 3 ");
    let (status, body) = post_requests(&app, &live, &claim_item(0)).await;
    assert_unplaceable(status, &body, "1 of 1 ");
    let (status, body) = post_requests(&app, &sandbox, &batch_body(2)).await;
    assert_unplaceable(status, &body, "2 of 2 ");

    for token in [&live, &sandbox] {
        assert_eq!(
            list_ok(
                &app,
                token,
                &[("dateFrom", "2026-01-01"), ("dateTo", "2028-01-01")]
            )
            .await,
            Vec::<Value>::new()
        );
    }
}

#[actix_web::test]
async fn a_post_that_overflows_the_365_day_horizon_is_refused_whole() {
    let app = spawn_app_with(&capacity_config(1)).await;
    let token = app.live_token().await;

    // From Monday 2026-11-23 to Tuesday 2027-11-23 there are 251 business days.
    let (status, body) = post_requests(&app, &token, &batch_body(300)).await;
    assert_unplaceable(status, &body, "49 of 300 ");
    assert_eq!(list_ok(&app, &token, &[]).await, Vec::<Value>::new());
    let (status, body) = post_requests(&app, &token, &batch_body(252)).await;
    assert_unplaceable(status, &body, "1 of 252 ");
    assert_eq!(list_ok(&app, &token, &[]).await, Vec::<Value>::new());

    // Nothing was booked: exactly 251 fit, the first today and the last on the horizon's last day.
    let mut body = batch_body(251);
    body["requests"][0]["internalId"] = json!("first-of-the-horizon");
    let (status, body) = post_requests(&app, &token, &body).await;
    assert_eq!(status, 200, "{body}");
    let entries = body["requests"].as_array().unwrap().clone();
    let listed = list_ok(&app, &token, &[("pageSize", "500")]).await;
    let due: HashMap<&str, &str> = listed
        .iter()
        .map(|r| {
            (
                r["requestId"].as_str().unwrap(),
                r["dueDate"].as_str().unwrap(),
            )
        })
        .collect();
    let dates: Vec<String> = entries
        .iter()
        .map(|e| due[e["requestId"].as_str().unwrap()].to_owned())
        .collect();
    assert_eq!(dates.first().unwrap(), MONDAY_DUE);
    assert_eq!(dates[1], TUESDAY_DUE);
    assert_eq!(dates[2], WEDNESDAY_DUE);
    assert_eq!(dates[3], est_day("2026-11-27"));
    assert_eq!(dates.last().unwrap(), &est_day("2027-11-23"));
    let mut distinct = dates.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 251, "one request per business day");
    assert_one_batch_per_day(&entries, &dates);

    let (status, body) = post_requests(&app, &token, &claim_item(0)).await;
    assert_unplaceable(status, &body, "1 of 1 ");
    // A replay books nothing, so it needs no room.
    let mut replay = claim_item(0);
    replay["internalId"] = json!("first-of-the-horizon");
    let (status, body) = post_requests(&app, &token, &replay).await;
    assert_eq!(
        (status, &body["requestId"]),
        (200, &entries[0]["requestId"])
    );
    // In a POST with new entries, only the new ones are counted.
    let (status, body) = post_requests(
        &app,
        &token,
        &json!({ "requests": [replay, claim_item(1)] }),
    )
    .await;
    assert_unplaceable(status, &body, "1 of 1 ");

    // The horizon moves with today: on Tuesday, Wednesday 2027-11-24 comes within reach.
    app.advance_clock(86_400).await;
    let token = app.live_token().await;
    let next = create_one(&app, &token).await;
    assert_eq!(
        due_dates(&app, &token, &[next]).await,
        [est_day("2027-11-24")]
    );
}

// ---- scopes ---------------------------------------------------------------------------------------------

#[actix_web::test]
async fn sandbox_and_production_keep_separate_ledgers() {
    let app = spawn_app_with(&capacity_config(2)).await;
    let live = app.live_token().await;
    let sandbox = app.sandbox_token().await;

    let production = create_batch(&app, &live, 2).await;
    let sandbox_first = create_one(&app, &sandbox).await;
    let sandbox_batch = create_batch(&app, &sandbox, 2).await;
    let production_next = create_one(&app, &live).await;

    assert_eq!(
        due_dates(&app, &live, &production).await,
        [MONDAY_DUE, MONDAY_DUE]
    );
    assert_eq!(
        due_dates(&app, &sandbox, &[sandbox_first]).await,
        [MONDAY_DUE],
        "production's full Monday leaves the sandbox's Monday free"
    );
    assert_eq!(
        due_dates(&app, &sandbox, &sandbox_batch).await,
        [MONDAY_DUE, TUESDAY_DUE]
    );
    assert_eq!(
        due_dates(&app, &live, &[production_next]).await,
        [TUESDAY_DUE],
        "the sandbox's bookings leave production's Tuesday free"
    );
}

#[actix_web::test]
async fn accounts_keep_separate_ledgers() {
    let app = spawn_app_with(&capacity_config(1)).await;
    let body = json!({
        "daily_call_capacity": 1,
        "timezone": "America/New_York",
        "features": [],
        "schemas": ["claim-status-basic"],
        "credentials": [{ "environment": "production", "key": "sk_live_other_2", "secret": "other-secret-2" }],
    });
    let response = app
        .admin(Method::PUT, "/admin/v1/accounts/other", Some(body))
        .await;
    assert_eq!(response.status(), 201);
    let demo = app.live_token().await;
    let other = app.token("sk_live_other_2", "other-secret-2").await;

    let demo_entry = create_one(&app, &demo).await;
    let other_entry = create_one(&app, &other).await;

    assert_eq!(due_dates(&app, &demo, &[demo_entry]).await, [MONDAY_DUE]);
    assert_eq!(due_dates(&app, &other, &[other_entry]).await, [MONDAY_DUE]);
}

// ---- durability -----------------------------------------------------------------------------------------

/// POST /v1/requests on a binary server: status and body.
async fn binary_post(
    client: &reqwest::Client,
    server: &BinaryServer,
    token: &str,
    body: &Value,
) -> (u16, Value) {
    let response = client
        .post(server.url("/v1/requests"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

/// The due date of a request on a binary server.
async fn binary_due(
    client: &reqwest::Client,
    server: &BinaryServer,
    token: &str,
    id: &str,
) -> String {
    let response = client
        .get(server.url(&format!("/v1/requests/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body["dueDate"].as_str().unwrap().to_owned()
}

/// Starts the binary and waits until `/readyz` answers 200.
async fn start_ready(client: &reqwest::Client, config: &Path, data_dir: &Path) -> BinaryServer {
    let server = BinaryServer::start(config, data_dir);
    for _ in 0..50 {
        if let Ok(response) = client.get(server.url("/readyz")).send().await {
            if response.status() == 200 {
                return server;
            }
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not become ready within 5 s");
}

/// Books two requests on Monday at capacity 2, stops the server with `stop`, restarts it on the same data
/// directory (the manual clock starts on the same Monday again) and checks that Monday is still full.
async fn bookings_survive(stop: fn(BinaryServer)) {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &capacity_config(2));
    let client = client();

    let server = start_ready(&client, &config, data_dir.path()).await;
    let token = server.live_token().await;
    let (status, body) = binary_post(&client, &server, &token, &batch_body(2)).await;
    assert_eq!(status, 200, "{body}");
    let booked: Vec<String> = ids(body["requests"].as_array().unwrap());
    stop(server);

    let server = start_ready(&client, &config, data_dir.path()).await;
    let token = server.live_token().await;
    for id in &booked {
        assert_eq!(binary_due(&client, &server, &token, id).await, MONDAY_DUE);
    }
    let (status, body) = binary_post(&client, &server, &token, &claim_item(0)).await;
    assert_eq!(status, 200, "{body}");
    let next = body["requestId"].as_str().unwrap();
    assert_eq!(
        binary_due(&client, &server, &token, next).await,
        TUESDAY_DUE
    );
    // The sandbox ledger was empty and still is.
    let sandbox = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let (status, body) = binary_post(&client, &server, &sandbox, &claim_item(0)).await;
    assert_eq!(status, 200, "{body}");
    let sandboxed = body["requestId"].as_str().unwrap();
    assert_eq!(
        binary_due(&client, &server, &sandbox, sandboxed).await,
        MONDAY_DUE
    );
    assert_eq!(server.terminate(), Some(0));
}

#[actix_web::test]
async fn bookings_survive_a_restart() {
    bookings_survive(|server| assert_eq!(server.terminate(), Some(0))).await;
}

#[actix_web::test]
async fn acknowledged_bookings_survive_kill_9() {
    bookings_survive(BinaryServer::kill_hard).await;
}
