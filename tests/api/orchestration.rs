//! Orchestration, black-box (service-interface 2.2 rules 1-5, 2.4, 2.6, 2.7, 3, 7.3; operator contract 4):
//! requests run once their day has come and end in the state each sandbox scenario promises, with the
//! call steps, contributing calls and result sources that trace every answer back to its schema, the
//! phone-call enrichment, signed recording links, fault isolation, production requests, deterministic
//! sandbox results, resumption after `kill -9`, and requests that wait for their booked day.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use futures::future::join_all;
use regex::Regex;
use serde_json::{json, Map, Value};

use crate::helpers::{
    spawn_app_with, status_and_json, write_config, Api, BinaryServer, TestApp, TestConfig,
    TERMINAL, WAIT_LIMIT,
};

// ---- helpers ----------------------------------------------------------------------------------------

const SCHEMA: &str = "claim-status-basic";
/// The follow-up leg chained to [`SCHEMA`] in the default config.
const LEG: &str = "claim-appeal-basic";
/// `server.public_url` of the default config: the base of every `recordingDownloadUrl`.
const PUBLIC_URL: &str = "http://127.0.0.1:8080";
/// How often anything awaited is polled ([`WAIT_LIMIT`] at most).
const POLL_STEP: Duration = Duration::from_millis(25);
/// Every feature of the demo account.
const ALL_FEATURES: [&str; 9] = [
    "payer_phone_lookup",
    "enforce_payer_required_inputs",
    "enforce_member_id_validation",
    "electronic_channels",
    "follow_up_calls",
    "transcript_post_call",
    "call_from_number",
    "attempt_details",
    "script_version",
];
/// Fields only the single-request read carries (2.4, 2.6 rule 3).
const SINGLE_READ_ONLY: [&str; 6] = [
    "transcript",
    "transcriptPostCall",
    "recordingDownloadUrl",
    "callSteps",
    "contributingCalls",
    "resultSources",
];

/// The client of the in-process app.
fn on(app: &TestApp) -> &Api {
    &app.api
}

/// A dispatching app (calls take milliseconds) with the demo account's features set to `features`.
async fn app_with_features(features: &[&str]) -> TestApp {
    let mut config = TestConfig::default();
    config.dispatching().features(features);
    spawn_app_with(&config).await
}

/// A dispatching app with every demo feature.
async fn dispatching_app() -> TestApp {
    app_with_features(&ALL_FEATURES).await
}

/// Valid `claim-status-basic` inputs for the demo account (payer lookup dials UnitedHealthcare's directory
/// number; `groupNumber` is UnitedHealthcare's extra required input). `n` varies the member id.
fn claim_inputs(n: usize) -> Value {
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
    })
}

/// [`claim_inputs`] with `sandboxScenario` set.
fn sandbox_inputs(scenario: &str, n: usize) -> Value {
    let mut inputs = claim_inputs(n);
    inputs["sandboxScenario"] = json!(scenario);
    inputs
}

/// One batch POST of `inputs` (all [`SCHEMA`]): the request ids in order.
async fn create_all(server: &Api, token: &str, inputs: &[Value]) -> Vec<String> {
    let items: Vec<Value> = inputs
        .iter()
        .map(|i| json!({ "schemaId": SCHEMA, "inputs": i }))
        .collect();
    let (status, body) = server
        .post_requests(token, &json!({ "requests": items }))
        .await;
    assert_eq!(status, 200, "batch create: {body}");
    let entries = body["requests"].as_array().unwrap();
    assert_eq!(entries.len(), inputs.len(), "{body}");
    entries
        .iter()
        .map(|e| e["requestId"].as_str().unwrap().to_owned())
        .collect()
}

/// Creates one request with `inputs`: its id.
async fn create(app: &TestApp, token: &str, inputs: Value) -> String {
    let (status, body) = on(app)
        .post_requests(token, &json!({ "schemaId": SCHEMA, "inputs": inputs }))
        .await;
    assert_eq!(status, 200, "create: {body}");
    body["requestId"].as_str().unwrap().to_owned()
}

/// Waits for every id in parallel.
async fn wait_all(app: &TestApp, token: &str, ids: &[String]) -> Vec<Value> {
    join_all(ids.iter().map(|id| app.wait_terminal(token, id))).await
}

/// Creates one sandbox request of `scenario` and waits for its terminal read.
async fn run_scenario(app: &TestApp, token: &str, scenario: &str) -> Value {
    let id = create(app, token, sandbox_inputs(scenario, 0)).await;
    let request = app.wait_terminal(token, &id).await;
    assert_read_shape(&request);
    request
}

/// The `resultsFields` names of a schema.
async fn schema_fields(app: &TestApp, token: &str, schema_id: &str) -> BTreeSet<String> {
    let (status, body) = on(app)
        .get_json(&format!("/v1/schemas/{schema_id}"), token)
        .await;
    assert_eq!(status, 200, "schema {schema_id}: {body}");
    body["resultsFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

fn obj(value: &Value) -> &Map<String, Value> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
}

fn arr(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
}

fn strings(value: &Value) -> Vec<String> {
    arr(value)
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn timestamp_pattern() -> Regex {
    Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$").unwrap()
}

fn e164_pattern() -> Regex {
    Regex::new(r"^\+1\d{10}$").unwrap()
}

fn duration_pattern() -> Regex {
    Regex::new(r"^\d\d:\d\d:\d\d$").unwrap()
}

fn assert_absent(request: &Value, keys: &[&str], why: &str) {
    for key in keys {
        assert!(
            request.get(key).is_none(),
            "{key} must be absent ({why}): {request}"
        );
    }
}

/// The state-dependent shape of any single read (2.4, 2.6 presence rules 1-3, 2.7, 3).
fn assert_read_shape(request: &Value) {
    let state = request["state"].as_str().unwrap();
    let modality = request["modality"].as_str();
    assert!(
        request["missingFields"].is_array(),
        "missingFields: {request}"
    );
    assert!(request["results"].is_object(), "results: {request}");
    if state == "PROCESSING" {
        assert_eq!(request["completedAt"], Value::Null, "{request}");
        assert_eq!(request["results"], json!({}), "{request}");
        assert_eq!(request["error"], Value::Null, "{request}");
        assert_absent(
            request,
            &["callSteps", "contributingCalls", "resultSources"],
            "not completed",
        );
        return;
    }
    assert!(TERMINAL.contains(&state), "unknown state: {request}");
    let completed = request["completedAt"].as_str().unwrap_or_else(|| {
        panic!("completedAt is set once terminal: {request}");
    });
    assert!(
        timestamp_pattern().is_match(completed),
        "completedAt {completed:?} is microseconds with +00:00"
    );
    match state {
        "SUCCESS" => {
            assert_eq!(request["missingFields"], json!([]), "{request}");
            assert_eq!(request["error"], Value::Null, "{request}");
            assert!(!obj(&request["results"]).is_empty(), "{request}");
        }
        "PARTIAL" => {
            assert_eq!(request["error"], Value::Null, "{request}");
            assert!(!obj(&request["results"]).is_empty(), "{request}");
            assert!(!arr(&request["missingFields"]).is_empty(), "{request}");
        }
        _ => {
            assert_eq!(request["results"], json!({}), "{request}");
            let error = obj(&request["error"]);
            let keys: Vec<&str> = error.keys().map(String::as_str).collect();
            assert_eq!(
                keys,
                ["errorCategory", "errorCode", "errorMessage"],
                "{request}"
            );
            assert!(
                ["NOT_FOUND", "SYSTEM_ERROR"].contains(&error["errorCategory"].as_str().unwrap()),
                "{request}"
            );
            assert!(error["errorCode"].is_string(), "{request}");
            assert!(error["errorMessage"].is_string(), "{request}");
        }
    }
    let succeeded = matches!(state, "SUCCESS" | "PARTIAL");
    if modality == Some("digital_only") {
        assert_absent(
            request,
            &[
                "to",
                "transcript",
                "callDuration",
                "callSummary",
                "recordingDownloadUrl",
                "callSteps",
                "contributingCalls",
                "resultSources",
            ],
            "digital-only",
        );
        assert_eq!(
            request["data_completeness"],
            if state == "SUCCESS" {
                json!("minimum")
            } else {
                Value::Null
            },
            "{request}"
        );
        assert_eq!(request["resultSummary"].is_string(), succeeded, "{request}");
        return;
    }
    assert_eq!(request["data_completeness"], Value::Null, "{request}");
    assert_eq!(request["resultSummary"], Value::Null, "{request}");
    let steps = arr(&request["callSteps"]);
    assert!(!steps.is_empty(), "{request}");
    if !succeeded {
        assert_absent(
            request,
            &["contributingCalls", "resultSources"],
            "FAILURE carries callSteps only",
        );
        return;
    }
    let calls = arr(&request["contributingCalls"]);
    assert!(!calls.is_empty(), "{request}");
    let numbers: Vec<u64> = calls.iter().map(|c| c["call"].as_u64().unwrap()).collect();
    let expected: Vec<u64> = (1..=calls.len() as u64).collect();
    assert_eq!(numbers, expected, "calls are numbered in placement order");
    let keys: BTreeSet<&str> = steps.iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(keys.len(), steps.len(), "step keys are unique: {request}");
    for step in steps {
        let own = calls
            .iter()
            .filter(|c| c["callStep"] == step["key"])
            .count();
        assert_eq!(
            step["numContributingCalls"].as_u64(),
            Some(own as u64),
            "{step}"
        );
    }
    for call in calls {
        assert!(keys.contains(call["callStep"].as_str().unwrap()), "{call}");
    }
    let results = obj(&request["results"]);
    for (field, number) in obj(&request["resultSources"]) {
        assert!(results.contains_key(field), "source of {field}: {request}");
        assert!(
            numbers.contains(&number.as_u64().unwrap()),
            "source of {field}: {request}"
        );
    }
}

/// A list entry: the single-read-only fields are never there (2.6 rule 3).
fn assert_list_shape(entry: &Value) {
    assert_absent(entry, &SINGLE_READ_ONLY, "list entry");
}

/// The list entries of a batch.
async fn list_batch(app: &TestApp, token: &str, batch: &str) -> Vec<Value> {
    let (status, body) = on(app)
        .get_json(&format!("/v1/requests?requestBatchId={batch}"), token)
        .await;
    assert_eq!(status, 200, "{body}");
    arr(&body["requests"]).clone()
}

/// The `error` of a FAILURE as (category, code).
fn failure_of(request: &Value) -> (&str, &str) {
    (
        request["error"]["errorCategory"].as_str().unwrap(),
        request["error"]["errorCode"].as_str().unwrap(),
    )
}

/// Asserts that the top-level call fields describe contributing call `number` (2.4: the request's first
/// call, meaning its last attempt).
fn assert_top_level_describes_call(request: &Value, number: u64) {
    let call = arr(&request["contributingCalls"])
        .iter()
        .find(|c| c["call"] == number)
        .unwrap_or_else(|| panic!("call {number}: {request}"));
    for key in [
        "callSummary",
        "callDuration",
        "transcript",
        "recordingDownloadUrl",
    ] {
        assert!(request[key].is_string(), "{key}: {request}");
        assert_eq!(
            request[key], call[key],
            "top-level {key} is call {number}'s"
        );
    }
}

// ---- 1. every scenario's outcome --------------------------------------------------------------------

#[actix_web::test]
async fn success_ends_in_success_with_one_step_and_one_contributing_call() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "success").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_eq!(request["modality"], "phone_only", "{request}");
    let steps = arr(&request["callSteps"]);
    assert_eq!(steps.len(), 1, "{request}");
    assert_eq!(steps[0]["triggeredBy"], Value::Null);
    assert_eq!(steps[0]["numContributingCalls"], 1);
    assert_eq!(steps[0]["schemaId"], SCHEMA);
    let calls = arr(&request["contributingCalls"]);
    assert_eq!(calls.len(), 1, "{request}");
    assert_eq!(calls[0]["call"], 1);
    assert_eq!(calls[0]["callStep"], steps[0]["key"]);
    assert!(
        calls[0].get("to").is_none(),
        "same number as the request's call"
    );
    assert_eq!(steps[0]["missingFields"], json!([]), "{request}");
    assert_top_level_describes_call(&request, 1);
    let fields = schema_fields(&app, &token, SCHEMA).await;
    for field in obj(&request["results"]).keys() {
        assert!(fields.contains(field), "{field} is a {SCHEMA} field");
        assert_eq!(request["resultSources"][field], 1, "{request}");
    }
    for required in ["claimStatus", "callReferenceNumber", "representativeName"] {
        assert!(request["results"][required].is_string(), "{request}");
    }
}

#[actix_web::test]
async fn redial_ends_in_success_with_two_calls_sharing_one_step() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "redial").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    let steps = arr(&request["callSteps"]);
    assert_eq!(steps.len(), 1, "{request}");
    assert_eq!(steps[0]["numContributingCalls"], 2, "{request}");
    assert_eq!(steps[0]["triggeredBy"], Value::Null);
    let calls = arr(&request["contributingCalls"]);
    let numbers: Vec<&Value> = calls.iter().map(|c| &c["call"]).collect();
    assert_eq!(numbers, [&json!(1), &json!(2)], "{request}");
    for call in calls {
        assert_eq!(call["callStep"], steps[0]["key"], "{call}");
    }
    // The answers came from the redial, and the top-level fields describe it (the last attempt).
    for source in obj(&request["resultSources"]).values() {
        assert_eq!(source, 2, "{request}");
    }
    assert_top_level_describes_call(&request, 2);
}

#[actix_web::test]
async fn follow_up_opens_a_second_step_whose_fields_merge_into_results_under_the_leg_schema_names()
{
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "follow_up").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    let steps = arr(&request["callSteps"]);
    assert_eq!(steps.len(), 2, "{request}");
    assert_eq!(steps[0]["schemaId"], SCHEMA);
    assert_eq!(steps[0]["triggeredBy"], Value::Null);
    assert_eq!(steps[1]["schemaId"], LEG);
    assert_eq!(steps[1]["triggeredBy"], steps[0]["key"], "{request}");
    assert_ne!(steps[0]["key"], steps[1]["key"]);
    // The top-level call fields describe the first call, not the follow-up leg's.
    assert_top_level_describes_call(&request, 1);

    let primary_fields = schema_fields(&app, &token, SCHEMA).await;
    let leg_fields = schema_fields(&app, &token, LEG).await;
    let results = obj(&request["results"]);
    let leg_keys: Vec<&String> = results.keys().filter(|k| leg_fields.contains(*k)).collect();
    assert!(
        !leg_keys.is_empty(),
        "the leg's values are merged: {request}"
    );
    for required in [
        "appealSubmissionMethod",
        "appealFilingLimitDays",
        "appealCallReferenceNumber",
    ] {
        assert!(results.contains_key(required), "{required}: {request}");
    }
    for key in &leg_keys {
        assert!(
            !primary_fields.contains(*key),
            "{key} is not in {SCHEMA}'s resultsFields (2.2 rule 3)"
        );
    }
    for key in results.keys() {
        assert!(
            primary_fields.contains(key) || leg_fields.contains(key),
            "{key} belongs to one of the two schemas"
        );
    }
}

#[actix_web::test]
async fn partial_ends_in_partial_with_the_legs_uncaptured_fields_missing_and_an_error_on_the_leg_step(
) {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "partial").await;

    assert_eq!(request["state"], "PARTIAL", "{request}");
    assert_eq!(request["error"], Value::Null, "{request}");
    assert!(!obj(&request["results"]).is_empty(), "{request}");
    let steps = arr(&request["callSteps"]);
    assert_eq!(steps.len(), 2, "{request}");
    assert_eq!(steps[1]["schemaId"], LEG);
    assert_eq!(steps[1]["triggeredBy"], steps[0]["key"]);
    let leg_error = obj(&steps[1]["error"]);
    assert!(leg_error["errorCategory"].is_string(), "{request}");
    assert!(leg_error["errorCode"].is_string(), "{request}");
    assert!(leg_error["errorMessage"].is_string(), "{request}");
    assert!(steps[0].get("error").is_none(), "{request}");

    let missing = strings(&request["missingFields"]);
    assert_eq!(missing, strings(&steps[1]["missingFields"]), "{request}");
    assert_eq!(
        missing,
        strings(&leg_error["missingFields"]),
        "the leg error's own missingFields"
    );
    let leg_fields = schema_fields(&app, &token, LEG).await;
    let results = obj(&request["results"]);
    for field in &missing {
        assert!(leg_fields.contains(field), "{field} is a {LEG} field");
        assert!(!results.contains_key(field), "{field} was not captured");
    }
    for required in [
        "appealSubmissionMethod",
        "appealFilingLimitDays",
        "appealCallReferenceNumber",
    ] {
        assert!(missing.iter().any(|m| m == required), "{required} missing");
    }
}

#[actix_web::test]
async fn a_not_found_failure_code_ends_in_failure_with_its_category_and_no_contributing_calls() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "failure:MEMBER_NOT_FOUND").await;

    assert_eq!(request["state"], "FAILURE", "{request}");
    assert_eq!(request["results"], json!({}));
    assert_eq!(failure_of(&request), ("NOT_FOUND", "MEMBER_NOT_FOUND"));
    assert!(request["error"]["errorMessage"].is_string());
    assert!(!arr(&request["callSteps"]).is_empty(), "{request}");
    assert_absent(&request, &["contributingCalls", "resultSources"], "FAILURE");
}

#[actix_web::test]
async fn a_system_failure_code_and_an_unknown_code_end_in_failure_under_system_error() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let ids = create_all(
        on(&app),
        &token,
        &[
            sandbox_inputs("failure:IVR_FAILURE", 0),
            sandbox_inputs("failure:SOMETHING_UNKNOWN", 1),
        ],
    )
    .await;

    let requests = wait_all(&app, &token, &ids).await;

    for request in &requests {
        assert_read_shape(request);
        assert_eq!(request["state"], "FAILURE", "{request}");
    }
    assert_eq!(failure_of(&requests[0]), ("SYSTEM_ERROR", "IVR_FAILURE"));
    // Operator contract 4: unknown codes are SYSTEM_ERROR/OTHER.
    assert_eq!(failure_of(&requests[1]), ("SYSTEM_ERROR", "OTHER"));
}

#[actix_web::test]
async fn cannot_answer_succeeds_with_one_explicit_non_answer_that_is_not_missing() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "cannot_answer").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    let non_answers: Vec<&String> = obj(&request["results"])
        .iter()
        .filter(|(_, v)| v.as_str().unwrap().starts_with("CANNOT ANSWER - "))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(non_answers.len(), 1, "{request}");
    assert!(!strings(&request["missingFields"]).contains(non_answers[0]));
}

#[actix_web::test]
async fn digital_finishes_without_a_call_at_minimum_completeness_with_a_result_summary() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "digital").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_eq!(request["modality"], "digital_only");
    assert_eq!(request["data_completeness"], "minimum");
    assert!(!request["resultSummary"].as_str().unwrap().is_empty());
    assert_absent(
        &request,
        &[
            "to",
            "transcript",
            "transcriptPostCall",
            "callDuration",
            "callSummary",
            "recordingDownloadUrl",
            "callSteps",
            "contributingCalls",
            "resultSources",
        ],
        "no call was placed",
    );
}

#[actix_web::test]
async fn digital_ends_electronically_also_on_a_schema_written_without_mappings() {
    // The operator contract's schema shape, with no `electronic` on any field.
    let mut config = TestConfig::default();
    config.dispatching().features(&ALL_FEATURES).push(
        "schemas",
        r#"
            id = "plain-status"
            name = "Plain status"
            request_type = "claim-status"
            version = 1
            required_inputs = ["payerName", "memberId", "patientFirstName", "patientLastName",
                               "patientDateOfBirth"]
            [[fields]]
            name = "claimStatus"
            label = "Claim status"
            description = "What is the current status of the claim?"
            type = "multiple"
            allowed_values = ["PAID", "DENIED", "PENDING"]
            required = true
            [[fields]]
            name = "billedAmount"
            label = "Billed amount"
            description = "What amount was billed?"
            type = "dollar"
            required = true
        "#,
    );
    let schemas = config.demo_account()["schemas"].as_array_mut().unwrap();
    schemas.push("plain-status".into());
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let mut inputs = sandbox_inputs("digital", 0);
    inputs.as_object_mut().unwrap().remove("dateOfService");
    let (status, body) = on(&app)
        .post_requests(
            &token,
            &json!({ "schemaId": "plain-status", "inputs": inputs }),
        )
        .await;
    assert_eq!(status, 200, "create: {body}");
    let id = body["requestId"].as_str().unwrap();

    let request = app.wait_terminal(&token, id).await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_eq!(request["modality"], "digital_only", "{request}");
    assert_eq!(request["data_completeness"], "minimum");
    assert!(
        request.get("callSteps").is_none(),
        "no call was placed: {request}"
    );
    for field in ["claimStatus", "billedAmount"] {
        assert!(request["results"][field].is_string(), "{field}: {request}");
    }
}

/// The `claim-status-basic` fields the default config maps to an element of a claim-status answer (277).
const CLAIM_STATUS_ELECTRONIC: [&str; 7] = [
    "billedAmount",
    "checkOrEftNumber",
    "claimProcessedDate",
    "claimStatus",
    "paidAmount",
    "payerClaimNumber",
    "paymentDate",
];

#[actix_web::test]
async fn digital_results_hold_only_what_an_electronic_answer_can_give() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    // Several members, so that paid and unpaid statuses both come up.
    let inputs: Vec<Value> = (0..8).map(|n| sandbox_inputs("digital", n)).collect();
    let ids = create_all(on(&app), &token, &inputs).await;

    let requests = wait_all(&app, &token, &ids).await;

    for request in &requests {
        assert_read_shape(request);
        assert_eq!(request["state"], "SUCCESS", "{request}");
        assert_eq!(request["modality"], "digital_only", "{request}");
        assert_eq!(request["data_completeness"], "minimum", "{request}");
        assert_eq!(request["missingFields"], json!([]), "{request}");
        assert!(request["resultSummary"].is_string(), "{request}");
        assert_absent(
            request,
            &[
                "to",
                "transcript",
                "transcriptPostCall",
                "callDuration",
                "callSummary",
                "callAuditSummary",
                "recordingDownloadUrl",
                "callSteps",
                "contributingCalls",
                "resultSources",
            ],
            "no call was placed",
        );
        let results = obj(&request["results"]);
        for phone_only in ["representativeName", "callReferenceNumber"] {
            assert!(
                !results.contains_key(phone_only),
                "{phone_only} comes only from a call: {request}"
            );
        }
        for field in results.keys() {
            assert!(
                CLAIM_STATUS_ELECTRONIC.contains(&field.as_str()),
                "{field} is not mapped to the electronic answer: {request}"
            );
        }
        // A field whose condition is unanswered is unanswered too, down the chain.
        assert!(results.contains_key("claimStatus"), "{request}");
        if results["claimStatus"] != "PAID" {
            for paid_only in ["paidAmount", "checkOrEftNumber", "paymentDate"] {
                assert!(!results.contains_key(paid_only), "{request}");
            }
        }
    }
}

#[actix_web::test]
async fn digital_plus_phone_finishes_with_one_call_and_no_result_summary() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "digital_plus_phone").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_eq!(request["modality"], "digital_plus_phone");
    assert_eq!(request["data_completeness"], Value::Null);
    assert_eq!(request["resultSummary"], Value::Null);
    assert_eq!(arr(&request["contributingCalls"]).len(), 1, "{request}");
    assert!(request["transcript"].is_string(), "{request}");
}

#[actix_web::test]
async fn digital_without_electronic_channels_is_an_ordinary_phone_request() {
    let features: Vec<&str> = ALL_FEATURES
        .into_iter()
        .filter(|f| *f != "electronic_channels")
        .collect();
    let app = app_with_features(&features).await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "digital").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_eq!(request["modality"], "phone_only");
    assert_eq!(request["data_completeness"], Value::Null);
    assert_eq!(request["resultSummary"], Value::Null);
    assert_eq!(arr(&request["contributingCalls"]).len(), 1, "{request}");
}

// ---- 1-2. side by side: terminal shapes, final states, stuck ------------------------------------------

#[actix_web::test]
async fn every_scenario_run_side_by_side_ends_as_promised_stays_final_and_stuck_stays_processing() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let expected = [
        ("success", "SUCCESS"),
        ("redial", "SUCCESS"),
        ("follow_up", "SUCCESS"),
        ("partial", "PARTIAL"),
        ("failure:MEMBER_NOT_FOUND", "FAILURE"),
        ("failure:IVR_FAILURE", "FAILURE"),
        ("failure:SOMETHING_UNKNOWN", "FAILURE"),
        ("cannot_answer", "SUCCESS"),
        ("digital", "SUCCESS"),
        ("digital_plus_phone", "SUCCESS"),
    ];
    let mut inputs: Vec<Value> = expected
        .iter()
        .enumerate()
        .map(|(n, (scenario, _))| sandbox_inputs(scenario, n))
        .collect();
    inputs.push(sandbox_inputs("stuck", 99));
    let ids = create_all(on(&app), &token, &inputs).await;
    let (finishing, stuck) = ids.split_at(expected.len());

    let requests = wait_all(&app, &token, finishing).await;

    for ((scenario, state), request) in expected.iter().zip(&requests) {
        assert_eq!(request["state"], *state, "{scenario}: {request}");
        assert_read_shape(request);
        assert!(
            timestamp_pattern().is_match(request["dateCreated"].as_str().unwrap()),
            "{request}"
        );
    }
    // Terminal is final: a later read shows the same state, completion time and results.
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    for (request, id) in requests.iter().zip(finishing) {
        let again = app.read_request(&token, id).await;
        for key in ["state", "completedAt", "results", "missingFields", "error"] {
            assert_eq!(again[key], request[key], "{key} of {id} changed");
        }
    }
    let stuck = app.read_request(&token, &stuck[0]).await;
    assert_eq!(stuck["state"], "PROCESSING", "{stuck}");
    assert_eq!(stuck["completedAt"], Value::Null);
    assert_eq!(stuck["results"], json!({}));
    assert_eq!(stuck["error"], Value::Null);
    assert_read_shape(&stuck);
    for entry in list_batch(&app, &token, stuck["requestBatchId"].as_str().unwrap()).await {
        assert_list_shape(&entry);
    }
}

// ---- 3. tracing chain -------------------------------------------------------------------------------

#[actix_web::test]
async fn every_field_of_a_follow_up_request_traces_back_to_the_call_step_and_schema_that_produced_it(
) {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let request = run_scenario(&app, &token, "follow_up").await;
    assert_eq!(request["state"], "SUCCESS", "{request}");

    let mut fields_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for schema in [SCHEMA, LEG] {
        fields_of.insert(schema.into(), schema_fields(&app, &token, schema).await);
    }
    let sources = obj(&request["resultSources"]);
    let calls = arr(&request["contributingCalls"]);
    let steps = arr(&request["callSteps"]);
    let mut schemas_seen = BTreeSet::new();
    for (field, value) in obj(&request["results"]) {
        let number = sources
            .get(field)
            .unwrap_or_else(|| panic!("{field} has a source: {request}"));
        let call = calls
            .iter()
            .find(|c| c["call"] == *number)
            .unwrap_or_else(|| panic!("call {number} of {field} is a contributing call"));
        assert_eq!(
            &call["results"][field], value,
            "call {number} captured {field} with the final value"
        );
        assert!(
            strings(&call["fieldsCaptured"]).contains(field),
            "call {number} lists {field} as captured"
        );
        let step = steps
            .iter()
            .find(|s| s["key"] == call["callStep"])
            .unwrap_or_else(|| panic!("step {} of call {number} exists", call["callStep"]));
        let schema = step["schemaId"].as_str().unwrap();
        let fields = fields_of
            .get(schema)
            .unwrap_or_else(|| panic!("step schema {schema} is {SCHEMA} or {LEG}"));
        assert!(
            fields.contains(field),
            "{field} is in {schema}'s resultsFields"
        );
        schemas_seen.insert(schema.to_owned());
    }
    assert_eq!(
        schemas_seen,
        BTreeSet::from([SCHEMA.to_owned(), LEG.to_owned()]),
        "answers come from both steps"
    );
}

// ---- 4. enrichment ----------------------------------------------------------------------------------

#[actix_web::test]
async fn a_completed_phone_request_carries_the_call_enrichment_on_the_single_read_and_less_on_the_list(
) {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let request = run_scenario(&app, &token, "success").await;

    for key in [
        "transcript",
        "transcriptPostCall",
        "callSummary",
        "callAuditSummary",
    ] {
        assert!(
            !request[key].as_str().unwrap_or_default().is_empty(),
            "{key}: {request}"
        );
    }
    let url = request["recordingDownloadUrl"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{PUBLIC_URL}/v1/recordings/")),
        "{url}"
    );
    let duration = request["callDuration"].as_str().unwrap();
    assert!(duration_pattern().is_match(duration), "{duration}");
    // Sanitized as inputs are (no `+` or leading 1); only the caller number is E.164.
    assert_eq!(
        request["to"], "8775550100",
        "UnitedHealthcare's directory number"
    );
    let from = request["callFromNumber"].as_str().unwrap();
    assert!(e164_pattern().is_match(from), "{from}");
    assert!(
        request.get("scriptVersion").is_some_and(|v| !v.is_null()),
        "{request}"
    );
    assert!(request["attemptDetails"].is_array(), "{request}");

    let entries = list_batch(&app, &token, request["requestBatchId"].as_str().unwrap()).await;
    let entry = entries
        .iter()
        .find(|e| e["requestId"] == request["requestId"])
        .unwrap();
    assert_list_shape(entry);
    assert_eq!(entry["callSummary"], request["callSummary"]);
    assert_eq!(entry["callDuration"], request["callDuration"]);
    assert_eq!(entry["to"], request["to"]);
    assert_eq!(entry["scriptVersion"], request["scriptVersion"]);
    assert_eq!(entry["state"], "SUCCESS");
}

#[actix_web::test]
async fn the_per_account_optional_fields_are_absent_when_their_features_are_off() {
    let app = app_with_features(&["payer_phone_lookup"]).await;
    let token = app.sandbox_token().await;
    let request = run_scenario(&app, &token, "success").await;
    let optional = [
        "callFromNumber",
        "transcriptPostCall",
        "attemptDetails",
        "scriptVersion",
    ];

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_absent(&request, &optional, "feature off");
    assert!(request["transcript"].is_string(), "{request}");
    assert!(request["recordingDownloadUrl"].is_string(), "{request}");
    for entry in list_batch(&app, &token, request["requestBatchId"].as_str().unwrap()).await {
        assert_absent(&entry, &optional, "feature off");
        assert_list_shape(&entry);
    }
}

// ---- 5. recordings ----------------------------------------------------------------------------------

/// The recording link of `request` on `app`'s own origin.
fn local_link(app: &TestApp, request: &Value) -> String {
    let url = request["recordingDownloadUrl"].as_str().unwrap();
    let path = url
        .strip_prefix(PUBLIC_URL)
        .unwrap_or_else(|| panic!("{url} is under {PUBLIC_URL}"));
    format!("{}{path}", app.address)
}

/// GET without credentials: status, content type and body.
async fn download(app: &TestApp, url: &str) -> (u16, String, Vec<u8>) {
    let response = app.client.get(url).send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (
        status,
        content_type,
        response.bytes().await.unwrap().to_vec(),
    )
}

/// A refused download: 4xx with the standard envelope.
async fn assert_refused(app: &TestApp, url: &str) {
    let response = app.client.get(url).send().await.unwrap();
    let (status, body) = status_and_json(response).await;
    assert!((400..500).contains(&status), "{url}: {status} {body}");
    let keys: Vec<&str> = obj(&body).keys().map(String::as_str).collect();
    assert_eq!(keys, ["error", "message"], "{url}: {body}");
    assert!(body["error"].is_string() && body["message"].is_string());
}

#[actix_web::test]
async fn the_recording_link_downloads_a_wav_and_a_tampered_or_incomplete_link_is_refused() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let request = run_scenario(&app, &token, "success").await;
    let link = local_link(&app, &request);

    let (status, content_type, body) = download(&app, &link).await;
    assert_eq!(status, 200, "{link}");
    assert!(content_type.starts_with("audio/wav"), "{content_type}");
    assert!(body.starts_with(b"RIFF"), "a RIFF/WAV body");

    let (base, signature) = link.rsplit_once("signature=").unwrap();
    let flipped = if signature.ends_with('0') { '1' } else { '0' };
    let forged = format!(
        "{base}signature={}{flipped}",
        &signature[..signature.len() - 1]
    );
    assert_refused(&app, &forged).await;

    let call_id = request["contributingCalls"][0]["id"].as_str().unwrap();
    let other_id = format!("{}x", &call_id[..call_id.len() - 1]);
    assert_refused(&app, &link.replacen(call_id, &other_id, 1)).await;

    let expires: i64 = link
        .split_once("expires=")
        .and_then(|(_, rest)| rest.split('&').next())
        .unwrap()
        .parse()
        .unwrap();
    let extended = link.replacen(
        &format!("expires={expires}"),
        &format!("expires={}", expires + 3600),
        1,
    );
    assert_refused(&app, &extended).await;
    let garbled = link.replacen(&format!("expires={expires}"), "expires=soon", 1);
    assert_refused(&app, &garbled).await;

    let (without_query, query) = link.split_once('?').unwrap();
    assert_refused(&app, without_query).await;
    let expires_only = query
        .split('&')
        .find(|p| p.starts_with("expires="))
        .unwrap();
    assert_refused(&app, &format!("{without_query}?{expires_only}")).await;
    let signature_only = query
        .split('&')
        .find(|p| p.starts_with("signature="))
        .unwrap();
    assert_refused(&app, &format!("{without_query}?{signature_only}")).await;
}

#[actix_web::test]
async fn an_expired_recording_link_is_refused_and_a_fresh_read_signs_a_new_one() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let request = run_scenario(&app, &token, "success").await;
    let link = local_link(&app, &request);

    app.advance_clock(3601).await;

    assert_refused(&app, &link).await;
    // Bearer tokens expire by the same clock: sign in again for the fresh read.
    let token = app.sandbox_token().await;
    let fresh = app
        .read_request(&token, request["requestId"].as_str().unwrap())
        .await;
    let (status, _, body) = download(&app, &local_link(&app, &fresh)).await;
    assert_eq!(status, 200);
    assert!(body.starts_with(b"RIFF"));
}

// ---- 6. faults --------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_call_that_panics_once_succeeds_after_the_request_restarts() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "fault:call_panic_once").await;

    assert_eq!(request["state"], "SUCCESS", "{request}");
    assert_eq!(arr(&request["contributingCalls"]).len(), 1, "{request}");
    let stats = on(&app).orchestration_stats().await;
    assert!(stats["panics"].as_u64().unwrap() > 0, "{stats}");
    assert!(stats["restarts"].as_u64().unwrap() > 0, "{stats}");
}

#[actix_web::test]
async fn a_call_that_always_panics_ends_in_failure_as_system_error_other() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;

    let request = run_scenario(&app, &token, "fault:call_panic").await;

    assert_eq!(request["state"], "FAILURE", "{request}");
    assert_eq!(failure_of(&request), ("SYSTEM_ERROR", "OTHER"));
    let stats = on(&app).orchestration_stats().await;
    assert!(stats["panics"].as_u64().unwrap() > 0, "{stats}");
    assert!(stats["restarts"].as_u64().unwrap() > 0, "{stats}");
}

#[actix_web::test]
async fn a_panicking_request_never_affects_the_requests_beside_it() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let mut inputs: Vec<Value> = (0..10).map(|n| sandbox_inputs("success", n)).collect();
    inputs.push(sandbox_inputs("fault:call_panic", 10));
    inputs.push(sandbox_inputs("fault:call_panic", 11));
    let ids = create_all(on(&app), &token, &inputs).await;

    let requests = wait_all(&app, &token, &ids).await;

    for request in &requests[..10] {
        assert_eq!(request["state"], "SUCCESS", "{request}");
        assert_read_shape(request);
    }
    for request in &requests[10..] {
        assert_eq!(request["state"], "FAILURE", "{request}");
        assert_eq!(failure_of(request), ("SYSTEM_ERROR", "OTHER"));
    }
    for probe in ["/healthz", "/readyz"] {
        let response = app.client.get(app.url(probe)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{probe}");
    }
    let stats = on(&app).orchestration_stats().await;
    assert_eq!(stats["running"], 0, "{stats}");
    // The server still takes and runs new work.
    let after = run_scenario(&app, &token, "success").await;
    assert_eq!(after["state"], "SUCCESS", "{after}");
}

// ---- 7. production ----------------------------------------------------------------------------------

#[actix_web::test]
async fn production_requests_reach_a_terminal_state_and_obey_the_same_presence_rules() {
    let app = dispatching_app().await;
    let token = app.live_token().await;
    let inputs: Vec<Value> = (0..6).map(claim_inputs).collect();
    let ids = create_all(on(&app), &token, &inputs).await;

    let requests = wait_all(&app, &token, &ids).await;

    for request in &requests {
        assert_read_shape(request);
    }
    let batch = requests[0]["requestBatchId"].as_str().unwrap();
    for entry in list_batch(&app, &token, batch).await {
        assert!(
            TERMINAL.contains(&entry["state"].as_str().unwrap()),
            "{entry}"
        );
        assert_list_shape(&entry);
    }
}

// ---- 8. determinism ---------------------------------------------------------------------------------

#[actix_web::test]
async fn identical_sandbox_inputs_produce_identical_results() {
    let app = dispatching_app().await;
    let token = app.sandbox_token().await;
    let mut items = Vec::new();
    for scenario in ["success", "follow_up", "cannot_answer"] {
        for copy in 0..2 {
            items.push(json!({
                "schemaId": SCHEMA,
                "internalId": format!("{scenario}-{copy}"),
                "inputs": sandbox_inputs(scenario, 7),
            }));
        }
    }
    let (status, body) = on(&app)
        .post_requests(&token, &json!({ "requests": items }))
        .await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<String> = arr(&body["requests"])
        .iter()
        .map(|e| e["requestId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids.iter().collect::<BTreeSet<_>>().len(),
        ids.len(),
        "distinct requests"
    );

    let requests = wait_all(&app, &token, &ids).await;

    for pair in requests.chunks(2) {
        assert_eq!(pair[0]["inputs"], pair[1]["inputs"]);
        assert_eq!(pair[0]["state"], "SUCCESS", "{}", pair[0]);
        assert_eq!(pair[0]["results"], pair[1]["results"], "same inputs");
        assert_eq!(pair[0]["resultSources"], pair[1]["resultSources"]);
    }
    assert_ne!(
        requests[0]["results"], requests[2]["results"],
        "a different scenario is a different input"
    );
}

// ---- 9. kill -9 -------------------------------------------------------------------------------------

#[actix_web::test]
async fn requests_running_at_a_kill_9_resume_after_a_restart_and_finish_without_duplicate_calls() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let mut config = TestConfig::default();
    // About 1.25 s per sandbox call: long enough to kill the server mid-call.
    config.dispatching().set("simulation.time_scale", 60.0);
    let config_path = write_config(config_dir.path(), &config);
    let first = BinaryServer::start(&config_path, data_dir.path());
    let server: &Api = &first;
    server.wait_ready().await;
    let token = server.sandbox_token().await;
    let inputs: Vec<Value> = (0..5).map(|n| sandbox_inputs("success", n)).collect();
    let ids = create_all(server, &token, &inputs).await;
    let deadline = Instant::now() + WAIT_LIMIT;
    loop {
        let stats = server.orchestration_stats().await;
        let placed = server.read_request(&token, &ids[0]).await["attemptDetails"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        if stats["running"].as_u64().unwrap() > 0 || placed {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "nothing started running: {stats}"
        );
        actix_web::rt::time::sleep(POLL_STEP).await;
    }
    first.kill_hard();

    let second = BinaryServer::start(&config_path, data_dir.path());
    let server: &Api = &second;
    server.wait_ready().await;
    let token = server.sandbox_token().await;
    let requests = join_all(ids.iter().map(|id| server.wait_terminal(&token, id))).await;
    let stats = server.orchestration_stats().await;
    assert!(
        stats["requests_started"].as_u64().unwrap() > 0,
        "the restarted server resumed the interrupted requests: {stats}"
    );

    for request in &requests {
        assert_eq!(request["state"], "SUCCESS", "{request}");
        assert_read_shape(request);
        let steps = arr(&request["callSteps"]);
        assert_eq!(steps.len(), 1, "{request}");
        for step in steps {
            assert!(
                step["numContributingCalls"].as_u64().unwrap() <= 2,
                "no call placed twice: {request}"
            );
        }
        let placed = arr(&request["attemptDetails"]);
        assert_eq!(
            placed.len(),
            arr(&request["contributingCalls"]).len(),
            "every placed call is accounted for once: {request}"
        );
    }
    let response = second
        .client
        .get(second.url("/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

// ---- 10. booked days --------------------------------------------------------------------------------

#[actix_web::test]
async fn booked_requests_do_not_run_before_their_day_and_run_when_it_comes() {
    let mut config = TestConfig::default();
    config.dispatching();
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 1.into());
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let inputs: Vec<Value> = (0..3).map(|n| sandbox_inputs("success", n)).collect();
    let ids = create_all(on(&app), &token, &inputs).await;

    let first = app.wait_terminal(&token, &ids[0]).await;
    assert_eq!(first["state"], "SUCCESS", "{first}");
    // Several dispatch ticks later the others have still not started.
    actix_web::rt::time::sleep(Duration::from_millis(600)).await;
    for id in &ids[1..] {
        assert_not_started(&app.read_request(&token, id).await);
    }

    app.advance_clock(86_400).await;
    // Bearer tokens expire by the same clock.
    let token = app.sandbox_token().await;

    let second = app.wait_terminal(&token, &ids[1]).await;
    assert_eq!(second["state"], "SUCCESS", "{second}");
    actix_web::rt::time::sleep(Duration::from_millis(600)).await;
    assert_not_started(&app.read_request(&token, &ids[2]).await);
}

/// A request whose run has not begun: PROCESSING, nothing dispatched, no call attempts.
fn assert_not_started(request: &Value) {
    assert_eq!(request["state"], "PROCESSING", "{request}");
    assert_eq!(request["modality"], Value::Null, "{request}");
    assert_eq!(request["attemptDetails"], json!([]), "{request}");
    assert_read_shape(request);
}
