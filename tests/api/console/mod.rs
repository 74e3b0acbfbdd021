//! The console (`/console`): its embedded assets, and the `/console/api/*` endpoints behind it, which
//! accept an API bearer token or the admin token with an account and environment. `browser` drives the
//! real page in headless Chromium; `cost` checks the request's and each call's cost there.

mod browser;
mod cost;
mod payers;

use std::time::{Duration, Instant};

use reqwest::header;
use serde_json::{json, Value};

use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig, ADMIN_TOKEN};
use crate::receiver::Receiver;

// ---- helpers ----------------------------------------------------------------------------------------

const SCHEMA: &str = "claim-status-basic";
const LEG: &str = "claim-appeal-basic";
const ASSETS: [(&str, &str); 10] = [
    ("/console/index.html", "text/html"),
    ("/console/app.css", "text/css"),
    ("/console/app.js", "text/javascript"),
    ("/console/api.js", "text/javascript"),
    ("/console/ui.js", "text/javascript"),
    ("/console/signin.js", "text/javascript"),
    ("/console/list.js", "text/javascript"),
    ("/console/detail.js", "text/javascript"),
    ("/console/schedule.js", "text/javascript"),
    ("/console/create.js", "text/javascript"),
];

/// Valid `claim-status-basic` inputs for the demo account (payer lookup finds UHC's number; `groupNumber`
/// is UHC's extra required input) with `sandboxScenario` set.
pub fn claim_inputs(scenario: &str, n: usize) -> Value {
    json!({
        "payerName": "UHC",
        "groupNumber": "GRP20417",
        "memberId": format!("W{:09}", 123_456_000 + n),
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "1980-04-12",
        "dateOfService": "2026-10-01",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
        "sandboxScenario": scenario,
    })
}

/// A console GET with a bearer token.
pub async fn console_get(app: &TestApp, path: &str, token: &str) -> (u16, Value) {
    status_and_json(app.get(path, token).await).await
}

/// POSTs one request body; returns the create response.
pub async fn create(app: &TestApp, token: &str, body: Value) -> Value {
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let (status, created) = status_and_json(response).await;
    assert_eq!(status, 200, "create: {created}");
    created
}

/// Creates one claim-status request with `scenario`; returns its id.
pub async fn create_scenario(app: &TestApp, token: &str, scenario: &str, n: usize) -> String {
    let created = create(
        app,
        token,
        json!({ "schemaId": SCHEMA, "inputs": claim_inputs(scenario, n), "internalId": format!("claim-{n:04}") }),
    )
    .await;
    created["requestId"].as_str().unwrap().to_owned()
}

fn ids(list: &Value) -> Vec<String> {
    list["requests"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|r| r["requestId"].as_str().unwrap().to_owned())
        .collect()
}

// ---- assets -----------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_console_and_its_assets_are_served_from_the_binary_with_content_types_and_revalidation()
{
    let app = spawn_app_with(&TestConfig::default()).await;
    let mut total = 0;
    for (path, content_type) in [("/console", "text/html"), ("/console/", "text/html")]
        .into_iter()
        .chain(ASSETS)
    {
        let response = app.client.get(app.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let headers = response.headers().clone();
        let got = headers[header::CONTENT_TYPE].to_str().unwrap();
        assert!(got.starts_with(content_type), "{path}: {got}");
        assert_eq!(headers[header::CACHE_CONTROL], "no-cache", "{path}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
        let etag = headers[header::ETAG].to_str().unwrap().to_owned();
        let body = response.bytes().await.unwrap();
        assert!(!body.is_empty(), "{path}");
        if path.starts_with("/console/") && path != "/console/" {
            total += body.len();
        }
        let again = app
            .client
            .get(app.url(path))
            .header(header::IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{path} revalidates");
        assert!(again.bytes().await.unwrap().is_empty());
    }
    assert!(total < 200 * 1024, "the console weighs {total} bytes");

    let index = app.client.get(app.url("/console")).send().await.unwrap();
    let policy = index.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    let html = index.text().await.unwrap();
    assert!(html.contains(r#"src="/console/app.js""#), "{html}");
    assert!(html.contains(r#"href="/console/app.css""#), "{html}");
    assert!(!html.contains("https://"), "nothing comes from elsewhere");

    let (status, body) = status_and_json(
        app.client
            .get(app.url("/console/nope.js"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (404, Some("NOT_FOUND")));
}

#[actix_web::test]
async fn config_json_names_the_product_word_that_renames_the_auth_headers() {
    let app = spawn_app_with(&TestConfig::default()).await;
    let (status, body) = status_and_json(
        app.client
            .get(app.url("/console/config.json"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({ "productWord": "Switchboard", "authHeaderWord": "Switchboard", "adminEnabled": true })
    );

    let mut config = TestConfig::default();
    config
        .set("server.product_word", "Relay")
        .remove("server.admin_token");
    let app = spawn_app_with(&config).await;
    let (_, body) = status_and_json(
        app.client
            .get(app.url("/console/config.json"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        body,
        json!({ "productWord": "Relay", "authHeaderWord": "Relay", "adminEnabled": false })
    );

    // The headers' own word, when set apart, is the one the sign-in page uses.
    config.set("server.auth_header_word", "Robodialer");
    let app = spawn_app_with(&config).await;
    let (_, body) = status_and_json(
        app.client
            .get(app.url("/console/config.json"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(body["authHeaderWord"], "Robodialer");
    assert_eq!(body["productWord"], "Relay");
}

// ---- scope ------------------------------------------------------------------------------------------

#[actix_web::test]
async fn console_endpoints_take_an_api_token_or_the_admin_token_with_an_account_and_environment() {
    let app = spawn_app_with(&TestConfig::default()).await;
    let sandbox = app.sandbox_token().await;

    let (status, body) = status_and_json(
        app.client
            .get(app.url("/console/api/session"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], 401, "the token 401 body: {body}");

    let (status, body) = console_get(&app, "/console/api/session", &sandbox).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["accountId"], &body["environment"], &body["signIn"]),
        (&json!("demo"), &json!("sandbox"), &json!("token"))
    );
    assert_eq!(body["dailyCallCapacity"], 200);
    assert!(body["schemas"].as_array().unwrap().contains(&json!(SCHEMA)));

    let cases = [
        (
            "/console/api/session",
            400,
            "INVALID_REQUEST",
            "no account or environment",
        ),
        (
            "/console/api/session?account=demo",
            400,
            "INVALID_REQUEST",
            "no environment",
        ),
        (
            "/console/api/session?account=demo&environment=staging",
            400,
            "INVALID_REQUEST",
            "unknown environment",
        ),
        (
            "/console/api/session?account=nobody&environment=sandbox",
            404,
            "ACCOUNT_NOT_FOUND",
            "unknown account",
        ),
    ];
    for (path, status, code, why) in cases {
        let (got, body) = console_get(&app, path, ADMIN_TOKEN).await;
        assert_eq!(
            (got, body["error"].as_str()),
            (status, Some(code)),
            "{why}: {body}"
        );
    }
    let (status, body) = console_get(
        &app,
        "/console/api/session?account=demo&environment=production",
        ADMIN_TOKEN,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (&body["environment"], &body["signIn"]),
        (&json!("production"), &json!("admin"))
    );
    // The console shows who is signed in: the operator's name and role.
    assert_eq!(
        (&body["signedInAs"], &body["role"]),
        (&json!("admin"), &json!("admin"))
    );

    // Without an admin token configured, the admin token is just an invalid bearer token.
    let mut config = TestConfig::default();
    config.remove("server.admin_token");
    let closed = spawn_app_with(&config).await;
    let (status, _) = console_get(
        &closed,
        "/console/api/session?account=demo&environment=production",
        ADMIN_TOKEN,
    )
    .await;
    assert_eq!(status, 401);
}

// ---- list -------------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_list_filters_by_state_schema_internal_id_and_batch_counts_states_and_pages() {
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let success = create_scenario(&app, &token, "success", 1).await;
    let failure = create_scenario(&app, &token, "failure:IVR_FAILURE", 2).await;
    let stuck = create_scenario(&app, &token, "stuck", 3).await;
    let vob = create(
        &app,
        &token,
        json!({ "schemaId": "vob-basic", "internalId": "vob-0004", "inputs": {
            "payerName": "Aetna", "memberId": "W123456789", "patientFirstName": "Ann",
            "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890",
            "sandboxScenario": "success" } }),
    )
    .await;
    let vob = vob["requestId"].as_str().unwrap().to_owned();
    for id in [&success, &failure, &vob] {
        app.wait_terminal(&token, id).await;
    }

    let (status, all) = console_get(&app, "/console/api/requests", &token).await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(
        ids(&all),
        [&vob, &stuck, &failure, &success].map(String::clone),
        "newest first"
    );
    assert_eq!(
        all["countsByState"],
        json!({ "PROCESSING": 1, "SUCCESS": 2, "PARTIAL": 0, "FAILURE": 1 })
    );
    assert_eq!(all["countsComplete"], true);
    assert_eq!(
        all["window"],
        json!({ "dateFrom": "2026-11-23", "dateTo": "2026-11-24" })
    );
    for entry in all["requests"].as_array().unwrap() {
        assert!(entry.get("callSteps").is_none(), "a list entry: {entry}");
    }

    let filtered = [
        ("state=failure", vec![&failure]),
        ("state=SUCCESS", vec![&vob, &success]),
        ("schemaId=vob-basic", vec![&vob]),
        ("internalId=claim-000", vec![&stuck, &failure, &success]),
        ("internalId=0003", vec![&stuck]),
        ("state=SUCCESS&schemaId=claim-status-basic", vec![&success]),
        ("dateFrom=2026-11-24&dateTo=2026-11-30", vec![]),
    ];
    for (query, expected) in filtered {
        let (status, body) =
            console_get(&app, &format!("/console/api/requests?{query}"), &token).await;
        assert_eq!(status, 200, "{query}: {body}");
        let expected: Vec<String> = expected.into_iter().cloned().collect();
        assert_eq!(ids(&body), expected, "{query}");
    }
    // The counts ignore the state filter (so the chips keep showing every state) but honour the others.
    let (_, body) = console_get(
        &app,
        "/console/api/requests?state=FAILURE&schemaId=vob-basic",
        &token,
    )
    .await;
    assert_eq!(ids(&body), Vec::<String>::new());
    assert_eq!(body["countsByState"]["SUCCESS"], 1, "{body}");

    // A batch id lists that batch whatever the dates.
    let (_, read) = console_get(&app, &format!("/v1/requests/{stuck}"), &token).await;
    let batch = read["requestBatchId"].as_str().unwrap();
    let (_, body) = console_get(
        &app,
        &format!("/console/api/requests?requestBatchId={batch}&dateFrom=2030-01-01"),
        &token,
    )
    .await;
    assert_eq!(ids(&body), [stuck.as_str()]);
    assert_eq!(body["window"], json!({ "requestBatchId": batch }));

    // Paging by one follows the tokens through every request exactly once.
    let mut seen = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let path = match &next {
            Some(token) => format!("/console/api/requests?pageSize=1&pageToken={token}"),
            None => "/console/api/requests?pageSize=1".to_owned(),
        };
        let (status, page) = console_get(&app, &path, &token).await;
        assert_eq!(status, 200, "{page}");
        seen.extend(ids(&page));
        match page["nextPageToken"].as_str() {
            Some(token) => next = Some(token.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ids(&all));
    let (_, first) = console_get(&app, "/console/api/requests?pageSize=1", &token).await;
    let token_of_another_query = first["nextPageToken"].as_str().unwrap();
    let errors = [
        format!(
            "/console/api/requests?pageSize=1&state=SUCCESS&pageToken={token_of_another_query}"
        ),
        "/console/api/requests?state=DONE".to_owned(),
        "/console/api/requests?dateFrom=2026-1-1".to_owned(),
        "/console/api/requests?pageSize=0".to_owned(),
    ];
    for path in errors {
        let (status, body) = console_get(&app, &path, &token).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{path}: {body}"
        );
    }

    // Production sees none of the sandbox's requests; the admin token sees what the scope names.
    let live = app.live_token().await;
    let (_, body) = console_get(&app, "/console/api/requests", &live).await;
    assert_eq!(ids(&body), Vec::<String>::new());
    let (_, body) = console_get(
        &app,
        "/console/api/requests?account=demo&environment=sandbox&state=PROCESSING",
        ADMIN_TOKEN,
    )
    .await;
    assert_eq!(ids(&body), [stuck.as_str()]);
}

// ---- detail -----------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_detail_is_the_single_read_with_the_schemas_behind_its_steps_and_the_webhook_attempts()
{
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    let app = spawn_app_with(&config).await;
    let receiver = Receiver::start().await;
    let token = app.sandbox_token().await;
    let created = create(
        &app,
        &token,
        json!({ "schemaId": SCHEMA, "inputs": claim_inputs("follow_up", 1), "webhookUrl": receiver.url("/hook") }),
    )
    .await;
    let id = created["requestId"].as_str().unwrap();
    let read = app.wait_terminal(&token, id).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let path = format!("/console/api/requests/{id}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let detail = loop {
        let (status, detail) = console_get(&app, &path, &token).await;
        assert_eq!(status, 200, "{detail}");
        if detail["webhook"]["status"] == "delivered" || Instant::now() > deadline {
            break detail;
        }
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    };

    assert_eq!(detail["request"], read, "the single read, unchanged");
    let schemas = detail["schemas"].as_object().unwrap();
    assert_eq!(
        schemas.keys().collect::<Vec<_>>(),
        [LEG, SCHEMA],
        "both steps' schemas"
    );
    for (id, schema) in schemas {
        assert_eq!(schema["schemaId"], json!(id));
        assert!(!schema["resultsFields"].as_array().unwrap().is_empty());
        assert_eq!(schema["version"], 1);
    }
    let webhook = &detail["webhook"];
    assert_eq!(webhook["status"], "delivered", "{webhook}");
    assert_eq!(webhook["url"], receiver.url("/hook"));
    assert_eq!(webhook["nextAttemptAt"], Value::Null);
    let attempt = &webhook["attempts"][0];
    assert_eq!(
        (
            &attempt["round"],
            &attempt["attempt"],
            &attempt["statusCode"],
            &attempt["error"]
        ),
        (&json!(0), &json!(1), &json!(200), &Value::Null),
        "{webhook}"
    );
    assert!(attempt["latencyMs"].is_u64());

    // Another environment, or no webhook at all.
    let live = app.live_token().await;
    let (status, body) = console_get(&app, &path, &live).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("REQUEST_NOT_FOUND"))
    );
    let (status, body) = console_get(
        &app,
        &format!("{path}?account=demo&environment=sandbox"),
        ADMIN_TOKEN,
    )
    .await;
    assert_eq!((status, &body["request"]["requestId"]), (200, &json!(id)));
    let quiet = create_scenario(&app, &token, "success", 2).await;
    app.wait_terminal(&token, &quiet).await;
    let (_, body) = console_get(&app, &format!("/console/api/requests/{quiet}"), &token).await;
    assert_eq!(body["webhook"], Value::Null, "{body}");
    assert_eq!(body["schemas"].as_object().unwrap().len(), 1);
}

// ---- schedule ---------------------------------------------------------------------------------------

#[actix_web::test]
async fn the_schedule_shows_bookings_per_business_day_against_capacity_and_skips_holidays() {
    let mut config = TestConfig::default();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 2.into());
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let items: Vec<Value> = (0..5)
        .map(|n| json!({ "schemaId": SCHEMA, "inputs": claim_inputs("success", n) }))
        .collect();
    create(&app, &token, json!({ "requests": items })).await;

    let (status, schedule) = console_get(&app, "/console/api/schedule?days=5", &token).await;
    assert_eq!(status, 200, "{schedule}");
    let days: Vec<(String, u64, u64)> = schedule["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap().to_owned(),
                d["booked"].as_u64().unwrap(),
                d["free"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("2026-11-23", 2, 0),
        ("2026-11-24", 2, 0),
        ("2026-11-25", 1, 1),
        // Thursday the 26th is Thanksgiving: not a business day.
        ("2026-11-27", 0, 2),
        ("2026-11-30", 0, 2),
    ]
    .map(|(d, b, f)| (d.to_owned(), b, f));
    assert_eq!(days, expected);
    assert_eq!(
        (
            &schedule["today"],
            &schedule["dailyCallCapacity"],
            &schedule["timezone"],
            &schedule["bookedTotal"]
        ),
        (
            &json!("2026-11-23"),
            &json!(2),
            &json!("America/New_York"),
            &json!(5)
        )
    );
    assert_eq!(
        schedule["holidays"],
        json!([{ "date": "2026-11-26", "name": "Thanksgiving Day" }])
    );
    assert_eq!(schedule["days"][0]["weekday"], "Mon");

    // Production keeps its own ledger.
    let (_, production) = console_get(
        &app,
        "/console/api/schedule?days=3&account=demo&environment=production",
        ADMIN_TOKEN,
    )
    .await;
    assert_eq!(production["bookedTotal"], 0, "{production}");
    assert_eq!(production["days"].as_array().unwrap().len(), 3);
    for bad in ["0", "121", "x"] {
        let (status, body) =
            console_get(&app, &format!("/console/api/schedule?days={bad}"), &token).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{bad}"
        );
    }
}

/// An auditor's token is refused by the console's sign-in (403 from the accounts list) with a message that
/// says auditors have no console, where it said "This is not the admin token", the text for a bogus token.
#[actix_web::test]
async fn the_console_tells_an_auditor_that_auditors_have_no_console() {
    let app = spawn_app_with(&TestConfig::default()).await;
    let auditor = crate::operators::operator(&app, "aud", "auditor").await;
    let (status, body) = console_get(&app, "/admin/v1/accounts", &auditor).await;
    assert_eq!(
        (status, body),
        (403, json!({ "error": "FORBIDDEN" })),
        "what the sign-in reads"
    );
    let script = app
        .client
        .get(app.url("/console/api.js"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let on_403 = script
        .split("response.status === 403")
        .nth(1)
        .expect("the sign-in answers a 403 apart");
    assert!(on_403.contains("Auditors have no console"), "{on_403:.300}");
    assert!(!script.contains("This is not the admin token"));
}
