//! What clients generated from the OpenAPI document and a schema-driven fuzzer ran into (issue 13): a 405
//! names the allowed methods, an empty date is an invalid date, `payerNames` holds strings only, the
//! sandbox's generic wrong-number code stays generic, and integer parameters out of range get a plain
//! message in the envelope.

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    spawn_app, spawn_app_with, status_and_json, TestApp, TestConfig, ADMIN_TOKEN,
};

/// Asserts the standard envelope with `code` and returns its message.
fn envelope_message(body: &Value, code: &str) -> String {
    let object = body.as_object().unwrap_or_else(|| panic!("{body}"));
    let keys: BTreeSet<&str> = object.keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["error", "message"]), "{body}");
    assert_eq!(body["error"], code, "{body}");
    body["message"].as_str().unwrap().to_owned()
}

/// A message a person can act on: it names no Rust type and repeats no deserializer wording.
fn assert_plain(message: &str) {
    for leak in [
        "too large",
        "invalid digit",
        "target type",
        "i64",
        "usize",
        "u32",
        "ParseIntError",
        "Query deserialize",
    ] {
        assert!(!message.contains(leak), "{leak:?} in {message:?}");
    }
}

#[actix_web::test]
async fn a_405_lists_the_methods_the_path_serves_in_an_allow_header() {
    let app = spawn_app().await;
    let cases = [
        (Method::DELETE, "/v1/requests", &["GET", "HEAD", "POST"][..]),
        (Method::POST, "/v1/schemas", &["GET", "HEAD"]),
        (Method::PUT, "/v1/auth", &["GET", "HEAD"]),
        (
            Method::GET,
            "/v1/schemas/vob-basic/required-payer-inputs",
            &["POST"],
        ),
        (
            Method::PATCH,
            "/admin/v1/schemas/vob-basic",
            &["GET", "HEAD", "PUT", "DELETE"],
        ),
        (Method::DELETE, "/admin/v1/clock", &["GET", "HEAD", "POST"]),
        (Method::POST, "/healthz", &["GET", "HEAD"]),
    ];
    for (method, path, allowed) in cases {
        let response = app
            .client
            .request(method.clone(), app.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .send()
            .await
            .unwrap();
        let allow = response
            .headers()
            .get("allow")
            .unwrap_or_else(|| panic!("{method} {path}: no Allow header"))
            .to_str()
            .unwrap()
            .to_owned();
        let (status, body) = status_and_json(response).await;
        assert_eq!(status, 405, "{method} {path}: {body}");
        envelope_message(&body, "METHOD_NOT_ALLOWED");
        let listed: BTreeSet<&str> = allow.split(',').map(str::trim).collect();
        assert_eq!(
            listed,
            allowed.iter().copied().collect(),
            "{method} {path}: Allow {allow:?}"
        );
        // Every method the header names is really served (not 405) on that path.
        for served in allowed {
            let method = Method::from_bytes(served.as_bytes()).unwrap();
            let status = app
                .client
                .request(method, app.url(path))
                .bearer_auth(ADMIN_TOKEN)
                .send()
                .await
                .unwrap()
                .status();
            assert_ne!(status, 405, "{served} {path}");
        }
    }
}

#[actix_web::test]
async fn head_is_served_wherever_get_is_with_the_get_status_and_no_body() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    for (path, bearer, status) in [
        ("/healthz", None, 200),
        ("/v1/schemas", Some(token.as_str()), 200),
        ("/v1/schemas", None, 401),
        ("/v1/schemas/no-such-schema", Some(token.as_str()), 404),
    ] {
        let mut request = app.client.head(app.url(path));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "HEAD {path}");
        assert!(response.bytes().await.unwrap().is_empty(), "HEAD {path}");
    }
}

#[actix_web::test]
async fn an_empty_or_blank_date_parameter_is_an_invalid_date_and_an_absent_one_keeps_its_default() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    for query in [
        "dateFrom=",
        "dateTo=",
        "dateFrom=%20%20",
        "dateTo=%20",
        "dateFrom=&dateTo=2026-11-24",
    ] {
        let (status, body) =
            status_and_json(app.get(&format!("/v1/requests?{query}"), &token).await).await;
        assert_eq!(status, 400, "{query}: {body}");
        let message = envelope_message(&body, "INVALID_REQUEST");
        assert!(message.contains("YYYY-MM-DD"), "{query}: {message}");
    }
    for query in [
        "",
        "?pageSize=5",
        "?dateFrom=2026-11-23",
        "?dateTo=2026-11-30",
    ] {
        let (status, body) =
            status_and_json(app.get(&format!("/v1/requests{query}"), &token).await).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert!(body["requests"].is_array(), "{body}");
    }
}

#[actix_web::test]
async fn payer_names_must_be_strings_while_blank_strings_stay_per_payer_errors() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let post = |body: Value| {
        let request = app
            .client
            .post(app.url("/v1/schemas/vob-basic/required-payer-inputs"))
            .bearer_auth(&token)
            .json(&body);
        async move { status_and_json(request.send().await.unwrap()).await }
    };
    for names in [
        json!([1]),
        json!(["UHC", 2]),
        json!([null]),
        json!([true]),
        json!([{ "name": "UHC" }]),
        json!([["UHC"]]),
    ] {
        let (status, body) = post(json!({ "payerNames": names })).await;
        assert_eq!(status, 400, "{names}: {body}");
        let message = envelope_message(&body, "INVALID_REQUEST");
        assert!(message.contains("strings"), "{names}: {message}");
    }
    let (status, body) = post(json!({ "payerNames": ["UHC", " ", ""] })).await;
    assert_eq!(status, 200, "{body}");
    let codes: Vec<&Value> = body["payers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["errorCode"])
        .collect();
    assert_eq!(
        codes,
        [
            &Value::Null,
            &json!("INVALID_PAYER_NAME"),
            &json!("INVALID_PAYER_NAME")
        ],
        "{body}"
    );
}

/// Creates a sandbox `claim-status-basic` request with `extra` inputs and waits for its end.
async fn sandbox_run(app: &TestApp, token: &str, scenario: &str, extra: &[(&str, &str)]) -> Value {
    let mut inputs = json!({
        "payerName": "UHC",
        "groupNumber": "GRP20417",
        "memberId": "W123456789",
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "1980-04-12",
        "dateOfService": "2026-10-01",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
        "sandboxScenario": scenario,
    });
    for (key, value) in extra {
        inputs[*key] = json!(value);
    }
    let (status, body) = status_and_json(
        app.client
            .post(app.url("/v1/requests"))
            .bearer_auth(token)
            .json(&json!({ "schemaId": "claim-status-basic", "inputs": inputs }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = body["requestId"].as_str().unwrap();
    app.wait_terminal(token, id).await
}

#[actix_web::test]
async fn the_generic_phone_code_stays_generic_with_its_category_following_the_numbers_source() {
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let error = |request: &Value| {
        assert_eq!(request["state"], "FAILURE", "{request}");
        (
            request["error"]["errorCategory"]
                .as_str()
                .unwrap()
                .to_owned(),
            request["error"]["errorCode"].as_str().unwrap().to_owned(),
        )
    };

    // No phoneNumber: the demo account's payer lookup chose the number.
    let looked_up = sandbox_run(&app, &token, "failure:PHONE_NUMBER_INCORRECT", &[]).await;
    assert_eq!(looked_up["payerLookup"]["phoneNumberSource"], "switchboard");
    assert_eq!(
        error(&looked_up),
        ("SYSTEM_ERROR".into(), "PHONE_NUMBER_INCORRECT".into())
    );

    // A supplied number is dialed as given.
    let supplied = [("phoneNumber", "(312) 555-4477")];
    let input = sandbox_run(&app, &token, "failure:PHONE_NUMBER_INCORRECT", &supplied).await;
    assert_eq!(input["payerLookup"]["phoneNumberSource"], "input");
    assert_eq!(
        error(&input),
        ("NOT_FOUND".into(), "PHONE_NUMBER_INCORRECT".into())
    );

    // The source-specific codes are reported as asked, whatever the source.
    for (code, category) in [
        ("MATCHED_PHONE_NUMBER_INCORRECT", "SYSTEM_ERROR"),
        ("INPUT_PHONE_NUMBER_INCORRECT", "NOT_FOUND"),
        ("REPRESENTATIVE_PHONE_NUMBER_INCORRECT", "NOT_FOUND"),
    ] {
        let request = sandbox_run(&app, &token, &format!("failure:{code}"), &[]).await;
        assert_eq!(error(&request), (category.into(), code.into()), "{code}");
    }
}

#[actix_web::test]
async fn integer_query_parameters_out_of_range_answer_the_envelope_with_a_plain_message() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    for expires in [
        "99999999999999999999999",
        "-99999999999999999999999",
        "1e5",
        "soon",
        "",
    ] {
        let path = format!("/v1/recordings/some-call?expires={expires}&signature=00ff");
        let (status, body) =
            status_and_json(app.client.get(app.url(&path)).send().await.unwrap()).await;
        assert_eq!(status, 400, "{path}: {body}");
        let message = envelope_message(&body, "INVALID_REQUEST");
        assert!(message.contains("expires"), "{message}");
        assert_plain(&message);
    }
    for page_size in ["0", "-1", "-99999999999999999999999", "1.5", "ten"] {
        let path = format!("/v1/requests?pageSize={page_size}");
        let (status, body) = status_and_json(app.get(&path, &token).await).await;
        assert_eq!(status, 400, "{path}: {body}");
        let message = envelope_message(&body, "INVALID_REQUEST");
        assert!(message.contains("pageSize"), "{message}");
        assert_plain(&message);
    }
    // Any positive count is a page size; above the maximum it is capped, however many digits it has.
    for page_size in ["501", "99999999999999999999999"] {
        let path = format!("/v1/requests?pageSize={page_size}");
        let (status, body) = status_and_json(app.get(&path, &token).await).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
}
