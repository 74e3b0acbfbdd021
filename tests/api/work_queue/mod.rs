//! The work queue (operator contract section 10): on a `human_fallback` account a request the calls could
//! not finish waits `PROCESSING` for a person, who claims its task, places the call and completes it (or
//! gives up); the request then ends through the usual terminal write, webhook and all.

mod console;
mod races;
mod roles;

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app_with, status_and_json, TestApp, TestConfig, ADMIN_TOKEN};
use crate::operators::operator;

/// The demo configuration with `human_fallback` added to the demo account's features (or not), requests
/// dispatched as soon as they are due.
pub fn config(fallback: bool) -> TestConfig {
    let mut config = TestConfig::default();
    config.dispatching();
    if fallback {
        let features = config.demo_account()["features"].as_array_mut().unwrap();
        features.push("human_fallback".into());
    }
    config
}

/// A sandbox `vob-basic` request playing `scenario`.
pub fn sandbox_item(scenario: &str) -> Value {
    json!({
        "schemaId": "vob-basic",
        "inputs": {
            "sandboxScenario": scenario, "payerName": "Aetna", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890"
        }
    })
}

/// An operator call with `token`.
pub async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = app.client.request(method, app.url(path)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    status_and_json(request.send().await.unwrap()).await
}

/// Polls the queue until request `id` has a task, and answers it.
pub async fn wait_task(app: &TestApp, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = call(app, Method::GET, "/admin/v1/tasks", ADMIN_TOKEN, None).await;
        assert_eq!(status, 200, "{body}");
        if let Some(task) = body["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["requestId"] == id)
        {
            return task.clone();
        }
        assert!(Instant::now() < deadline, "no task for {id}: {body}");
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A sandbox request of `scenario` on a fallback account, its task, and a `caller` operator's token.
pub async fn task_of(app: &TestApp, scenario: &str) -> (String, String, Value) {
    let token = app.sandbox_token().await;
    let id = app.create_request(&token, &sandbox_item(scenario)).await;
    let task = wait_task(app, &id).await;
    (token, id, task)
}

/// Answers for every question of a call sheet, each valid for its type: the unconditional ones, then each
/// conditional one whose condition those answers meet.
pub fn answers_for(sheet: &Value) -> Value {
    let questions = sheet["questions"].as_array().unwrap();
    let mut answers = serde_json::Map::new();
    for question in questions.iter().filter(|q| q.get("when").is_none()) {
        answers.insert(
            question["name"].as_str().unwrap().to_owned(),
            answer(question),
        );
    }
    for question in questions.iter().filter(|q| q.get("when").is_some()) {
        let when = &question["when"];
        let given = answers
            .get(when["field"].as_str().unwrap())
            .map(|v| v.as_str().map_or(v.to_string(), str::to_owned));
        if given.is_some_and(|g| g.eq_ignore_ascii_case(when["equals"].as_str().unwrap())) {
            answers.insert(
                question["name"].as_str().unwrap().to_owned(),
                answer(question),
            );
        }
    }
    Value::Object(answers)
}

fn answer(question: &Value) -> Value {
    match question["type"].as_str().unwrap() {
        "boolean" => json!(true),
        "dollar" => json!("125.00"),
        "date" => json!("2026-11-20"),
        "multiple" => question["allowedValues"][0].clone(),
        _ => json!("REF-123"),
    }
}

fn path(task: &Value, action: &str) -> String {
    let id = task["taskId"].as_str().unwrap();
    if action.is_empty() {
        format!("/admin/v1/tasks/{id}")
    } else {
        format!("/admin/v1/tasks/{id}/{action}")
    }
}

/// The complete body with `answers`.
pub fn completion(answers: Value) -> Value {
    json!({
        "answers": answers,
        "call": {"phoneNumber": "(800) 555-0123", "representativeName": "Dana", "referenceNumber": "R-1",
                 "notes": "Reached provider services; the representative confirmed the benefits."}
    })
}

/// Audit events of `action`.
pub async fn audit_events(app: &TestApp, action: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = call(
            app,
            Method::GET,
            &format!("/admin/v1/audit?action={action}"),
            ADMIN_TOKEN,
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let events = body["events"].as_array().unwrap().clone();
        if !events.is_empty() || Instant::now() > deadline {
            return events;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

#[actix_web::test]
async fn a_system_failure_opens_a_task_and_the_request_stays_processing() {
    let app = spawn_app_with(&config(true)).await;
    let (token, id, task) = task_of(&app, "failure:IVR_FAILURE").await;
    assert_eq!(task["state"], "open", "{task}");
    assert_eq!(task["reason"], "IVR_FAILURE");
    assert_eq!(task["accountId"], "demo");
    assert_eq!(task["schemaId"], "vob-basic");
    assert!(!task["missingFields"].as_array().unwrap().is_empty());
    assert!(task.get("claimedBy").is_none());
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(app.read_request(&token, &id).await["state"], "PROCESSING");
    let opened = audit_events(&app, "task.open").await;
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["actor"]["kind"], "system");
    assert_eq!(
        opened[0]["target"],
        json!({"kind": "task", "id": task["taskId"]})
    );

    let (status, metrics) = app.text("/metrics", "").await;
    assert_eq!(status, 200);
    assert!(
        metrics.contains("switchboard_tasks{state=\"open\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("switchboard_oldest_open_task_seconds"));
}

#[actix_web::test]
async fn without_the_feature_the_same_failure_ends_the_request() {
    let app = spawn_app_with(&config(false)).await;
    let token = app.sandbox_token().await;
    let id = app
        .create_request(&token, &sandbox_item("failure:IVR_FAILURE"))
        .await;
    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "FAILURE");
    let (_, list) = call(&app, Method::GET, "/admin/v1/tasks", ADMIN_TOKEN, None).await;
    assert_eq!(list["tasks"], json!([]));
}

#[actix_web::test]
async fn a_not_found_failure_is_an_answer_and_opens_no_task() {
    let app = spawn_app_with(&config(true)).await;
    let token = app.sandbox_token().await;
    let id = app
        .create_request(&token, &sandbox_item("failure:MEMBER_NOT_FOUND"))
        .await;
    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "FAILURE");
    assert_eq!(ended["error"]["errorCode"], "MEMBER_NOT_FOUND");
    let (_, list) = call(&app, Method::GET, "/admin/v1/tasks", ADMIN_TOKEN, None).await;
    assert_eq!(list["tasks"], json!([]));
}

#[actix_web::test]
async fn a_partial_result_opens_a_task_for_the_missing_leg() {
    let app = spawn_app_with(&config(true)).await;
    let token = app.sandbox_token().await;
    let item = json!({
        "schemaId": "claim-status-basic",
        "inputs": {
            "sandboxScenario": "partial", "payerName": "Aetna", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "dateOfService": "2026-10-01", "billingProviderNpi": "1234567890", "claimNumber": "C-1",
            "billingProviderTaxId": "123456789"
        }
    });
    let id = app.create_request(&token, &item).await;
    let task = wait_task(&app, &id).await;
    assert_eq!(task["reason"], "PARTIAL", "{task}");
    let alice = operator(&app, "alice", "caller").await;
    let (status, _) = call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    assert_eq!(status, 200);
    let (_, sheet) = call(&app, Method::GET, &path(&task, ""), &alice, None).await;
    let (status, body) = call(
        &app,
        Method::POST,
        &path(&task, "complete"),
        &alice,
        Some(completion(answers_for(&sheet))),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "SUCCESS", "{ended}");
    assert_eq!(ended["missingFields"], json!([]));
}

#[actix_web::test]
async fn claims_hold_against_other_operators_until_released() {
    let app = spawn_app_with(&config(true)).await;
    let (_, _, task) = task_of(&app, "failure:PAYER_REFUSAL").await;
    let alice = operator(&app, "alice", "caller").await;
    let bob = operator(&app, "bob", "caller").await;

    let (status, claimed) = call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    assert_eq!(status, 200, "{claimed}");
    assert_eq!(claimed["state"], "claimed");
    assert_eq!(claimed["claimedBy"], "alice");
    let expires =
        chrono::DateTime::parse_from_rfc3339(claimed["claimExpiresAt"].as_str().unwrap()).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339(crate::helpers::START).unwrap();
    assert_eq!((expires - now).num_minutes(), 30);

    let (status, refused) = call(&app, Method::POST, &path(&task, "claim"), &bob, None).await;
    assert_eq!((status, &refused["error"]), (409, &json!("TASK_CLAIMED")));
    let (status, refused) = call(
        &app,
        Method::POST,
        &path(&task, "complete"),
        &bob,
        Some(completion(json!({}))),
    )
    .await;
    assert_eq!((status, &refused["error"]), (409, &json!("TASK_CLAIMED")));
    let (status, _) = call(&app, Method::POST, &path(&task, "release"), &bob, None).await;
    assert_eq!(status, 409, "bob cannot release alice's claim");

    // Claiming again renews; the claim lapses after 30 minutes of the clock.
    app.advance_clock(20 * 60).await;
    let (status, renewed) = call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    assert_eq!(status, 200);
    assert_ne!(renewed["claimExpiresAt"], claimed["claimExpiresAt"]);

    let (status, released) = call(&app, Method::POST, &path(&task, "release"), &alice, None).await;
    assert_eq!(status, 200, "{released}");
    assert_eq!(released["state"], "open");
    assert!(released.get("claimedBy").is_none());
    let (status, claimed) = call(&app, Method::POST, &path(&task, "claim"), &bob, None).await;
    assert_eq!((status, &claimed["claimedBy"]), (200, &json!("bob")));

    app.advance_clock(31 * 60).await;
    let (_, read) = call(&app, Method::GET, &path(&task, ""), ADMIN_TOKEN, None).await;
    assert_eq!(
        read["state"], "open",
        "an expired claim frees the task: {read}"
    );
    let (status, _) = call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    assert_eq!(status, 200);
    for action in ["task.claim", "task.release"] {
        assert!(!audit_events(&app, action).await.is_empty(), "{action}");
    }
}

#[actix_web::test]
async fn refused_answers_change_nothing_and_name_each_field() {
    let app = spawn_app_with(&config(true)).await;
    let (token, id, task) = task_of(&app, "failure:IVR_FAILURE").await;
    let alice = operator(&app, "alice", "caller").await;
    call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    let (_, sheet) = call(&app, Method::GET, &path(&task, ""), &alice, None).await;
    let mut answers = answers_for(&sheet);
    let dated = sheet["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["type"] == "multiple")
        .expect("vob-basic asks a multiple-choice question");
    let name = dated["name"].as_str().unwrap();
    answers[name] = json!("NOT A CHOICE");
    answers["noSuchField"] = json!("x");
    let (status, refused) = call(
        &app,
        Method::POST,
        &path(&task, "complete"),
        &alice,
        Some(completion(answers)),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"], "INVALID_ANSWERS");
    let details = refused["details"].as_object().unwrap();
    assert_eq!(details.len(), 2, "{refused}");
    assert!(details.contains_key(name) && details.contains_key("noSuchField"));

    let (_, read) = call(&app, Method::GET, &path(&task, ""), &alice, None).await;
    assert_eq!(read["state"], "claimed");
    assert_eq!(read["calls"], sheet["calls"]);
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.read_request(&token, &id).await["state"], "PROCESSING");
    assert!(audit_events(&app, "task.complete").await.is_empty());
}

#[actix_web::test]
async fn a_completed_task_ends_the_request_with_the_persons_call() {
    let app = spawn_app_with(&config(true)).await;
    let (token, id, task) = task_of(&app, "failure:IVR_FAILURE").await;
    let alice = operator(&app, "alice", "caller").await;
    call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    let (status, sheet) = call(&app, Method::GET, &path(&task, ""), &alice, None).await;
    assert_eq!(status, 200, "{sheet}");
    assert_eq!(sheet["payerName"], "Aetna");
    assert_eq!(sheet["inputs"]["memberId"], "W123456789");
    assert!(
        sheet["phoneNumber"].as_str().is_some_and(|n| n.len() == 10),
        "{sheet}"
    );
    let questions = sheet["questions"].as_array().unwrap();
    assert!(questions.iter().any(|q| q["required"] == true));
    for question in questions {
        for key in ["name", "label", "description", "type"] {
            assert!(question[key].is_string(), "{question}");
        }
    }
    let automated = sheet["calls"].as_array().unwrap();
    assert!(
        !automated.is_empty(),
        "the automated calls are on the sheet"
    );
    assert!(automated[0]["summary"].is_string(), "{sheet}");

    let answers = answers_for(&sheet);
    let (status, done) = call(
        &app,
        Method::POST,
        &path(&task, "complete"),
        &alice,
        Some(completion(answers.clone())),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["state"], "done");

    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "SUCCESS", "{ended}");
    let calls = ended["contributingCalls"].as_array().unwrap();
    let person = calls.last().unwrap();
    assert_eq!(
        person["placedBy"],
        json!({"kind": "operator", "name": "alice"})
    );
    assert!(calls[..calls.len() - 1]
        .iter()
        .all(|c| c.get("placedBy").is_none()));
    assert_eq!(
        person["callSummary"],
        "Reached provider services; the representative confirmed the benefits."
    );
    let (field, value) = answers.as_object().unwrap().iter().next().unwrap();
    assert_eq!(ended["resultSources"][field], person["call"], "{ended}");
    if value.is_string() {
        assert_eq!(ended["results"][field], *value);
    }

    let (status, closed) = call(&app, Method::POST, &path(&task, "claim"), &alice, None).await;
    assert_eq!((status, &closed["error"]), (409, &json!("TASK_CLOSED")));
    let (status, closed) = call(
        &app,
        Method::POST,
        &path(&task, "complete"),
        &alice,
        Some(completion(answers)),
    )
    .await;
    assert_eq!((status, &closed["error"]), (409, &json!("TASK_CLOSED")));
    let (_, list) = call(
        &app,
        Method::GET,
        "/admin/v1/tasks?state=done",
        &alice,
        None,
    )
    .await;
    assert_eq!(list["tasks"].as_array().unwrap().len(), 1, "{list}");
    for action in ["task.read", "task.claim", "task.complete"] {
        let events = audit_events(&app, action).await;
        assert!(
            events.iter().any(|e| e["actor"]["id"] == "alice"),
            "{action}: {events:?}"
        );
    }
}

#[actix_web::test]
async fn giving_up_ends_the_request_with_the_chosen_code() {
    let app = spawn_app_with(&config(true)).await;
    let (token, id, task) = task_of(&app, "failure:IVR_FAILURE").await;
    let alice = operator(&app, "alice", "caller").await;
    let (status, refused) = call(
        &app,
        Method::POST,
        &path(&task, "give-up"),
        &alice,
        Some(json!({"errorCode": "NOT_A_CODE"})),
    )
    .await;
    assert_eq!(
        (status, &refused["error"]),
        (400, &json!("INVALID_REQUEST"))
    );
    let (status, given_up) = call(
        &app,
        Method::POST,
        &path(&task, "give-up"),
        &alice,
        Some(json!({"errorCode": "PAYER_REFUSAL"})),
    )
    .await;
    assert_eq!(status, 200, "{given_up}");
    assert_eq!(given_up["state"], "abandoned");
    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "FAILURE");
    assert_eq!(ended["error"]["errorCode"], "PAYER_REFUSAL", "{ended}");
    assert_eq!(ended["error"]["errorCategory"], "SYSTEM_ERROR");
    let (status, closed) = call(&app, Method::POST, &path(&task, "release"), &alice, None).await;
    assert_eq!((status, &closed["error"]), (409, &json!("TASK_CLOSED")));
    assert_eq!(audit_events(&app, "task.give_up").await.len(), 1);
}

#[actix_web::test]
async fn a_task_nobody_finishes_expires_and_the_request_ends_as_it_would_have() {
    let mut config = config(true);
    config
        .demo_account()
        .insert("task_timeout_hours".into(), 1.into());
    let app = spawn_app_with(&config).await;
    let (_, id, task) = task_of(&app, "failure:IVR_FAILURE").await;
    app.advance_clock(2 * 3600).await;
    let token = app.sandbox_token().await;
    let ended = app
        .wait_terminal_within(&token, &id, Duration::from_secs(20))
        .await;
    assert_eq!(ended["state"], "FAILURE");
    assert_eq!(ended["error"]["errorCode"], "IVR_FAILURE");
    let (_, read) = call(&app, Method::GET, &path(&task, ""), ADMIN_TOKEN, None).await;
    assert_eq!(read["state"], "expired");
    let expired = audit_events(&app, "task.expire").await;
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0]["actor"]["kind"], "system");
}

#[actix_web::test]
async fn the_list_filters_and_pages_oldest_first() {
    let app = spawn_app_with(&config(true)).await;
    let token = app.sandbox_token().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = app
            .create_request(&token, &sandbox_item("failure:IVR_FAILURE"))
            .await;
        wait_task(&app, &id).await;
        ids.push(id);
    }
    let (status, page) = call(
        &app,
        Method::GET,
        "/admin/v1/tasks?pageSize=2",
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let first: Vec<&Value> = page["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["requestId"])
        .collect();
    assert_eq!(first, [&json!(ids[0]), &json!(ids[1])]);
    let token_next = page["nextPageToken"].as_str().unwrap();
    let (_, rest) = call(
        &app,
        Method::GET,
        &format!("/admin/v1/tasks?pageSize=2&pageToken={token_next}"),
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!(rest["tasks"][0]["requestId"], json!(ids[2]));
    assert!(rest.get("nextPageToken").is_none());
    let (_, none) = call(
        &app,
        Method::GET,
        "/admin/v1/tasks?state=claimed",
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!(none["tasks"], json!([]));
    let (_, other) = call(
        &app,
        Method::GET,
        "/admin/v1/tasks?accountId=other",
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!(other["tasks"], json!([]));
    let (status, bad) = call(
        &app,
        Method::GET,
        "/admin/v1/tasks?state=lost",
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!((status, &bad["error"]), (400, &json!("INVALID_REQUEST")));
    let (status, _) = call(&app, Method::GET, "/admin/v1/tasks/nope", ADMIN_TOKEN, None).await;
    assert_eq!(status, 404);
}
