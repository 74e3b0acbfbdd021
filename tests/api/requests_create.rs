//! `POST /v1/requests` (service-interface 4.6, 7.1, 7.2, 7.4 and 8): single and batch creation, body
//! errors, input validation, member-ID and per-payer rules, idempotency and capacity overflow.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Map, Value};

use crate::helpers::{spawn_app, spawn_app_with, status_and_json, TestApp, TestConfig};

const SCHEMA: &str = "claim-status-basic";

/// A fully valid `claim-status-basic` input map: every required key of the schema (phoneNumber included,
/// so it also passes without payer lookup) and no optional key.
fn valid_inputs() -> Map<String, Value> {
    let inputs = json!({
        "payerName": "Aetna",
        "phoneNumber": "(888) 555-0100",
        "memberId": "W12345678",
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "1980-04-02",
        "dateOfService": "2026-10-15",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
    });
    inputs.as_object().unwrap().clone()
}

/// The valid inputs with `key` set to `value`, or removed when `value` is `None`.
fn inputs_with(key: &str, value: Option<Value>) -> Map<String, Value> {
    let mut inputs = valid_inputs();
    match value {
        Some(value) => inputs.insert(key.to_owned(), value),
        None => inputs.remove(key),
    };
    inputs
}

fn item(inputs: Map<String, Value>) -> Value {
    json!({ "schemaId": SCHEMA, "inputs": inputs })
}

fn item_with_internal_id(inputs: Map<String, Value>, internal_id: &str) -> Value {
    json!({ "schemaId": SCHEMA, "inputs": inputs, "internalId": internal_id })
}

/// The demo account with exactly these features.
async fn app_with_features(features: &[&str]) -> TestApp {
    let mut config = TestConfig::default();
    config.features(features);
    spawn_app_with(&config).await
}

async fn post(app: &TestApp, token: &str, body: &Value) -> (u16, Value) {
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

/// How many requests `GET /v1/requests` lists for today (the manual clock's day).
async fn request_count(app: &TestApp, token: &str) -> usize {
    let (status, body) = status_and_json(app.get("/v1/requests?pageSize=500", token).await).await;
    assert_eq!(status, 200, "list: {body}");
    body["requests"].as_array().unwrap().len()
}

async fn get_request(app: &TestApp, token: &str, id: &str) -> (u16, Value) {
    status_and_json(app.get(&format!("/v1/requests/{id}"), token).await).await
}

/// The object's keys, sorted.
fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

fn id_of<'a>(body: &'a Value, key: &str) -> &'a str {
    body[key]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("{key} is not a non-empty string in {body}"))
}

fn invalid_request(message: &str) -> Value {
    json!({ "error": "INVALID_REQUEST", "message": message })
}

/// Asserts an `INVALID_INPUTS` envelope: exactly `error`, `message` and `details`, with exactly these
/// buckets, and a message that names every flagged key.
fn assert_invalid_inputs(body: &Value, missing: &[&str], invalid: &Value, what: &str) {
    assert_eq!(
        keys(body),
        ["details", "error", "message"],
        "{what}: envelope {body}"
    );
    assert_eq!(body["error"], "INVALID_INPUTS", "{what}: {body}");
    assert_eq!(
        body["details"],
        json!({ "missingInputs": missing, "invalidInputs": invalid }),
        "{what}"
    );
    let message = body["message"].as_str().unwrap_or_default();
    let flagged = missing
        .iter()
        .copied()
        .chain(invalid.as_object().unwrap().keys().map(String::as_str));
    for key in flagged {
        assert!(
            message.contains(key),
            "{what}: message {message:?} does not name {key}"
        );
    }
}

// ---------------------------------------------------------------------------------------------------
// 1. Single create
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_single_create_answers_only_the_request_and_batch_ids_without_internal_id_or_lookup() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let mut body = item(valid_inputs());
    body["internalTag"] = json!("tag-only-on-reads");
    let (status, created) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(keys(&created), ["requestBatchId", "requestId"], "{created}");
    id_of(&created, "requestId");
    id_of(&created, "requestBatchId");
}

#[actix_web::test]
async fn a_single_create_echoes_the_internal_id_and_the_payer_lookup_when_the_account_has_lookup() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let body = item_with_internal_id(valid_inputs(), "claim-0001");
    let (status, created) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(
        keys(&created),
        ["internalId", "payerLookup", "requestBatchId", "requestId"]
    );
    let expected = json!({
        "requestId": id_of(&created, "requestId"),
        "requestBatchId": id_of(&created, "requestBatchId"),
        "internalId": "claim-0001",
        "payerLookup": {
            "inputPayerName": "Aetna",
            "inputPhoneNumber": "(888) 555-0100",
            "matchedPayerName": null,
            "matchedPayerPhone": null,
            "phoneNumberToUse": "(888) 555-0100",
            "phoneNumberSource": "input",
        },
    });
    assert_eq!(created, expected);

    // payerLookup is on every created request of a lookup account, internalId only when supplied.
    let (status, plain) = post(&app, &token, &item(valid_inputs())).await;
    assert_eq!(status, 200, "{plain}");
    assert_eq!(keys(&plain), ["payerLookup", "requestBatchId", "requestId"]);
}

#[actix_web::test]
async fn a_created_request_is_immediately_readable_in_state_processing() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let mut body = item_with_internal_id(valid_inputs(), "read-me");
    body["internalTag"] = json!("batch-7");
    let (status, created) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    let id = id_of(&created, "requestId");

    let (status, read) = get_request(&app, &token, id).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["requestId"], created["requestId"]);
    assert_eq!(read["requestBatchId"], created["requestBatchId"]);
    assert_eq!(read["schemaId"], SCHEMA);
    assert_eq!(read["requestType"], "claim-status");
    assert_eq!(read["state"], "PROCESSING");
    assert_eq!(read["inputs"], Value::Object(valid_inputs()));
    assert_eq!(read["results"], json!({}));
    assert_eq!(read["completedAt"], Value::Null);
    assert_eq!(read["error"], Value::Null);
    assert_eq!(read["internalId"], "read-me");
    assert_eq!(read["internalTag"], "batch-7");
    assert_eq!(read["payerLookup"], created["payerLookup"]);

    let (_, list) = status_and_json(app.get("/v1/requests", &token).await).await;
    let listed: Vec<&Value> = list["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["requestId"])
        .collect();
    assert_eq!(listed, [&created["requestId"]]);
}

// ---------------------------------------------------------------------------------------------------
// 2. Body errors
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn bodies_of_the_wrong_shape_are_invalid_request_and_create_nothing() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let inputs = Value::Object(valid_inputs());
    let not_object = "Request body must be a JSON object";
    let rows: Vec<(&str, Value, &str)> = vec![
        (
            "body is an array of items",
            json!([item(valid_inputs())]),
            not_object,
        ),
        ("body is a string", json!(SCHEMA), not_object),
        ("body is a number", json!(42), not_object),
        ("body is null", Value::Null, not_object),
        (
            "schemaId missing",
            json!({ "inputs": inputs }),
            "schemaId is required",
        ),
        (
            "schemaId null",
            json!({ "schemaId": null, "inputs": inputs }),
            "schemaId is required",
        ),
        (
            "schemaId empty",
            json!({ "schemaId": "", "inputs": inputs }),
            "schemaId is required",
        ),
        (
            "schemaId a number",
            json!({ "schemaId": 7, "inputs": inputs }),
            "schemaId must be a string",
        ),
        (
            "schemaId an array",
            json!({ "schemaId": [SCHEMA], "inputs": inputs }),
            "schemaId must be a string",
        ),
        (
            "inputs missing",
            json!({ "schemaId": SCHEMA }),
            "inputs is required",
        ),
        (
            "inputs null",
            json!({ "schemaId": SCHEMA, "inputs": null }),
            "inputs is required",
        ),
        (
            "inputs a string",
            json!({ "schemaId": SCHEMA, "inputs": "payerName=Aetna" }),
            "inputs must be an object of strings",
        ),
        (
            "inputs an array",
            json!({ "schemaId": SCHEMA, "inputs": [inputs] }),
            "inputs must be an object of strings",
        ),
        (
            "empty batch",
            json!({ "requests": [] }),
            "requests must not be empty",
        ),
        (
            "requests a string",
            json!({ "requests": "x" }),
            "requests must be an array of request objects",
        ),
        (
            "requests an object",
            json!({ "requests": item(valid_inputs()) }),
            "requests must be an array of request objects",
        ),
    ];
    for (what, body, message) in rows {
        let (status, answer) = post(&app, &token, &body).await;
        assert_eq!(status, 400, "{what}: {answer}");
        assert_eq!(answer, invalid_request(message), "{what}");
    }
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn malformed_json_is_invalid_request() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let rows = [
        (
            "truncated object",
            r#"{"schemaId": "claim-status-basic", "inputs": {"#,
        ),
        ("single quotes", r#"{'schemaId': 'claim-status-basic'}"#),
        (
            "trailing garbage",
            r#"{"schemaId": "claim-status-basic"} x"#,
        ),
        ("empty body", ""),
    ];
    for (what, raw) in rows {
        let response = app
            .client
            .post(app.url("/v1/requests"))
            .bearer_auth(&token)
            .header("Content-Type", "application/json")
            .body(raw)
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert_eq!(keys(&body), ["error", "message"], "{what}: {body}");
        assert_eq!(body["error"], "INVALID_REQUEST", "{what}");
        assert!(
            body["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{what}: {body}"
        );
    }
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn an_unknown_schema_on_a_single_post_is_schema_not_found() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    for schema in ["no-such-schema", "Claim-Status-Basic", "a/b"] {
        let body = json!({ "schemaId": schema, "inputs": valid_inputs() });
        let (status, answer) = post(&app, &token, &body).await;
        assert_eq!(status, 404, "{schema}: {answer}");
        assert_eq!(
            answer,
            json!({ "error": "SCHEMA_NOT_FOUND", "message": format!("Schema '{schema}' was not found") }),
            "{schema}"
        );
    }
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn a_retired_schema_is_schema_not_found_on_a_single_post() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let body = json!({ "schemaId": "vob-basic", "inputs": valid_inputs() });
    let (status, before) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "vob-basic before retirement: {before}");

    let retired = app
        .admin(Method::DELETE, "/admin/v1/schemas/vob-basic", None)
        .await
        .status();
    assert_eq!(retired, 200);
    let (status, answer) = post(&app, &token, &body).await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(
        answer,
        json!({ "error": "SCHEMA_NOT_FOUND", "message": "Schema 'vob-basic' was not found" })
    );
    assert_eq!(request_count(&app, &token).await, 1);
}

// ---------------------------------------------------------------------------------------------------
// 3. Ignored keys and the top-level `to`
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn unknown_top_level_keys_and_request_type_are_ignored_and_the_schema_decides_the_request_type(
) {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let mut body = item(valid_inputs());
    body["requestType"] = json!("vob");
    body["scriptId"] = json!("vob-basic");
    body["calls"] = json!([]);
    body["somethingNew"] = json!({ "nested": [1, 2, 3] });
    let (status, created) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(
        keys(&created),
        ["payerLookup", "requestBatchId", "requestId"]
    );

    let (status, read) = get_request(&app, &token, id_of(&created, "requestId")).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["schemaId"], SCHEMA);
    assert_eq!(read["requestType"], "claim-status");
    assert_eq!(read["inputs"], Value::Object(valid_inputs()));
}

#[actix_web::test]
async fn a_top_level_to_is_never_dialed_so_without_lookup_phone_number_is_missing() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let mut body = item(inputs_with("phoneNumber", None));
    body["to"] = json!("8005550123");
    let (status, answer) = post(&app, &token, &body).await;
    assert_eq!(status, 400, "{answer}");
    assert_invalid_inputs(&answer, &["phoneNumber"], &json!({}), "top-level to");
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn a_top_level_to_is_never_dialed_so_with_lookup_the_matched_number_is_used() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let mut body = item(inputs_with("phoneNumber", None));
    body["to"] = json!("8005550123");
    let (status, created) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(
        created["payerLookup"],
        json!({
            "inputPayerName": "Aetna",
            "inputPhoneNumber": null,
            "matchedPayerName": "Aetna",
            "matchedPayerPhone": "8885550192",
            "phoneNumberToUse": "8885550192",
            "phoneNumberSource": "phoneBook",
        })
    );
}

// ---------------------------------------------------------------------------------------------------
// 4. Input validation (7.4)
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn absent_null_empty_and_blank_required_inputs_are_all_missing() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let spellings: [(&str, Option<Value>); 4] = [
        ("absent", None),
        ("null", Some(Value::Null)),
        ("empty", Some(json!(""))),
        ("whitespace only", Some(json!("   "))),
    ];
    for key in ["payerName", "phoneNumber", "memberId", "dateOfService"] {
        for (spelling, value) in &spellings {
            let what = format!("{key} {spelling}");
            let (status, answer) = post(&app, &token, &item(inputs_with(key, value.clone()))).await;
            assert_eq!(status, 400, "{what}: {answer}");
            assert_invalid_inputs(&answer, &[key], &json!({}), &what);
        }
    }
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn missing_and_invalid_inputs_are_reported_together_in_two_buckets() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let mut inputs = valid_inputs();
    inputs.remove("payerName");
    inputs.insert("memberId".into(), Value::Null);
    inputs.insert("patientFirstName".into(), json!("  "));
    inputs.insert("phoneNumber".into(), json!("555-0123"));
    inputs.insert("dateOfService".into(), json!("2026-02-30"));
    inputs.insert("claimChargeAmount".into(), json!("$12.00"));
    inputs.insert("note".into(), json!("{{memberId}}"));
    let (status, answer) = post(&app, &token, &item(inputs)).await;
    assert_eq!(status, 400, "{answer}");
    assert_invalid_inputs(
        &answer,
        &["memberId", "patientFirstName", "payerName"],
        &json!({
            "phoneNumber": "phoneNumber is not a valid U.S. phone number",
            "dateOfService": "dateOfService is invalid",
            "claimChargeAmount": "claimChargeAmount is invalid",
            "note": "note contains invalid characters (curly braces)",
        }),
        "both buckets",
    );
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn every_rule_rejects_its_bad_values_with_the_exact_reason_and_nothing_is_created() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let npi = "is invalid: Must contain exactly 10 digits.";
    let tax = "is invalid: Must contain exactly 9 digits and may include hyphens.";
    let name =
        "is invalid: Only letters, spaces, hyphens, commas, periods, and apostrophes are allowed.";
    let ptan = "ptan is invalid: PTAN must be 6 or 9 alphanumeric characters.";
    let phone = "is not a valid U.S. phone number";
    // (description, key, value, reason)
    let rows: Vec<(&str, &str, &str, String)> = vec![
        // Universal rules, on schema keys, optional keys and extra keys alike.
        (
            "scientific notation on an extra key",
            "note",
            "1.5e10",
            "note is scientific notation".into(),
        ),
        (
            "scientific notation, negative, upper-case E",
            "claimNumber",
            "-2.0E-3",
            "claimNumber is scientific notation".into(),
        ),
        (
            "scientific notation wins over the dollar rule",
            "claimChargeAmount",
            "1.5e10",
            "claimChargeAmount is scientific notation".into(),
        ),
        (
            "scientific notation on a required string key",
            "payerName",
            "1.5e10",
            "payerName is scientific notation".into(),
        ),
        (
            "curly braces on an extra key",
            "context",
            "a}b",
            "context contains invalid characters (curly braces)".into(),
        ),
        (
            "template placeholder in a name",
            "patientFirstName",
            "{{firstName}}",
            "patientFirstName contains invalid characters (curly braces)".into(),
        ),
        (
            "curly brace in a payer name",
            "payerName",
            "Aetna {",
            "payerName contains invalid characters (curly braces)".into(),
        ),
        // Phone: any key containing "phonenumber", and faxNumber by its configured type.
        (
            "seven-digit phone",
            "phoneNumber",
            "555-0123",
            format!("phoneNumber {phone}"),
        ),
        (
            "area code starting with 1",
            "phoneNumber",
            "(123) 555-0123",
            format!("phoneNumber {phone}"),
        ),
        (
            "exchange starting with 0",
            "phoneNumber",
            "800-055-0123",
            format!("phoneNumber {phone}"),
        ),
        (
            "letters in a phone",
            "phoneNumber",
            "800-CALL-NOW",
            format!("phoneNumber {phone}"),
        ),
        (
            "optional phone key",
            "callbackPhoneNumber",
            "12345",
            format!("callbackPhoneNumber {phone}"),
        ),
        (
            "extra key containing PhoneNumber",
            "altPHONENUMBER",
            "911",
            format!("altPHONENUMBER {phone}"),
        ),
        (
            "fax typed as phone",
            "faxNumber",
            "555-0199",
            format!("faxNumber {phone}"),
        ),
        // Date.
        (
            "impossible date",
            "dateOfService",
            "2026-02-30",
            "dateOfService is invalid".into(),
        ),
        (
            "month 13",
            "patientDateOfBirth",
            "1980-13-01",
            "patientDateOfBirth is invalid".into(),
        ),
        (
            "not a date",
            "patientDateOfBirth",
            "yesterday",
            "patientDateOfBirth is invalid".into(),
        ),
        (
            "optional date key",
            "claimSubmittedDate",
            "2025-02-29",
            "claimSubmittedDate is invalid".into(),
        ),
        // Dollar.
        (
            "dollar sign",
            "claimChargeAmount",
            "$12.00",
            "claimChargeAmount is invalid".into(),
        ),
        (
            "thousands separator",
            "claimChargeAmount",
            "1,200",
            "claimChargeAmount is invalid".into(),
        ),
        (
            "three decimals",
            "claimChargeAmount",
            "12.345",
            "claimChargeAmount is invalid".into(),
        ),
        (
            "words",
            "claimChargeAmount",
            "twelve",
            "claimChargeAmount is invalid".into(),
        ),
        // Boolean.
        (
            "maybe is not a boolean",
            "isPrimaryPolicy",
            "maybe",
            "isPrimaryPolicy is invalid".into(),
        ),
        (
            "2 is not a boolean",
            "isPrimaryPolicy",
            "2",
            "isPrimaryPolicy is invalid".into(),
        ),
        // Custom string patterns.
        ("ptan of 7", "ptan", "AB12345", ptan.into()),
        ("ptan with a hyphen", "ptan", "AB-234", ptan.into()),
        ("ptan of 10", "ptan", "AB12345678", ptan.into()),
        (
            "billing NPI of 9 digits",
            "billingProviderNpi",
            "123456789",
            format!("billingProviderNpi {npi}"),
        ),
        (
            "facility NPI of 11 digits",
            "facilityNpi",
            "12345678901",
            format!("facilityNpi {npi}"),
        ),
        (
            "rendering NPI with letters",
            "renderingProviderNpi",
            "12345abcde",
            format!("renderingProviderNpi {npi}"),
        ),
        (
            "practice NPI too short",
            "practiceNPI",
            "123",
            format!("practiceNPI {npi}"),
        ),
        (
            "billing tax id of 8 digits",
            "billingProviderTaxId",
            "12345678",
            format!("billingProviderTaxId {tax}"),
        ),
        (
            "group tax id of 10 digits",
            "groupTaxId",
            "1234567890",
            format!("groupTaxId {tax}"),
        ),
        (
            "practice tax id with a space",
            "practiceTaxId",
            "12 3456789",
            format!("practiceTaxId {tax}"),
        ),
        (
            "rendering tax id of letters",
            "renderingProviderTaxId",
            "abcdefghi",
            format!("renderingProviderTaxId {tax}"),
        ),
        (
            "digit in a patient first name",
            "patientFirstName",
            "J4ne",
            format!("patientFirstName {name}"),
        ),
        (
            "non-ASCII letter in a patient last name",
            "patientLastName",
            "Zoë",
            format!("patientLastName {name}"),
        ),
        (
            "exclamation mark in a member first name",
            "memberFirstName",
            "Bob!",
            format!("memberFirstName {name}"),
        ),
        (
            "underscore in a member last name",
            "memberLastName",
            "Smith_Jones",
            format!("memberLastName {name}"),
        ),
        (
            "memberId with an underscore",
            "memberId",
            "W123_456",
            "memberId is invalid".into(),
        ),
        (
            "memberId with a slash",
            "memberId",
            "N/A",
            "memberId is invalid".into(),
        ),
    ];
    for (what, key, value, reason) in &rows {
        let (status, answer) =
            post(&app, &token, &item(inputs_with(key, Some(json!(value))))).await;
        assert_eq!(status, 400, "{what}: {answer}");
        assert_invalid_inputs(&answer, &[], &json!({ *key: reason }), what);
    }
    assert_eq!(request_count(&app, &token).await, 0, "nothing is created");
}

#[actix_web::test]
async fn non_string_values_are_invalid_and_never_count_as_missing() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let rows: Vec<(&str, &str, Value)> = vec![
        ("number for memberId", "memberId", json!(123)),
        ("boolean for payerName", "payerName", json!(true)),
        (
            "array for patientFirstName",
            "patientFirstName",
            json!(["Jane"]),
        ),
        (
            "number for the phone",
            "phoneNumber",
            json!(8_005_550_123_u64),
        ),
        ("object for an extra key", "context", json!({ "a": 1 })),
        (
            "float for an optional dollar key",
            "claimChargeAmount",
            json!(12.5),
        ),
        ("integer 2 for a boolean key", "isPrimaryPolicy", json!(2)),
        (
            "string-typed key given a JSON boolean",
            "groupNumber",
            json!(false),
        ),
    ];
    for (what, key, value) in rows {
        let (status, answer) = post(&app, &token, &item(inputs_with(key, Some(value)))).await;
        assert_eq!(status, 400, "{what}: {answer}");
        assert_eq!(answer["error"], "INVALID_INPUTS", "{what}");
        assert_eq!(answer["details"]["missingInputs"], json!([]), "{what}");
        let invalid = &answer["details"]["invalidInputs"];
        assert_eq!(keys(invalid), [key], "{what}: {answer}");
        assert!(
            invalid[key].as_str().is_some_and(|r| r.contains(key)),
            "{what}: the reason names the field: {answer}"
        );
    }
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn values_that_satisfy_the_rules_are_accepted_and_stored_as_strings() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    // (description, key, value)
    let rows: Vec<(&str, &str, Value)> = vec![
        (
            "parenthesized phone",
            "phoneNumber",
            json!("(800) 555-0123"),
        ),
        ("+1 and spaces", "phoneNumber", json!("+1 800 555 0123")),
        (
            "two numbers, the first is taken",
            "phoneNumber",
            json!("800-555-0123, 800-555-0199"),
        ),
        ("extension after x", "phoneNumber", json!("800-555-0123x12")),
        (
            "leading 1 with hyphens",
            "phoneNumber",
            json!("1-800-555-0123"),
        ),
        (
            "bare ten digits",
            "callbackPhoneNumber",
            json!("8005550123"),
        ),
        ("fax as a phone", "faxNumber", json!("(212) 555-0188")),
        ("leap day", "dateOfService", json!("2024-02-29")),
        ("plain dollars", "claimChargeAmount", json!("1200")),
        ("dollars and cents", "claimChargeAmount", json!("1250.50")),
        ("negative amount", "claimChargeAmount", json!("-3")),
        ("boolean JSON true", "isPrimaryPolicy", json!(true)),
        ("boolean JSON false", "isPrimaryPolicy", json!(false)),
        ("boolean yes", "isPrimaryPolicy", json!("yes")),
        ("boolean N", "isPrimaryPolicy", json!("N")),
        ("boolean TRUE", "isPrimaryPolicy", json!("TRUE")),
        ("boolean integer 1", "isPrimaryPolicy", json!(1)),
        ("boolean integer 0", "isPrimaryPolicy", json!(0)),
        ("boolean string 0", "isPrimaryPolicy", json!("0")),
        ("ptan of 6", "ptan", json!("AB1234")),
        ("ptan of 9", "ptan", json!("AB1234567")),
        ("rendering NPI", "renderingProviderNpi", json!("1234567890")),
        (
            "practice NPI with a leading zero",
            "practiceNPI",
            json!("0123456789"),
        ),
        ("facility NPI", "facilityNpi", json!("9876543210")),
        (
            "tax id without hyphen",
            "billingProviderTaxId",
            json!("123456789"),
        ),
        (
            "tax id with hyphens",
            "groupTaxId",
            json!("1-2-3-4-5-6-7-8-9"),
        ),
        (
            "hyphenated first name",
            "patientFirstName",
            json!("Mary-Jo"),
        ),
        (
            "apostrophe, comma, period",
            "memberLastName",
            json!("O'Neil, Jr."),
        ),
        (
            "memberId with space and hyphen",
            "memberId",
            json!("W123 456-78"),
        ),
        (
            "1e10 has no fraction, so it is not scientific notation",
            "note",
            json!("1e10"),
        ),
        (
            "free-text extra key",
            "someContext",
            json!("Patient seen twice; ask for the reprocessing"),
        ),
        ("optional key given empty", "claimChargeAmount", json!("")),
        (
            "optional key given blank",
            "claimSubmittedDate",
            json!("   "),
        ),
        ("optional key given null", "claimNumber", Value::Null),
        (
            "string-typed optional key",
            "groupNumber",
            json!("GRP-100 / 7"),
        ),
    ];
    for (what, key, value) in &rows {
        let (status, created) =
            post(&app, &token, &item(inputs_with(key, Some(value.clone())))).await;
        assert_eq!(status, 200, "{what}: {created}");
        let (status, read) = get_request(&app, &token, id_of(&created, "requestId")).await;
        assert_eq!(status, 200, "{what}: {read}");
        let stored = read["inputs"].as_object().unwrap();
        assert!(
            stored.values().all(Value::is_string),
            "{what}: inputs are a flat string map: {read}"
        );
        match value {
            Value::String(s) if !s.trim().is_empty() => {
                assert_eq!(stored[*key], *value, "{what}: stored as supplied")
            }
            Value::Bool(_) | Value::Number(_) => {
                assert_eq!(stored[*key], json!(value.to_string()), "{what}")
            }
            _ => {}
        }
    }
    assert_eq!(request_count(&app, &token).await, rows.len());
}

// ---------------------------------------------------------------------------------------------------
// 5. Member ID validation
// ---------------------------------------------------------------------------------------------------

const UPPERCASE: &str = "uppercase";
const PLACEHOLDER: &str = "NULL, TEST or ABCD";
const AT_LEAST_9: &str = "at least 9";
const R_NUMBER: &str = "R followed by 8 digits";

/// Posts `member_id` for `payer` and returns the memberId reason, or `None` when the request was created.
async fn member_id_reason(
    app: &TestApp,
    token: &str,
    payer: &str,
    member_id: &str,
) -> Option<String> {
    let mut inputs = inputs_with("memberId", Some(json!(member_id)));
    inputs.insert("payerName".into(), json!(payer));
    let (status, answer) = post(app, token, &item(inputs)).await;
    match status {
        200 => None,
        400 => {
            let what = format!("{payer} / {member_id}");
            assert_eq!(answer["error"], "INVALID_INPUTS", "{what}: {answer}");
            assert_eq!(answer["details"]["missingInputs"], json!([]), "{what}");
            assert_eq!(
                keys(&answer["details"]["invalidInputs"]),
                ["memberId"],
                "{what}: only memberId is flagged"
            );
            Some(
                answer["details"]["invalidInputs"]["memberId"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        }
        other => panic!("{payer} / {member_id}: unexpected {other}: {answer}"),
    }
}

#[actix_web::test]
async fn family_payers_apply_the_member_id_rules_in_order_and_report_only_the_first_failure() {
    let app = app_with_features(&["enforce_member_id_validation"]).await;
    let token = app.live_token().await;
    let bcbs = "Blue Cross Blue Shield of Texas";
    let later_rules = [UPPERCASE, PLACEHOLDER, AT_LEAST_9, R_NUMBER];
    // (description, payer, memberId, expected rule fragment or None when accepted)
    let rows: Vec<(&str, &str, &str, Option<&str>)> = vec![
        ("lowercase letters", bcbs, "abc123456", Some(UPPERCASE)),
        (
            "lowercase, placeholder and short: only the first rule",
            bcbs,
            "xtest",
            Some(UPPERCASE),
        ),
        ("hyphen", bcbs, "XYZ-12345", Some(UPPERCASE)),
        ("space", bcbs, "XYZ 12345", Some(UPPERCASE)),
        ("placeholder TEST", bcbs, "XYZTEST12", Some(PLACEHOLDER)),
        (
            "short placeholder NULL: placeholder before length",
            bcbs,
            "NULL",
            Some(PLACEHOLDER),
        ),
        ("placeholder ABCD", bcbs, "ABCD12345", Some(PLACEHOLDER)),
        ("eight characters", bcbs, "XYZ12345", Some(AT_LEAST_9)),
        ("seven characters", bcbs, "XYZ1234", Some(AT_LEAST_9)),
        (
            "R with a trailing letter",
            bcbs,
            "R1234567A",
            Some(R_NUMBER),
        ),
        ("R with letters", bcbs, "RAB123456", Some(R_NUMBER)),
        ("prefix and digits", bcbs, "XYZ123456", None),
        ("R and 8 digits", bcbs, "R12345678", None),
        ("ten characters starting with R", bcbs, "R12345678A", None),
        ("nine digits", bcbs, "123456789", None),
        ("long", bcbs, "ZGT123456789", None),
        // The payer name selects the family by substring, spaces removed and lowercased.
        ("acronym BCBS", "BCBS TX", "abc123456", Some(UPPERCASE)),
        (
            "spaced and lowercased blue shield",
            "regence blue shield",
            "XYZ1234",
            Some(AT_LEAST_9),
        ),
        (
            "Anthem Blue Cross",
            "Anthem Blue Cross",
            "XYZTEST12",
            Some(PLACEHOLDER),
        ),
    ];
    for (what, payer, member_id, expected) in rows {
        let reason = member_id_reason(&app, &token, payer, member_id).await;
        match expected {
            None => assert_eq!(reason, None, "{what}: {member_id} is accepted"),
            Some(rule) => {
                let reason = reason.unwrap_or_else(|| panic!("{what}: {member_id} was accepted"));
                assert!(
                    reason.contains("memberId"),
                    "{what}: {reason:?} names the field"
                );
                assert!(
                    reason.contains(rule),
                    "{what}: {reason:?} is the {rule:?} rule"
                );
                for other in later_rules.iter().filter(|r| **r != rule) {
                    assert!(
                        !reason.contains(other),
                        "{what}: {reason:?} reports one rule only"
                    );
                }
            }
        }
    }
}

#[actix_web::test]
async fn other_payers_apply_the_generic_member_id_rules() {
    let app = app_with_features(&["enforce_member_id_validation"]).await;
    let token = app.live_token().await;
    // (description, memberId, expected rule fragment or None when accepted)
    let rows: Vec<(&str, &str, Option<&str>)> = vec![
        ("N/A", "N/A", Some("N/A")),
        ("NA", "NA", Some("N/A")),
        ("none in any case", "None", Some("N/A")),
        ("lowercase n/a", "n/a", Some("N/A")),
        ("three characters", "abc", Some("at least 4")),
        ("placeholder TEST", "TEST1234", Some(PLACEHOLDER)),
        ("placeholder in lowercase", "xnullx", Some(PLACEHOLDER)),
        ("ordinary id", "W12345678", None),
        ("four lowercase characters", "abc1", None),
        // The rules add to the pattern: what it refuses stays refused.
        ("an underscore", "W1234_5678", Some("memberId is invalid")),
        ("a period", "W12.3456", Some("memberId is invalid")),
    ];
    for (what, member_id, expected) in rows {
        let reason = member_id_reason(&app, &token, "Aetna", member_id).await;
        match expected {
            None => assert_eq!(reason, None, "{what}: {member_id} is accepted"),
            Some(rule) => {
                let reason = reason.unwrap_or_else(|| panic!("{what}: {member_id} was accepted"));
                assert!(reason.contains("memberId"), "{what}: {reason:?}");
                assert!(
                    reason.contains(rule),
                    "{what}: {reason:?} is the {rule:?} rule"
                );
            }
        }
    }
}

#[actix_web::test]
async fn the_universal_rules_still_apply_to_member_id_under_member_id_validation() {
    let app = app_with_features(&["enforce_member_id_validation"]).await;
    let token = app.live_token().await;
    let rows = [
        (
            "Blue Cross Blue Shield of Texas",
            "{XYZ123456}",
            "memberId contains invalid characters (curly braces)",
        ),
        ("Aetna", "1.5e10", "memberId is scientific notation"),
    ];
    for (payer, member_id, expected) in rows {
        let reason = member_id_reason(&app, &token, payer, member_id).await;
        assert_eq!(reason.as_deref(), Some(expected), "{payer} / {member_id}");
    }
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn without_member_id_validation_member_id_only_gets_the_pattern() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let bcbs = "Blue Cross Blue Shield of Texas";
    let rows: Vec<(&str, &str, Option<&str>)> = vec![
        ("Aetna", "N/A", Some("memberId is invalid")),
        (bcbs, "N/A", Some("memberId is invalid")),
        ("Aetna", "TEST1234", None),
        ("Aetna", "abc", None),
        (bcbs, "xyz123", None),
        (bcbs, "R1234567A", None),
    ];
    for (payer, member_id, expected) in rows {
        let reason = member_id_reason(&app, &token, payer, member_id).await;
        assert_eq!(reason.as_deref(), expected, "{payer} / {member_id}");
    }
}

// ---------------------------------------------------------------------------------------------------
// 6. Per-payer required inputs
// ---------------------------------------------------------------------------------------------------

fn for_payer(payer: &str, changes: &[(&str, Option<Value>)]) -> Value {
    let mut inputs = inputs_with("payerName", Some(json!(payer)));
    for (key, value) in changes {
        match value {
            Some(value) => inputs.insert((*key).to_owned(), value.clone()),
            None => inputs.remove(*key),
        };
    }
    item(inputs)
}

#[actix_web::test]
async fn a_matched_payers_required_inputs_are_required_when_the_account_enforces_them() {
    let app = app_with_features(&["enforce_payer_required_inputs"]).await;
    let token = app.live_token().await;
    // (description, body, missing)
    let rows: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "UnitedHealthcare without groupNumber",
            for_payer("UnitedHealthcare", &[]),
            vec!["groupNumber"],
        ),
        ("the UHC alias", for_payer("UHC", &[]), vec!["groupNumber"]),
        (
            "groupNumber empty",
            for_payer("UnitedHealthcare", &[("groupNumber", Some(json!("")))]),
            vec!["groupNumber"],
        ),
        (
            "groupNumber blank",
            for_payer("UnitedHealthcare", &[("groupNumber", Some(json!("  ")))]),
            vec!["groupNumber"],
        ),
        (
            "groupNumber null",
            for_payer("UnitedHealthcare", &[("groupNumber", Some(Value::Null))]),
            vec!["groupNumber"],
        ),
        (
            "payer and schema keys together, sorted",
            for_payer("UnitedHealthcare", &[("memberId", None)]),
            vec!["groupNumber", "memberId"],
        ),
        (
            "Medicare needs the PTAN",
            for_payer("CMS Medicare", &[]),
            vec!["ptan"],
        ),
        (
            "TRICARE needs three member keys",
            for_payer("TRICARE East Region", &[]),
            vec!["memberDateOfBirth", "memberFirstName", "memberLastName"],
        ),
    ];
    for (what, body, missing) in rows {
        let (status, answer) = post(&app, &token, &body).await;
        assert_eq!(status, 400, "{what}: {answer}");
        assert_invalid_inputs(&answer, &missing, &json!({}), what);
    }
    assert_eq!(request_count(&app, &token).await, 0);

    // A supplied payer key is validated like any other.
    let body = for_payer("CMS Medicare", &[("ptan", Some(json!("AB12")))]);
    let (status, answer) = post(&app, &token, &body).await;
    assert_eq!(status, 400, "{answer}");
    assert_invalid_inputs(
        &answer,
        &[],
        &json!({ "ptan": "ptan is invalid: PTAN must be 6 or 9 alphanumeric characters." }),
        "bad ptan",
    );

    let accepted = [
        (
            "UnitedHealthcare with groupNumber",
            for_payer("UnitedHealthcare", &[("groupNumber", Some(json!("G-100")))]),
        ),
        (
            "Medicare with a PTAN",
            for_payer("CMS Medicare", &[("ptan", Some(json!("AB1234")))]),
        ),
        ("Aetna requires nothing more", for_payer("Aetna", &[])),
        (
            "an unknown payer requires nothing more",
            for_payer("Zzyzx Qworp Plan", &[]),
        ),
    ];
    for (what, body) in &accepted {
        let (status, answer) = post(&app, &token, body).await;
        assert_eq!(status, 200, "{what}: {answer}");
    }
    assert_eq!(request_count(&app, &token).await, accepted.len());
}

#[actix_web::test]
async fn without_the_feature_a_payers_required_inputs_are_not_required() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    for payer in ["UnitedHealthcare", "CMS Medicare", "TRICARE East Region"] {
        let (status, answer) = post(&app, &token, &for_payer(payer, &[])).await;
        assert_eq!(status, 200, "{payer}: {answer}");
    }
    assert_eq!(request_count(&app, &token).await, 3);
}

// ---------------------------------------------------------------------------------------------------
// 7. Batches
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn a_batch_with_every_entry_valid_creates_them_all_in_input_order() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let internal_ids = ["batch-a", "batch-b", "batch-c"];
    let entries: Vec<Value> = internal_ids
        .iter()
        .map(|id| item_with_internal_id(valid_inputs(), id))
        .collect();
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(keys(&answer), ["requests"]);
    let results = answer["requests"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let mut request_ids = BTreeSet::new();
    for (result, internal_id) in results.iter().zip(internal_ids) {
        assert_eq!(
            keys(result),
            ["internalId", "requestBatchId", "requestId"],
            "{internal_id}"
        );
        assert_eq!(result["internalId"], internal_id, "input order");
        request_ids.insert(id_of(result, "requestId").to_owned());
        let (status, read) = get_request(&app, &token, id_of(result, "requestId")).await;
        assert_eq!(status, 200, "{internal_id}: {read}");
        assert_eq!(read["internalId"], internal_id);
        assert_eq!(read["requestBatchId"], result["requestBatchId"]);
        assert_eq!(read["state"], "PROCESSING");
    }
    assert_eq!(request_ids.len(), 3, "each entry has its own requestId");
    assert_eq!(request_count(&app, &token).await, 3);
}

#[actix_web::test]
async fn a_batch_mixing_valid_and_invalid_entries_is_a_207_with_per_entry_envelopes() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let entries = json!([
        item_with_internal_id(valid_inputs(), "mix-1"),
        item(inputs_with("dateOfService", Some(json!("2026-02-30")))),
        item_with_internal_id(valid_inputs(), "mix-3"),
        { "schemaId": "no-such-schema", "inputs": valid_inputs() },
        "not an object",
        { "schemaId": SCHEMA },
        item(inputs_with("payerName", None)),
    ]);
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 207, "{answer}");
    assert_eq!(keys(&answer), ["requests"]);
    let results = answer["requests"].as_array().unwrap();
    assert_eq!(results.len(), 7, "one entry per input");

    for (index, internal_id) in [(0, "mix-1"), (2, "mix-3")] {
        let result = &results[index];
        assert_eq!(
            keys(result),
            ["internalId", "requestBatchId", "requestId"],
            "entry {index}"
        );
        assert_eq!(result["internalId"], internal_id);
        let (status, read) = get_request(&app, &token, id_of(result, "requestId")).await;
        assert_eq!(status, 200, "entry {index} really exists: {read}");
        assert_eq!(read["internalId"], internal_id);
    }
    assert_invalid_inputs(
        &results[1],
        &[],
        &json!({ "dateOfService": "dateOfService is invalid" }),
        "entry 1",
    );
    assert_eq!(
        results[3],
        invalid_request("Schema 'no-such-schema' was not found"),
        "entry 3: a missing schema is a per-entry INVALID_REQUEST"
    );
    assert_eq!(
        results[4],
        invalid_request("Each request must be a JSON object"),
        "entry 4"
    );
    assert_eq!(results[5], invalid_request("inputs is required"), "entry 5");
    assert_invalid_inputs(&results[6], &["payerName"], &json!({}), "entry 6");
    assert_eq!(
        request_count(&app, &token).await,
        2,
        "rejected entries leave no trace"
    );
}

#[actix_web::test]
async fn a_batch_whose_entries_all_fail_is_a_400_with_per_entry_envelopes() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let entries = json!([
        item(inputs_with("phoneNumber", Some(json!("555-0123")))),
        { "schemaId": 12, "inputs": valid_inputs() },
        { "schemaId": "no-such-schema", "inputs": valid_inputs() },
    ]);
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(keys(&answer), ["requests"]);
    let results = answer["requests"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_invalid_inputs(
        &results[0],
        &[],
        &json!({ "phoneNumber": "phoneNumber is not a valid U.S. phone number" }),
        "entry 0",
    );
    assert_eq!(results[1], invalid_request("schemaId must be a string"));
    assert_eq!(
        results[2],
        invalid_request("Schema 'no-such-schema' was not found")
    );
    assert_eq!(request_count(&app, &token).await, 0);
}

#[actix_web::test]
async fn an_unknown_or_retired_schema_in_a_batch_is_a_per_entry_invalid_request() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let (status, answer) = post(
        &app,
        &token,
        &json!({ "requests": [{ "schemaId": "nope", "inputs": valid_inputs() }] }),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer,
        json!({ "requests": [invalid_request("Schema 'nope' was not found")] })
    );

    let retired = app
        .admin(Method::DELETE, "/admin/v1/schemas/vob-basic", None)
        .await
        .status();
    assert_eq!(retired, 200);
    let entries = json!([
        { "schemaId": "vob-basic", "inputs": valid_inputs() },
        item(valid_inputs()),
    ]);
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 207, "{answer}");
    assert_eq!(
        answer["requests"][0],
        invalid_request("Schema 'vob-basic' was not found")
    );
    assert_eq!(
        keys(&answer["requests"][1]),
        ["requestBatchId", "requestId"]
    );
    assert_eq!(request_count(&app, &token).await, 1);
}

// ---------------------------------------------------------------------------------------------------
// 8. Idempotency
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn reusing_an_internal_id_silently_returns_the_original_ids_and_payer_lookup() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let (status, first) = post(
        &app,
        &token,
        &item_with_internal_id(valid_inputs(), "claim-77"),
    )
    .await;
    assert_eq!(status, 200, "{first}");

    // Different inputs, a different payer and no phone: a new request would have another payerLookup.
    let mut other = inputs_with("phoneNumber", None);
    other.insert("payerName".into(), json!("Oscar Health"));
    other.insert("patientFirstName".into(), json!("John"));
    let (status, second) = post(&app, &token, &item_with_internal_id(other, "claim-77")).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        second, first,
        "the replay answers exactly what the first POST did"
    );
    assert_eq!(
        request_count(&app, &token).await,
        1,
        "nothing new is created"
    );

    let (_, read) = get_request(&app, &token, id_of(&first, "requestId")).await;
    assert_eq!(
        read["inputs"],
        Value::Object(valid_inputs()),
        "the original inputs are kept"
    );
}

#[actix_web::test]
async fn a_replay_returns_the_original_even_when_its_new_body_would_be_rejected() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let (_, first) = post(
        &app,
        &token,
        &item_with_internal_id(valid_inputs(), "claim-88"),
    )
    .await;
    let cases = [
        (
            "invalid inputs",
            json!({ "schemaId": "claim-status-basic", "internalId": "claim-88", "inputs": { "memberId": "{x}" } }),
        ),
        (
            "unknown schema",
            json!({ "schemaId": "no-such-schema", "internalId": "claim-88", "inputs": {} }),
        ),
        (
            "unknown payer, no phone",
            item_with_internal_id(inputs_with("phoneNumber", None), "claim-88"),
        ),
    ];
    for (description, body) in cases {
        let (status, replay) = post(&app, &token, &body).await;
        assert_eq!((status, &replay), (200, &first), "{description}");
    }
    assert_eq!(request_count(&app, &token).await, 1);
}

#[actix_web::test]
async fn without_an_internal_id_every_post_creates_a_new_request() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let (_, first) = post(&app, &token, &item(valid_inputs())).await;
    let (_, second) = post(&app, &token, &item(valid_inputs())).await;
    assert_ne!(first["requestId"], second["requestId"]);
    assert_eq!(request_count(&app, &token).await, 2);
}

#[actix_web::test]
async fn an_internal_id_is_scoped_per_environment() {
    let app = spawn_app().await;
    let live = app.live_token().await;
    let sandbox = app.sandbox_token().await;
    let body = item_with_internal_id(valid_inputs(), "shared-key");
    let (status, in_live) = post(&app, &live, &body).await;
    assert_eq!(status, 200, "{in_live}");
    let (status, in_sandbox) = post(&app, &sandbox, &body).await;
    assert_eq!(status, 200, "{in_sandbox}");
    assert_ne!(in_live["requestId"], in_sandbox["requestId"]);
    assert_eq!(in_sandbox["internalId"], "shared-key");
    assert_eq!(request_count(&app, &live).await, 1);
    assert_eq!(request_count(&app, &sandbox).await, 1);

    // Each environment replays its own.
    let (_, again) = post(&app, &sandbox, &body).await;
    assert_eq!(again, in_sandbox);
    let (_, again) = post(&app, &live, &body).await;
    assert_eq!(again, in_live);
    assert_eq!(request_count(&app, &live).await, 1);
    assert_eq!(request_count(&app, &sandbox).await, 1);
}

#[actix_web::test]
async fn a_repeated_internal_id_within_a_batch_returns_the_first_entrys_ids() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let entries = json!([
        item_with_internal_id(valid_inputs(), "dup"),
        item_with_internal_id(valid_inputs(), "unique"),
        item_with_internal_id(inputs_with("patientFirstName", Some(json!("John"))), "dup"),
    ]);
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 200, "{answer}");
    let results = answer["requests"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[2], results[0],
        "the duplicate returns the first entry's ids"
    );
    assert_ne!(results[1]["requestId"], results[0]["requestId"]);
    assert_eq!(request_count(&app, &token).await, 2);
    let (_, read) = get_request(&app, &token, id_of(&results[0], "requestId")).await;
    assert_eq!(read["inputs"]["patientFirstName"], "Jane");
}

#[actix_web::test]
async fn a_batch_entry_reusing_an_earlier_posts_internal_id_returns_the_earlier_ids() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let (status, earlier) = post(
        &app,
        &token,
        &item_with_internal_id(valid_inputs(), "early"),
    )
    .await;
    assert_eq!(status, 200, "{earlier}");
    let entries = json!([
        item_with_internal_id(valid_inputs(), "fresh"),
        item_with_internal_id(valid_inputs(), "early"),
    ]);
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["requests"][1], earlier);
    assert_ne!(answer["requests"][0]["requestId"], earlier["requestId"]);
    assert_eq!(request_count(&app, &token).await, 2);
}

#[actix_web::test]
async fn fifty_concurrent_posts_with_one_internal_id_create_exactly_one_request() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let body = item_with_internal_id(valid_inputs(), "race");
    let answers = futures::future::join_all((0..50).map(|_| post(&app, &token, &body))).await;
    let mut request_ids = BTreeSet::new();
    let mut batch_ids = BTreeSet::new();
    for (status, answer) in &answers {
        assert_eq!(*status, 200, "{answer}");
        request_ids.insert(id_of(answer, "requestId").to_owned());
        batch_ids.insert(id_of(answer, "requestBatchId").to_owned());
    }
    assert_eq!(request_ids.len(), 1, "{request_ids:?}");
    assert_eq!(batch_ids.len(), 1, "{batch_ids:?}");
    assert_eq!(request_count(&app, &token).await, 1);
}

// ---------------------------------------------------------------------------------------------------
// 9. Capacity overflow
// ---------------------------------------------------------------------------------------------------

#[actix_web::test]
async fn with_no_daily_call_capacity_a_create_is_invalid_request_saying_how_many_could_not_be_placed(
) {
    let mut config = TestConfig::default();
    config.features(&[]);
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 0.into());
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;

    let (status, answer) = post(&app, &token, &item(valid_inputs())).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer,
        invalid_request(
            "1 of 1 requests could not be scheduled within the next 365 days at a daily call capacity of 0"
        )
    );

    let entries: Vec<Value> = (0..3).map(|_| item(valid_inputs())).collect();
    let (status, answer) = post(&app, &token, &json!({ "requests": entries })).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer,
        invalid_request(
            "3 of 3 requests could not be scheduled within the next 365 days at a daily call capacity of 0"
        )
    );
    assert_eq!(request_count(&app, &token).await, 0, "nothing is created");
}

#[actix_web::test]
async fn a_replayed_internal_id_books_nothing_so_it_succeeds_even_with_no_capacity_left() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let body = item_with_internal_id(valid_inputs(), "before-the-freeze");
    let (status, first) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{first}");

    let (_, account) = status_and_json(
        app.admin(Method::GET, "/admin/v1/accounts/demo", None)
            .await,
    )
    .await;
    let frozen = json!({
        "name": account["name"], "daily_call_capacity": 0, "timezone": account["timezone"],
        "features": account["features"], "schemas": account["schemas"],
    });
    let status = app
        .admin(Method::PUT, "/admin/v1/accounts/demo", Some(frozen))
        .await
        .status();
    assert_eq!(status, 200);

    let (status, replay) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{replay}");
    assert_eq!(replay, first);
    let (status, fresh) = post(&app, &token, &item(valid_inputs())).await;
    assert_eq!(status, 400, "{fresh}");
    assert_eq!(
        fresh,
        invalid_request(
            "1 of 1 requests could not be scheduled within the next 365 days at a daily call capacity of 0"
        )
    );
    assert_eq!(request_count(&app, &token).await, 1);
}

/// 4.6: a body is a batch when it carries `requests`; the single request's keys beside it are ignored, as
/// unknown top-level keys are (the served document says so on `CreateIn` and `CreateRequestIn`).
#[actix_web::test]
async fn a_body_with_both_a_single_request_and_requests_is_a_batch() {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;
    let mut body = item_with_internal_id(valid_inputs(), "beside-the-batch");
    body["requests"] = json!([item_with_internal_id(valid_inputs(), "in-the-batch")]);
    let (status, answer) = post(&app, &token, &body).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(keys(&answer), ["requests"]);
    let entries = answer["requests"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{answer}");
    assert_eq!(entries[0]["internalId"], "in-the-batch");
    assert_eq!(request_count(&app, &token).await, 1);
}
