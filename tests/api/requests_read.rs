//! Reading requests back (service-interface 2.4, 4.7, 4.8, 8): the single read's full shape, who can see a
//! request, the list's date windows and batch filter, its order, and its keyset pagination with opaque,
//! tamper-evident page tokens.

use std::collections::HashSet;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig};

// ---- helpers (also used by the scheduling tests) -------------------------------------------------------

/// The only schema these tests create requests against.
pub(crate) const SCHEMA: &str = "claim-status-basic";
/// The manual clock's first instant as the API writes it.
pub(crate) const START_WIRE: &str = "2026-11-23T14:00:00.000000+00:00";
/// Monday 2026-11-23 begins at 05:00 UTC in America/New_York.
pub(crate) const MONDAY_DUE: &str = "2026-11-23T05:00:00.000000+00:00";

/// The test configuration with no account features, so a request needs its `phoneNumber` and no payer
/// lookup runs.
pub(crate) fn plain_config() -> TestConfig {
    let mut config = TestConfig::default();
    config.features(&[]);
    config
}

/// Valid `claim-status-basic` inputs; `n` makes the member id distinct.
pub(crate) fn claim_inputs(n: usize) -> Value {
    json!({
        "payerName": "Aetna",
        "phoneNumber": "8005550123",
        "memberId": format!("M{n:06}"),
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "1980-04-12",
        "dateOfService": "2026-10-01",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
    })
}

/// One valid request item.
pub(crate) fn claim_item(n: usize) -> Value {
    json!({ "schemaId": SCHEMA, "inputs": claim_inputs(n) })
}

/// `POST /v1/requests` with `body`: status and JSON body.
pub(crate) async fn post_requests(app: &TestApp, token: &str, body: &Value) -> (u16, Value) {
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

/// A single-item POST of a valid request; the create answer `{requestId, requestBatchId}`.
pub(crate) async fn create_one(app: &TestApp, token: &str) -> Value {
    let (status, body) = post_requests(app, token, &claim_item(0)).await;
    assert_eq!(status, 200, "single create: {body}");
    body
}

/// One batch POST of `n` valid requests (at most 500), which must all be created: the entries in order.
pub(crate) async fn create_batch(app: &TestApp, token: &str, n: usize) -> Vec<Value> {
    let items: Vec<Value> = (0..n).map(claim_item).collect();
    let (status, body) = post_requests(app, token, &json!({ "requests": items })).await;
    assert_eq!(status, 200, "batch of {n}: {body}");
    let entries = body["requests"].as_array().unwrap().clone();
    assert_eq!(entries.len(), n);
    entries
}

/// Creates `n` valid requests in batches of up to 500: the create entries in order.
pub(crate) async fn create_many(app: &TestApp, token: &str, n: usize) -> Vec<Value> {
    let mut entries = Vec::with_capacity(n);
    let mut left = n;
    while left > 0 {
        let size = left.min(500);
        entries.extend(create_batch(app, token, size).await);
        left -= size;
    }
    entries
}

/// `GET path` with a bearer token: status and JSON body.
pub(crate) async fn get_json(app: &TestApp, path: &str, token: &str) -> (u16, Value) {
    status_and_json(app.get(path, token).await).await
}

/// `GET /v1/requests/{id}`, which must answer 200, declared as JSON: the request.
pub(crate) async fn read(app: &TestApp, token: &str, id: &str) -> Value {
    let response = app.get(&format!("/v1/requests/{id}"), token).await;
    let content_type = response.headers().get("content-type").cloned();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "GET request {id}: {body}");
    assert_eq!(
        content_type.as_ref().map(|v| v.to_str().unwrap()),
        Some("application/json"),
        "content type of GET request {id}"
    );
    body
}

/// `GET /v1/requests` with query parameters (encoded here): status and JSON body.
pub(crate) async fn list(app: &TestApp, token: &str, query: &[(&str, &str)]) -> (u16, Value) {
    let response = app
        .client
        .get(app.url("/v1/requests"))
        .bearer_auth(token)
        .query(query)
        .send()
        .await
        .unwrap();
    status_and_json(response).await
}

/// `GET /v1/requests`, which must answer 200 with a single page: the requests listed.
pub(crate) async fn list_ok(app: &TestApp, token: &str, query: &[(&str, &str)]) -> Vec<Value> {
    let (status, body) = list(app, token, query).await;
    assert_eq!(status, 200, "list {query:?}: {body}");
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["requests"],
        "one page only, no nextPageToken: {query:?}"
    );
    body["requests"].as_array().unwrap().clone()
}

/// The `requestId`s of a list of requests or create entries.
pub(crate) fn ids(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| e["requestId"].as_str().unwrap().to_owned())
        .collect()
}

/// `ids`, sorted, for comparisons where order does not matter.
fn sorted_ids(entries: &[Value]) -> Vec<String> {
    let mut ids = ids(entries);
    ids.sort();
    ids
}

/// The `RequestResponse` of a fresh `claim-status-basic` request created by `claim_item(n)` at the start
/// of the manual clock, with no internal id or tag and no account features.
fn fresh_request(id: &str, batch_id: &str, n: usize) -> Value {
    json!({
        "requestId": id,
        "requestBatchId": batch_id,
        "schemaId": SCHEMA,
        "requestType": "claim-status",
        "state": "PROCESSING",
        "inputs": claim_inputs(n),
        "results": {},
        "missingFields": [],
        "dateCreated": START_WIRE,
        "completedAt": null,
        "dueDate": MONDAY_DUE,
        "internalId": null,
        "internalTag": null,
        "modality": null,
        "data_completeness": null,
        "error": null,
        "resultSummary": null,
    })
}

/// `listed` as the single read shows it: with the request's `cost` (nothing yet on a fresh request).
fn single_read(listed: &Value) -> Value {
    let mut single = listed.clone();
    single["cost"] =
        json!({"currency": "USD", "amount": "0.00", "calls": "0.00", "electronic": "0.00"});
    single
}

/// Asserts a 400 `INVALID_REQUEST` envelope whose message mentions every one of `mentions`.
fn assert_invalid_request(status: u16, body: &Value, mentions: &[&str], description: &str) {
    assert_eq!(status, 400, "{description}: {body}");
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["error", "message"],
        "{description}: {body}"
    );
    assert_eq!(body["error"], "INVALID_REQUEST", "{description}: {body}");
    let message = body["message"].as_str().unwrap();
    for mention in mentions {
        assert!(
            message.contains(mention),
            "{description}: message {message:?} does not mention {mention:?}"
        );
    }
}

/// Follows `nextPageToken` from the first page of `query` to the last: the ids of each page. Checks that a
/// token is a top-level non-empty string present on every page but the last.
async fn walk_pages(app: &TestApp, token: &str, query: &[(&str, &str)]) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut page_token: Option<String> = None;
    loop {
        let mut params: Vec<(&str, &str)> = query.to_vec();
        if let Some(page_token) = &page_token {
            params.push(("pageToken", page_token));
        }
        let (status, body) = list(app, token, &params).await;
        assert_eq!(status, 200, "page {} of {query:?}: {body}", pages.len() + 1);
        pages.push(ids(body["requests"].as_array().unwrap()));
        assert!(pages.len() <= 20, "pagination does not end");
        match body.get("nextPageToken") {
            None => {
                assert_eq!(body.as_object().unwrap().len(), 1, "{body}");
                return pages;
            }
            Some(next) => {
                assert_eq!(body.as_object().unwrap().len(), 2, "{body}");
                let next = next.as_str().expect("nextPageToken is a string");
                assert!(!next.is_empty());
                page_token = Some(next.to_owned());
            }
        }
    }
}

/// The other account: its own production and sandbox pairs and the claim-status schema.
async fn put_other_account(app: &TestApp) -> (String, String) {
    let body = json!({
        "daily_call_capacity": 10,
        "timezone": "UTC",
        "features": [],
        "schemas": [SCHEMA],
        "credentials": [
            { "environment": "production", "key": "sk_live_other_1", "secret": "other-live-secret-1" },
            { "environment": "sandbox", "key": "sk_test_other_1", "secret": "other-sandbox-secret-1" },
        ],
    });
    let response = app
        .admin(Method::PUT, "/admin/v1/accounts/other", Some(body))
        .await;
    assert_eq!(response.status(), 201, "creating account other");
    (
        app.token("sk_live_other_1", "other-live-secret-1").await,
        app.token("sk_test_other_1", "other-sandbox-secret-1").await,
    )
}

// ---- 4.7: the single read ----------------------------------------------------------------------------

#[actix_web::test]
async fn a_new_request_reads_back_with_every_field_of_the_request_shape() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let created = create_one(&app, &token).await;
    let id = created["requestId"].as_str().unwrap();
    let batch_id = created["requestBatchId"].as_str().unwrap();

    let body = read(&app, &token, id).await;

    assert_eq!(body, single_read(&fresh_request(id, batch_id, 0)));
    let timestamp = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$").unwrap();
    for key in ["dateCreated", "dueDate"] {
        let value = body[key].as_str().unwrap();
        assert!(timestamp.is_match(value), "{key} {value:?}");
    }
}

#[actix_web::test]
async fn answers_carrying_request_data_tell_every_cache_not_to_keep_them() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let created = create_one(&app, &token).await;
    let id = created["requestId"].as_str().unwrap();
    for path in [format!("/v1/requests/{id}"), "/v1/requests".to_owned()] {
        let response = app.get(&path, &token).await;
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["cache-control"], "no-store", "{path}");
    }
    // The console's API shows the same data to operators.
    let path = format!("/console/api/requests/{id}?account=demo&environment=production");
    let response = app.admin(Method::GET, &path, None).await;
    assert_eq!(response.status(), 200, "{path}");
    assert_eq!(response.headers()["cache-control"], "no-store", "{path}");
}

#[actix_web::test]
async fn date_created_keeps_the_microseconds_of_the_creation_instant() {
    let app = spawn_app_with(&plain_config()).await;
    let response = app
        .admin(
            Method::POST,
            "/admin/v1/clock",
            Some(json!({ "set": "2026-11-23T15:04:05.123456Z" })),
        )
        .await;
    assert_eq!(response.status(), 200);
    let token = app.live_token().await;
    let created = create_one(&app, &token).await;

    let body = read(&app, &token, created["requestId"].as_str().unwrap()).await;

    assert_eq!(body["dateCreated"], "2026-11-23T15:04:05.123456+00:00");
    assert_eq!(body["dueDate"], MONDAY_DUE);
}

#[actix_web::test]
async fn internal_id_and_internal_tag_are_echoed_on_both_reads_when_supplied() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let mut item = claim_item(0);
    item["internalId"] = json!("crm-4711");
    item["internalTag"] = json!("cohort-b");
    let (status, created) = post_requests(&app, &token, &item).await;
    assert_eq!(status, 200, "{created}");
    let id = created["requestId"].as_str().unwrap();
    let batch_id = created["requestBatchId"].as_str().unwrap();
    let mut expected = fresh_request(id, batch_id, 0);
    expected["internalId"] = json!("crm-4711");
    expected["internalTag"] = json!("cohort-b");

    assert_eq!(read(&app, &token, id).await, single_read(&expected));
    assert_eq!(list_ok(&app, &token, &[]).await, [expected]);
}

#[actix_web::test]
async fn only_one_of_internal_id_and_internal_tag_leaves_the_other_key_present_as_null() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let mut tagged = claim_item(1);
    tagged["internalTag"] = json!("only-a-tag");
    let mut keyed = claim_item(2);
    keyed["internalId"] = json!("only-an-id");
    let (status, created) =
        post_requests(&app, &token, &json!({ "requests": [tagged, keyed] })).await;
    assert_eq!(status, 200, "{created}");

    let tagged = read(
        &app,
        &token,
        created["requests"][0]["requestId"].as_str().unwrap(),
    )
    .await;
    let keyed = read(
        &app,
        &token,
        created["requests"][1]["requestId"].as_str().unwrap(),
    )
    .await;

    assert_eq!(
        (&tagged["internalId"], &tagged["internalTag"]),
        (&Value::Null, &json!("only-a-tag"))
    );
    assert_eq!(
        (&keyed["internalId"], &keyed["internalTag"]),
        (&json!("only-an-id"), &Value::Null)
    );
}

#[actix_web::test]
async fn payer_lookup_is_on_both_reads_only_with_the_payer_phone_lookup_feature() {
    let mut config = TestConfig::default();
    config.features(&["payer_phone_lookup"]);
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    let created = create_one(&app, &token).await;
    let id = created["requestId"].as_str().unwrap();
    let mut expected = fresh_request(id, created["requestBatchId"].as_str().unwrap(), 0);
    expected["payerLookup"] = json!({
        "inputPayerName": "Aetna",
        "inputPhoneNumber": "8005550123",
        "matchedPayerName": null,
        "matchedPayerPhone": null,
        "phoneNumberToUse": "8005550123",
        "phoneNumberSource": "input",
    });

    assert_eq!(read(&app, &token, id).await, single_read(&expected));
    assert_eq!(list_ok(&app, &token, &[]).await, [expected]);

    // Without the feature the key is absent on both reads (not null).
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let created = create_one(&app, &token).await;
    let single = read(&app, &token, created["requestId"].as_str().unwrap()).await;
    let listed = list_ok(&app, &token, &[]).await;
    assert!(single.get("payerLookup").is_none(), "{single}");
    assert!(listed[0].get("payerLookup").is_none(), "{}", listed[0]);
}

#[actix_web::test]
async fn an_unknown_request_id_is_404_request_not_found() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    create_one(&app, &token).await;

    for id in [
        "nope",
        "00000000-0000-0000-0000-000000000000",
        "0193a1b2-0000-7000-8000-000000000000",
    ] {
        let (status, body) = get_json(&app, &format!("/v1/requests/{id}"), &token).await;
        assert_eq!(
            (status, body),
            (
                404,
                json!({ "error": "REQUEST_NOT_FOUND", "message": format!("Request '{id}' was not found") })
            ),
            "{id}"
        );
    }
}

#[actix_web::test]
async fn a_request_is_404_from_the_other_environment_of_the_same_account() {
    let app = spawn_app_with(&plain_config()).await;
    let live = app.live_token().await;
    let sandbox = app.sandbox_token().await;
    let production_id = create_one(&app, &live).await["requestId"]
        .as_str()
        .unwrap()
        .to_owned();
    let sandbox_id = create_one(&app, &sandbox).await["requestId"]
        .as_str()
        .unwrap()
        .to_owned();

    for (token, id, description) in [
        (
            &sandbox,
            &production_id,
            "sandbox token, production request",
        ),
        (&live, &sandbox_id, "production token, sandbox request"),
    ] {
        let (status, body) = get_json(&app, &format!("/v1/requests/{id}"), token).await;
        assert_eq!(
            (status, &body["error"]),
            (404, &json!("REQUEST_NOT_FOUND")),
            "{description}: {body}"
        );
    }
    assert_eq!(
        read(&app, &live, &production_id).await["requestId"],
        *production_id
    );
    assert_eq!(
        read(&app, &sandbox, &sandbox_id).await["requestId"],
        *sandbox_id
    );
}

#[actix_web::test]
async fn a_request_is_404_and_unlisted_for_another_account() {
    let app = spawn_app_with(&plain_config()).await;
    let demo = app.live_token().await;
    let demo_sandbox = app.sandbox_token().await;
    let (other, other_sandbox) = put_other_account(&app).await;
    let demo_created = create_one(&app, &demo).await;
    let demo_id = demo_created["requestId"].as_str().unwrap().to_owned();
    let demo_batch = demo_created["requestBatchId"].as_str().unwrap();
    let other_id = create_one(&app, &other).await["requestId"]
        .as_str()
        .unwrap()
        .to_owned();

    for (token, id, description) in [
        (&other, &demo_id, "other account reads demo's request"),
        (
            &other_sandbox,
            &demo_id,
            "other's sandbox reads demo's request",
        ),
        (&demo, &other_id, "demo reads other's request"),
        (
            &demo_sandbox,
            &other_id,
            "demo's sandbox reads other's request",
        ),
    ] {
        let (status, body) = get_json(&app, &format!("/v1/requests/{id}"), token).await;
        assert_eq!(
            (status, &body["error"]),
            (404, &json!("REQUEST_NOT_FOUND")),
            "{description}: {body}"
        );
    }
    assert_eq!(ids(&list_ok(&app, &demo, &[]).await), [demo_id]);
    assert_eq!(ids(&list_ok(&app, &other, &[]).await), [other_id]);
    assert_eq!(
        list_ok(&app, &other_sandbox, &[]).await,
        Vec::<Value>::new()
    );
    // Nor does another account's batch id list anything.
    assert_eq!(
        list_ok(&app, &other, &[("requestBatchId", demo_batch)]).await,
        Vec::<Value>::new()
    );
}

#[actix_web::test]
async fn every_created_request_is_readable_and_listed_immediately_after_the_create_answers() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let mut created = Vec::new();
    for round in 0..10 {
        let single = create_one(&app, &token).await;
        read(&app, &token, single["requestId"].as_str().unwrap()).await;
        let batch = create_batch(&app, &token, 5).await;
        for entry in &batch {
            read(&app, &token, entry["requestId"].as_str().unwrap()).await;
        }
        created.push(single);
        created.extend(batch);
        let listed = list_ok(&app, &token, &[("pageSize", "500")]).await;
        assert_eq!(listed.len(), created.len(), "after round {round}");
    }
    let listed = list_ok(&app, &token, &[("pageSize", "500")]).await;
    assert_eq!(sorted_ids(&listed), sorted_ids(&created));
}

// ---- 4.8: the list -------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_default_list_window_is_today_in_utc_and_entries_have_the_read_shape() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let created = create_batch(&app, &token, 3).await;

    let listed = list_ok(&app, &token, &[]).await;

    assert_eq!(sorted_ids(&listed), sorted_ids(&created));
    for (n, entry) in created.iter().enumerate() {
        let id = entry["requestId"].as_str().unwrap();
        let expected = fresh_request(id, entry["requestBatchId"].as_str().unwrap(), n);
        let listed_entry = listed.iter().find(|r| r["requestId"] == id).unwrap();
        assert_eq!(*listed_entry, expected, "list entry {n}");
        assert_eq!(
            read(&app, &token, id).await,
            single_read(&expected),
            "single read {n}"
        );
    }

    // A day later the default window (today, UTC) no longer holds them; an explicit window does.
    app.advance_clock(86_400).await;
    // Bearer tokens live an hour of the (manual) clock.
    let token = app.live_token().await;
    assert_eq!(list_ok(&app, &token, &[]).await, Vec::<Value>::new());
    let listed = list_ok(&app, &token, &[("dateFrom", "2026-11-23")]).await;
    assert_eq!(sorted_ids(&listed), sorted_ids(&created));
}

#[actix_web::test]
async fn the_default_window_follows_the_utc_date_not_the_account_time_zone() {
    let app = spawn_app_with(&plain_config()).await;
    // 23:30 UTC on Monday is 18:30 in New York.
    let response = app
        .admin(
            Method::POST,
            "/admin/v1/clock",
            Some(json!({ "set": "2026-11-23T23:30:00Z" })),
        )
        .await;
    assert_eq!(response.status(), 200);
    let token = app.live_token().await;
    let created = create_one(&app, &token).await;
    assert_eq!(
        ids(&list_ok(&app, &token, &[]).await),
        ids(std::slice::from_ref(&created))
    );

    // 01:00 UTC on Tuesday is still Monday evening in New York, but Tuesday in UTC.
    app.advance_clock(5_400).await;
    let token = app.live_token().await;
    assert_eq!(list_ok(&app, &token, &[]).await, Vec::<Value>::new());
    let listed = list_ok(
        &app,
        &token,
        &[("dateFrom", "2026-11-23"), ("dateTo", "2026-11-24")],
    )
    .await;
    assert_eq!(ids(&listed), ids(&[created]));
}

#[actix_web::test]
async fn date_from_is_inclusive_and_date_to_is_exclusive() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let monday = create_batch(&app, &token, 1).await;
    app.advance_clock(86_400).await;
    let token = app.live_token().await;
    let tuesday = create_batch(&app, &token, 2).await;
    app.advance_clock(86_400).await;
    let token = app.live_token().await;
    let wednesday = create_batch(&app, &token, 1).await;
    let all: Vec<Value> = [&monday, &tuesday, &wednesday]
        .into_iter()
        .flatten()
        .cloned()
        .collect();

    type Case<'a> = (&'a [(&'a str, &'a str)], Vec<Value>);
    let cases: [Case; 8] = [
        (
            &[("dateFrom", "2026-11-23"), ("dateTo", "2026-11-24")],
            monday.clone(),
        ),
        (
            &[("dateFrom", "2026-11-24"), ("dateTo", "2026-11-25")],
            tuesday.clone(),
        ),
        (
            &[("dateFrom", "2026-11-23"), ("dateTo", "2026-11-26")],
            all.clone(),
        ),
        (
            &[("dateFrom", "2026-11-22"), ("dateTo", "2026-12-31")],
            all.clone(),
        ),
        // dateTo defaults to tomorrow (UTC): Thursday.
        (
            &[("dateFrom", "2026-11-24")],
            [tuesday.clone(), wednesday.clone()].concat(),
        ),
        // dateFrom defaults to today (UTC): Wednesday.
        (&[("dateTo", "2026-11-26")], wednesday.clone()),
        (&[("dateTo", "2026-11-25")], vec![]),
        (
            &[("dateFrom", "2026-11-26"), ("dateTo", "2026-11-23")],
            vec![],
        ),
    ];
    for (query, expected) in cases {
        let listed = list_ok(&app, &token, query).await;
        assert_eq!(sorted_ids(&listed), sorted_ids(&expected), "{query:?}");
    }

    let listed = list_ok(
        &app,
        &token,
        &[("dateFrom", "2026-11-24"), ("dateTo", "2026-11-25")],
    )
    .await;
    for entry in &listed {
        assert_eq!(entry["dateCreated"], "2026-11-24T14:00:00.000000+00:00");
    }
}

#[actix_web::test]
async fn invalid_dates_are_400_invalid_request_naming_the_parameter() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;

    for parameter in ["dateFrom", "dateTo"] {
        for raw in [
            "2026-13-01",
            "2026-02-30",
            "2026-00-10",
            "11/23/2026",
            "x",
            "2026-1-5",
            "20261123",
            "2026-11-23T00:00:00Z",
            "-2026-11-23",
        ] {
            let (status, body) = list(&app, &token, &[(parameter, raw)]).await;
            assert_invalid_request(status, &body, &[parameter], &format!("{parameter}={raw:?}"));
            // A batch id makes the dates irrelevant, not a malformed one acceptable.
            let (status, body) = list(
                &app,
                &token,
                &[("requestBatchId", "any-batch"), (parameter, raw)],
            )
            .await;
            assert_invalid_request(
                status,
                &body,
                &[parameter],
                &format!("requestBatchId with {parameter}={raw:?}"),
            );
        }
    }
    // Both wrong: still a 400.
    let (status, body) = list(&app, &token, &[("dateFrom", "x"), ("dateTo", "y")]).await;
    assert_invalid_request(status, &body, &["date"], "both dates wrong");
    // A leap day is a date.
    list_ok(&app, &token, &[("dateFrom", "2028-02-29")]).await;
}

#[actix_web::test]
async fn lists_are_sorted_by_date_created_newest_first() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let mut created = Vec::new();
    for _ in 0..4 {
        created.push(create_one(&app, &token).await);
        app.advance_clock(7).await;
        created.extend(create_batch(&app, &token, 2).await);
        app.advance_clock(60).await;
    }

    let listed = list_ok(&app, &token, &[]).await;

    assert_eq!(sorted_ids(&listed), sorted_ids(&created));
    let stamps: Vec<&str> = listed
        .iter()
        .map(|r| r["dateCreated"].as_str().unwrap())
        .collect();
    let mut descending = stamps.clone();
    descending.sort_by(|a, b| b.cmp(a));
    assert_eq!(stamps, descending);
    assert_eq!(stamps.first(), Some(&"2026-11-23T14:03:28.000000+00:00"));
    assert_eq!(stamps.last(), Some(&START_WIRE));
    // The single POSTs (each alone at its instant) come in reverse creation order.
    let singles: Vec<String> = ids(&created).into_iter().step_by(3).rev().collect();
    let listed_singles: Vec<String> = ids(&listed)
        .into_iter()
        .filter(|id| singles.contains(id))
        .collect();
    assert_eq!(listed_singles, singles);
}

#[actix_web::test]
async fn a_single_create_is_a_batch_of_one_named_by_its_request_id_even_among_concurrent_ones() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    // Sent at once, so the store writes many of them in one group commit.
    let items: Vec<Value> = (0..12).map(claim_item).collect();
    let posts = items.iter().map(|item| post_requests(&app, &token, item));
    let created: Vec<Value> = futures::future::join_all(posts)
        .await
        .into_iter()
        .map(|(status, body)| {
            assert_eq!(status, 200, "{body}");
            body
        })
        .collect();
    let listed = list_ok(&app, &token, &[]).await;
    assert_eq!(sorted_ids(&listed), sorted_ids(&created));
    for single in &created {
        let id = single["requestId"].as_str().unwrap();
        assert_eq!(single["requestBatchId"], id, "{single}");
        assert_eq!(read(&app, &token, id).await["requestBatchId"], id);
        let batch = list_ok(&app, &token, &[("requestBatchId", id)]).await;
        assert_eq!(ids(&batch), [id], "its batch is itself alone");
        // The batch the store keeps it in is no client's batch.
        let stored_in = format!("{}0000", &id[..id.len() - 4]);
        assert_eq!(
            list_ok(&app, &token, &[("requestBatchId", &stored_in)]).await,
            Vec::<Value>::new()
        );
    }
}

#[actix_web::test]
async fn a_request_batch_id_lists_its_whole_batch_regardless_of_dates() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let batch = create_batch(&app, &token, 3).await;
    let batch_id = batch[0]["requestBatchId"].as_str().unwrap().to_owned();
    assert!(batch.iter().all(|e| e["requestBatchId"] == *batch_id));
    let single = create_one(&app, &token).await;
    assert_ne!(single["requestBatchId"], *batch_id);

    app.advance_clock(3 * 86_400).await;
    let token = app.live_token().await;

    assert_eq!(list_ok(&app, &token, &[]).await, Vec::<Value>::new());
    let listed = list_ok(&app, &token, &[("requestBatchId", &batch_id)]).await;
    assert_eq!(sorted_ids(&listed), sorted_ids(&batch));
    assert!(listed.iter().all(|r| r["requestBatchId"] == *batch_id));
    // The batch id overrides a window that holds none of it.
    let listed = list_ok(
        &app,
        &token,
        &[
            ("requestBatchId", &batch_id),
            ("dateFrom", "2030-01-01"),
            ("dateTo", "2030-01-02"),
        ],
    )
    .await;
    assert_eq!(sorted_ids(&listed), sorted_ids(&batch));
    // ...and a window that holds more than it.
    let listed = list_ok(
        &app,
        &token,
        &[
            ("requestBatchId", &batch_id),
            ("dateFrom", "2026-11-01"),
            ("dateTo", "2026-12-01"),
        ],
    )
    .await;
    assert_eq!(sorted_ids(&listed), sorted_ids(&batch));
    let single_batch = single["requestBatchId"].as_str().unwrap();
    assert_eq!(
        ids(&list_ok(&app, &token, &[("requestBatchId", single_batch)]).await),
        ids(&[single])
    );
    assert_eq!(
        list_ok(&app, &token, &[("requestBatchId", "no-such-batch")]).await,
        Vec::<Value>::new()
    );
}

#[actix_web::test]
async fn a_request_batch_id_from_the_other_environment_lists_nothing() {
    let app = spawn_app_with(&plain_config()).await;
    let live = app.live_token().await;
    let sandbox = app.sandbox_token().await;
    let batch = create_batch(&app, &live, 2).await;
    let batch_id = batch[0]["requestBatchId"].as_str().unwrap();

    assert_eq!(
        list_ok(&app, &sandbox, &[("requestBatchId", batch_id)]).await,
        Vec::<Value>::new()
    );
    assert_eq!(
        list_ok(&app, &live, &[("requestBatchId", batch_id)])
            .await
            .len(),
        2
    );
}

#[actix_web::test]
async fn sandbox_and_production_lists_are_separate() {
    let app = spawn_app_with(&plain_config()).await;
    let live = app.live_token().await;
    let sandbox = app.sandbox_token().await;
    let production = create_batch(&app, &live, 2).await;
    let sandboxed = create_batch(&app, &sandbox, 3).await;

    assert_eq!(
        sorted_ids(&list_ok(&app, &live, &[]).await),
        sorted_ids(&production)
    );
    assert_eq!(
        sorted_ids(&list_ok(&app, &sandbox, &[]).await),
        sorted_ids(&sandboxed)
    );
}

// ---- pagination ----------------------------------------------------------------------------------------

#[actix_web::test]
async fn two_hundred_fifty_requests_come_in_pages_of_100_100_and_50() {
    let mut config = plain_config();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1000.into());
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    // All 250 share one creation instant, so the cursor's tie-break on the id is what keeps pages apart.
    let created = create_many(&app, &token, 250).await;

    for query in [vec![("pageSize", "100")], vec![]] {
        let pages = walk_pages(&app, &token, &query).await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, [100, 100, 50], "{query:?}");
        let all: Vec<String> = pages.concat();
        let unique: HashSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), 250, "no duplicates across pages");
        let mut all_sorted = all.clone();
        all_sorted.sort();
        assert_eq!(
            all_sorted,
            sorted_ids(&created),
            "the union is every request"
        );
    }
    // Pages of one walk are in the same order as one big page.
    let one_page = ids(&list_ok(&app, &token, &[("pageSize", "500")]).await);
    assert_eq!(
        walk_pages(&app, &token, &[("pageSize", "100")])
            .await
            .concat(),
        one_page
    );
}

#[actix_web::test]
async fn pagination_is_stable_across_creation_instants_and_within_a_batch() {
    let mut config = plain_config();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1000.into());
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    let mut created = Vec::new();
    for _ in 0..7 {
        created.extend(create_batch(&app, &token, 9).await);
        app.advance_clock(1).await;
    }
    let batch = create_batch(&app, &token, 23).await;
    created.extend(batch.clone());

    let pages = walk_pages(&app, &token, &[("pageSize", "10")]).await;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [10, 10, 10, 10, 10, 10, 10, 10, 6]);
    let mut all = pages.concat();
    assert_eq!(
        all,
        ids(&list_ok(&app, &token, &[("pageSize", "500")]).await)
    );
    all.sort();
    assert_eq!(all, sorted_ids(&created));

    let batch_id = batch[0]["requestBatchId"].as_str().unwrap();
    let pages = walk_pages(
        &app,
        &token,
        &[("requestBatchId", batch_id), ("pageSize", "5")],
    )
    .await;
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [5, 5, 5, 5, 3]);
    let mut all = pages.concat();
    all.sort();
    assert_eq!(all, sorted_ids(&batch));
}

#[actix_web::test]
async fn a_page_size_above_500_is_capped_at_500() {
    let mut config = plain_config();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1000.into());
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    let created = create_many(&app, &token, 510).await;

    for size in ["501", "1000", "500"] {
        let pages = walk_pages(&app, &token, &[("pageSize", size)]).await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, [500, 10], "pageSize={size}");
        let mut all = pages.concat();
        all.sort();
        assert_eq!(all, sorted_ids(&created));
    }
}

#[actix_web::test]
async fn a_page_size_that_is_not_a_positive_integer_is_400() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    create_one(&app, &token).await;

    for raw in ["0", "-1", "abc", "1.5", "1e2", "0x10"] {
        let (status, body) = list(&app, &token, &[("pageSize", raw)]).await;
        assert_invalid_request(status, &body, &["pageSize"], &format!("pageSize={raw:?}"));
    }
    assert_eq!(list_ok(&app, &token, &[("pageSize", "1")]).await.len(), 1);
}

#[actix_web::test]
async fn a_tampered_forged_or_foreign_page_token_is_400_invalid_request_never_500() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let batch = create_batch(&app, &token, 3).await;
    let batch_id = batch[0]["requestBatchId"].as_str().unwrap();
    let (status, first) = list(&app, &token, &[("pageSize", "1")]).await;
    assert_eq!(status, 200, "{first}");
    let good = first["nextPageToken"].as_str().unwrap().to_owned();

    let flip = |text: &str, at: usize| {
        let mut bytes = text.as_bytes().to_vec();
        bytes[at] = match bytes[at] {
            b'0' => b'1',
            b'.' => b'-',
            _ => b'0',
        };
        String::from_utf8(bytes).unwrap()
    };
    let forged_payload = hex::encode(format!(
        "1:0:{}:0000000000000000",
        batch[0]["requestId"].as_str().unwrap()
    ));
    let tampered = [
        flip(&good, 0),
        flip(&good, good.len() / 2),
        flip(&good, good.len() - 1),
        good[..good.len() - 1].to_owned(),
        format!("{good}0"),
        format!("{good}.extra"),
        good.to_uppercase(),
        good.replace('.', ""),
        good.split('.').next().unwrap().to_owned(),
        format!(".{}", good.split('.').nth(1).unwrap()),
        format!("{forged_payload}.{}", good.split('.').nth(1).unwrap()),
        "abc".to_owned(),
        ".".to_owned(),
        "..".to_owned(),
        "not-a-token".to_owned(),
        "zz.zz".to_owned(),
        "eyJjdXJzb3IiOjF9".to_owned(),
        "%%%".to_owned(),
        "é.ü".to_owned(),
        "a".repeat(5000),
    ];
    for bad in &tampered {
        let (status, body) = list(&app, &token, &[("pageSize", "1"), ("pageToken", bad)]).await;
        assert_invalid_request(status, &body, &["pageToken"], &format!("pageToken {bad:?}"));
    }

    // A genuine token belongs to its own query only (the page size may change).
    let foreign_queries: [&[(&str, &str)]; 4] = [
        &[("dateFrom", "2026-11-22")],
        &[("dateTo", "2026-11-25")],
        &[("dateFrom", "2026-11-23"), ("dateTo", "2026-11-30")],
        &[("requestBatchId", batch_id)],
    ];
    for query in foreign_queries {
        let mut params = query.to_vec();
        params.push(("pageToken", &good));
        let (status, body) = list(&app, &token, &params).await;
        assert_invalid_request(
            status,
            &body,
            &["pageToken"],
            &format!("token reused on {query:?}"),
        );
    }
    let (status, body) = list(
        &app,
        &token,
        &[("requestBatchId", batch_id), ("pageSize", "1")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let batch_token = body["nextPageToken"].as_str().unwrap();
    let (status, body) = list(&app, &token, &[("pageToken", batch_token)]).await;
    assert_invalid_request(
        status,
        &body,
        &["pageToken"],
        "batch token on the date query",
    );

    // The genuine token still works, with the same query or another page size.
    let (status, body) = list(&app, &token, &[("pageSize", "1"), ("pageToken", &good)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["requests"].as_array().unwrap().len(), 1);
    let (status, body) = list(&app, &token, &[("pageSize", "5"), ("pageToken", &good)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["requests"].as_array().unwrap().len(), 2);
    assert!(body.get("nextPageToken").is_none(), "{body}");
}

#[actix_web::test]
async fn an_empty_page_token_starts_from_the_first_page() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    let created = create_batch(&app, &token, 2).await;

    let listed = list_ok(&app, &token, &[("pageToken", "")]).await;

    assert_eq!(sorted_ids(&listed), sorted_ids(&created));
}

#[actix_web::test]
async fn an_empty_or_blank_request_batch_id_is_400_invalid_request_like_an_empty_date() {
    let app = spawn_app_with(&plain_config()).await;
    let token = app.live_token().await;
    create_one(&app, &token).await;

    for raw in ["", " ", "\t"] {
        let (status, body) = list(&app, &token, &[("requestBatchId", raw)]).await;
        assert_invalid_request(
            status,
            &body,
            &["requestBatchId"],
            &format!("requestBatchId={raw:?}"),
        );
        // Not even with a page size, dates or a page token beside it.
        let (status, body) = list(
            &app,
            &token,
            &[
                ("requestBatchId", raw),
                ("pageSize", "5"),
                ("dateFrom", "2026-11-23"),
            ],
        )
        .await;
        assert_invalid_request(
            status,
            &body,
            &["requestBatchId"],
            &format!("requestBatchId={raw:?} with other parameters"),
        );
    }
}

#[actix_web::test]
async fn a_batch_listed_without_a_page_size_comes_whole_in_one_page_and_with_one_in_pages() {
    let mut config = plain_config();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1000.into());
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    // Larger than both the default page (100) and the largest explicit page (500).
    let items: Vec<Value> = (0..620).map(claim_item).collect();
    let (status, body) = post_requests(&app, &token, &json!({ "requests": items })).await;
    assert_eq!(status, 200, "{body}");
    let batch = body["requests"].as_array().unwrap().clone();
    let batch_id = batch[0]["requestBatchId"].as_str().unwrap().to_owned();
    assert!(batch.iter().all(|e| e["requestBatchId"] == *batch_id));
    // Another batch that must not leak into the listing.
    create_batch(&app, &token, 3).await;

    // No pageSize: every member, one page, no nextPageToken (list_ok checks the keys).
    let whole = list_ok(&app, &token, &[("requestBatchId", &batch_id)]).await;
    assert_eq!(whole.len(), 620);
    assert_eq!(sorted_ids(&whole), sorted_ids(&batch));
    // An empty pageSize means the default, as it does for a date listing.
    let empty_size = list_ok(
        &app,
        &token,
        &[("requestBatchId", &batch_id), ("pageSize", "")],
    )
    .await;
    assert_eq!(ids(&empty_size), ids(&whole));

    // An explicit pageSize pages as before, in the same order as the whole batch.
    for (size, expected) in [
        ("100", vec![100, 100, 100, 100, 100, 100, 20]),
        ("500", vec![500, 120]),
        ("9999", vec![500, 120]),
    ] {
        let pages = walk_pages(
            &app,
            &token,
            &[("requestBatchId", &batch_id), ("pageSize", size)],
        )
        .await;
        let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
        assert_eq!(sizes, expected, "pageSize={size}");
        assert_eq!(pages.concat(), ids(&whole), "pageSize={size}");
    }
    // A date listing without pageSize keeps its default page of 100.
    let pages = walk_pages(&app, &token, &[]).await;
    assert_eq!(pages[0].len(), 100);
}
