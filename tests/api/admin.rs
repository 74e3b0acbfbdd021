//! The operator's admin API (operator contract section 3), driven through HTTP, and what its changes do to
//! the client API.

use reqwest::{Method, Response};
use serde_json::{json, Value};

use crate::envelopes::status_and_envelope;
use crate::helpers::{
    spawn_app, spawn_app_with, status_and_json, TestApp, TestConfig, ADMIN_TOKEN, LIVE_KEY,
};

const ACME_LIVE_KEY: &str = "sk_live_acme_1";
const ACME_LIVE_SECRET: &str = "acme-live-secret-1";
const ACME_SANDBOX_KEY: &str = "sk_test_acme_1";
const ACME_SANDBOX_SECRET: &str = "acme-sandbox-secret-1";
const ACME_WEBHOOK_SECRET: &str = "whsec_acme_webhook_secret";
/// The manual clock's first instant, as the API writes instants.
const START_WIRE: &str = "2026-11-23T14:00:00.000000+00:00";

/// An account body with a production and a sandbox pair and two demo schemas.
fn acme_body() -> Value {
    json!({
        "name": "Acme Revenue Cycle",
        "daily_call_capacity": 50,
        "timezone": "America/Chicago",
        "webhook_url": "https://hooks.example.test/acme",
        "webhook_secret": ACME_WEBHOOK_SECRET,
        "features": ["payer_phone_lookup", "follow_up_calls"],
        "schemas": ["vob-basic", "claim-status-basic"],
        "credentials": [
            { "environment": "production", "key": ACME_LIVE_KEY, "secret": ACME_LIVE_SECRET },
            { "environment": "sandbox", "key": ACME_SANDBOX_KEY, "secret": ACME_SANDBOX_SECRET },
        ],
        "phone_book": [{ "payer": "Aetna", "phone": "(800) 555-0142" }],
    })
}

/// A schema body in the shape of config/default.toml's `[[schemas]]`, with `n_fields` fields (1 to 3).
fn eligibility_schema(n_fields: usize) -> Value {
    let fields = [
        json!({
            "name": "coverageStatus",
            "label": "Coverage status",
            "description": "Is the member's coverage active on the date of service?",
            "type": "multiple",
            "allowed_values": ["ACTIVE", "INACTIVE", "TERMED"],
            "required": true,
        }),
        json!({
            "name": "callReferenceNumber",
            "label": "Call reference number",
            "description": "What is the reference number for this call?",
            "type": "alphanumeric",
            "required": true,
        }),
        json!({
            "name": "deductibleRemaining",
            "label": "Deductible remaining",
            "description": "How much of the deductible is left to meet?",
            "type": "dollar",
            "required": false,
        }),
    ];
    json!({
        "name": "Eligibility check",
        "request_type": "eligibility",
        "required_inputs": ["payerName", "memberId", "patientDateOfBirth"],
        "optional_inputs": ["groupNumber"],
        "fields": fields[..n_fields],
    })
}

async fn put_acme(app: &TestApp) -> (u16, Value) {
    status_and_json(
        app.admin(Method::PUT, "/admin/v1/accounts/acme", Some(acme_body()))
            .await,
    )
    .await
}

/// Creates account `id` with one production pair and the given schemas.
async fn put_account_with(app: &TestApp, id: &str, key: &str, secret: &str, schemas: &[&str]) {
    let body = json!({
        "daily_call_capacity": 10,
        "schemas": schemas,
        "credentials": [{ "environment": "production", "key": key, "secret": secret }],
    });
    let response = app
        .admin(Method::PUT, &format!("/admin/v1/accounts/{id}"), Some(body))
        .await;
    assert_eq!(response.status(), 201, "creating account {id}");
}

async fn auth(app: &TestApp, key: &str, secret: &str) -> Response {
    app.auth_with(&[
        ("Switchboard-API-Key", key),
        ("Switchboard-API-Secret", secret),
    ])
    .await
}

/// Asserts the bearer-token 401 (service-interface 7.1) with `message` and an `invalid_token` challenge.
async fn assert_token_rejected(response: Response, message: &str, description: &str) {
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    assert!(
        challenge.starts_with("Bearer realm=\"Switchboard\"")
            && challenge.contains("error=\"invalid_token\""),
        "{description}: WWW-Authenticate {challenge:?}"
    );
    assert_eq!(
        status_and_envelope(response).await,
        (401, json!({ "code": 401, "message": message })),
        "{description}"
    );
}

/// Asserts a 400 `INVALID_REQUEST` envelope whose message starts with `message`.
async fn assert_invalid_request(response: Response, message: &str, description: &str) {
    let (status, envelope) = status_and_envelope(response).await;
    assert_eq!(
        (status, &envelope["error"]),
        (400, &json!("INVALID_REQUEST")),
        "{description}: {envelope}"
    );
    let actual = envelope["message"].as_str().unwrap_or_default();
    assert!(
        actual.starts_with(message),
        "{description}: message {actual:?} should start with {message:?}"
    );
    assert_eq!(
        envelope.as_object().unwrap().len(),
        2,
        "{description}: {envelope}"
    );
}

// ---- admin authentication ----------------------------------------------------------------------

#[actix_web::test]
async fn admin_routes_answer_401_unauthorized_for_a_missing_wrong_or_api_token() {
    // Every route with every wrong credential is more failures than the address may make before its
    // calls are throttled (tests/api/throttle.rs); here each must get its own 401.
    let mut config = TestConfig::default();
    config.set("throttle.admin_failures_per_address", 1000);
    let app = spawn_app_with(&config).await;
    let api_token = app.live_token().await;
    let credentials = [
        ("no Authorization header", None),
        (
            "a wrong admin token",
            Some("Bearer not-the-admin-token".to_owned()),
        ),
        (
            "the admin token with a suffix",
            Some(format!("Bearer {ADMIN_TOKEN}x")),
        ),
        (
            "the admin token without a scheme",
            Some(ADMIN_TOKEN.to_owned()),
        ),
        (
            "the admin token as Basic",
            Some(format!("Basic {ADMIN_TOKEN}")),
        ),
        ("an API bearer token", Some(format!("Bearer {api_token}"))),
    ];
    let routes = [
        (Method::GET, "/admin/v1/accounts", None),
        (Method::GET, "/admin/v1/accounts/demo", None),
        (Method::PUT, "/admin/v1/accounts/acme", Some(acme_body())),
        (Method::DELETE, "/admin/v1/accounts/demo", None),
        (
            Method::POST,
            "/admin/v1/accounts/demo/credentials",
            Some(json!({ "environment": "sandbox" })),
        ),
        (
            Method::PUT,
            "/admin/v1/schemas/eligibility",
            Some(eligibility_schema(1)),
        ),
        (Method::DELETE, "/admin/v1/schemas/vob-basic", None),
        (
            Method::PUT,
            "/admin/v1/payers/Aetna",
            Some(json!({ "phone": "8005550101" })),
        ),
        (
            Method::POST,
            "/admin/v1/clock",
            Some(json!({ "advanceSeconds": 60 })),
        ),
        (
            Method::GET,
            "/admin/v1/webhook-deliveries?requestId=x",
            None,
        ),
        (Method::POST, "/admin/v1/faults/handler-panic", None),
    ];
    for (description, authorization) in &credentials {
        for (method, path, body) in &routes {
            let mut request = app.client.request(method.clone(), app.url(path));
            if let Some(authorization) = authorization {
                request = request.header("authorization", authorization);
            }
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                status_and_envelope(response).await,
                (401, json!({ "error": "UNAUTHORIZED" })),
                "{description}: {method} {path}"
            );
        }
    }
    // Nothing above got through: the demo account and its schemas are untouched.
    let (status, schemas) = status_and_json(app.get("/v1/schemas", &api_token).await).await;
    assert_eq!(status, 200, "{schemas}");
    assert_eq!(schemas["schemas"].as_array().unwrap().len(), 4, "{schemas}");
}

#[actix_web::test]
async fn admin_api_is_absent_when_no_admin_token_is_configured() {
    let mut config = TestConfig::default();
    config.remove("server.admin_token");
    let app = spawn_app_with(&config).await;
    let cases = [
        (
            "with the old token",
            Method::GET,
            "/admin/v1/accounts",
            true,
        ),
        ("without a token", Method::GET, "/admin/v1/accounts", false),
        ("a clock move", Method::POST, "/admin/v1/clock", true),
        (
            "an account write",
            Method::PUT,
            "/admin/v1/accounts/acme",
            true,
        ),
        (
            "fault injection",
            Method::POST,
            "/admin/v1/faults/handler-panic",
            true,
        ),
    ];
    for (description, method, path, with_token) in cases {
        let mut request = app.client.request(method.clone(), app.url(path));
        if with_token {
            request = request.bearer_auth(ADMIN_TOKEN).json(&json!({}));
        }
        let response = request.send().await.unwrap();
        assert_eq!(
            status_and_envelope(response).await,
            (
                404,
                json!({ "error": "NOT_FOUND", "message": format!("No route matches {method} {path}") })
            ),
            "{description}: {method} {path}"
        );
    }
    // The client API is unaffected.
    let token = app.live_token().await;
    assert_eq!(app.get("/v1/schemas", &token).await.status(), 200);
}

// ---- accounts -----------------------------------------------------------------------------------

#[actix_web::test]
async fn put_account_creates_then_replaces_an_account() {
    let app = spawn_app().await;
    let (status, created) = put_acme(&app).await;
    assert_eq!(status, 201, "{created}");
    let credential_ids: Vec<Value> = created["credentials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(credential_ids.len(), 2, "{created}");
    assert!(credential_ids
        .iter()
        .all(|id| id.as_str().is_some_and(|id| !id.is_empty())));
    let expected = json!({
        "id": "acme",
        "name": "Acme Revenue Cycle",
        "daily_call_capacity": 50,
        "timezone": "America/Chicago",
        "webhook_url": "https://hooks.example.test/acme",
        "webhook_secret_set": true,
        // Sorted by name; the phone is stored as its ten digits.
        "features": ["follow_up_calls", "payer_phone_lookup"],
        "schemas": ["vob-basic", "claim-status-basic"],
        "phone_book": [{ "payer": "Aetna", "phone": "8005550142" }],
        "credentials": [
            {
                "id": credential_ids[0],
                "environment": "production",
                "key": ACME_LIVE_KEY,
                "issued_at": START_WIRE,
            },
            {
                "id": credential_ids[1],
                "environment": "sandbox",
                "key": ACME_SANDBOX_KEY,
                "issued_at": START_WIRE,
            },
        ],
    });
    assert_eq!(created, expected);

    let response = app
        .admin(Method::GET, "/admin/v1/accounts/acme", None)
        .await;
    let text = response.text().await.unwrap();
    for secret in [ACME_LIVE_SECRET, ACME_SANDBOX_SECRET, ACME_WEBHOOK_SECRET] {
        assert!(!text.contains(secret), "GET shows a secret: {text}");
    }
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);

    let (status, list) =
        status_and_json(app.admin(Method::GET, "/admin/v1/accounts", None).await).await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = list["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["acme", "demo"]);
    assert!(!list.to_string().contains(ACME_LIVE_SECRET));

    // A replace without `credentials` keeps the issued pairs (and their ids), and one without
    // `webhook_secret` the stored secret; everything else is replaced, optional keys falling back to
    // their defaults.
    let replacement = json!({
        "id": "acme",
        "daily_call_capacity": 7,
        "schemas": ["vob-basic"],
    });
    let (status, replaced) = status_and_json(
        app.admin(Method::PUT, "/admin/v1/accounts/acme", Some(replacement))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{replaced}");
    let expected = json!({
        "id": "acme",
        "name": "acme",
        "daily_call_capacity": 7,
        "timezone": "UTC",
        "webhook_url": null,
        "webhook_secret_set": true,
        "features": [],
        "schemas": ["vob-basic"],
        "phone_book": [],
        "credentials": expected["credentials"],
    });
    assert_eq!(replaced, expected);
    let (status, fetched) = status_and_json(
        app.admin(Method::GET, "/admin/v1/accounts/acme", None)
            .await,
    )
    .await;
    assert_eq!((status, fetched), (200, expected));

    let response = app
        .admin(Method::GET, "/admin/v1/accounts/nobody", None)
        .await;
    assert_eq!(
        status_and_envelope(response).await,
        (
            404,
            json!({ "error": "ACCOUNT_NOT_FOUND", "message": "Account 'nobody' does not exist" })
        )
    );
}

#[actix_web::test]
async fn put_account_rejects_invalid_bodies_naming_the_offending_key() {
    let app = spawn_app().await;
    let with = |key: &str, value: Value| {
        let mut body = acme_body();
        body[key] = value;
        body
    };
    let cases = [
        (
            "a body id that differs from the path",
            with("id", json!("other")),
            "id: the body's id does not match the path",
        ),
        (
            "an unknown time zone",
            with("timezone", json!("Mars/Olympus")),
            "timezone: \"Mars/Olympus\" is not an IANA time zone",
        ),
        (
            "an unknown schema",
            with("schemas", json!(["vob-basic", "no-such-schema"])),
            "schemas[1]: \"no-such-schema\" is not a known schema",
        ),
        (
            "an unknown feature",
            with("features", json!(["payer_phone_lookup", "teleport"])),
            "features[1]: unknown variant `teleport`",
        ),
        (
            "a capacity that is not a number",
            with("daily_call_capacity", json!("lots")),
            "daily_call_capacity: invalid type: string \"lots\", expected u32",
        ),
        (
            "a negative capacity",
            with("daily_call_capacity", json!(-1)),
            "daily_call_capacity: invalid value: integer `-1`",
        ),
        (
            "an unknown environment",
            with(
                "credentials",
                json!([{ "environment": "staging", "key": "k", "secret": "s" }]),
            ),
            "credentials[0].environment: unknown variant `staging`",
        ),
        (
            "a credential without a secret",
            with(
                "credentials",
                json!([{ "environment": "sandbox", "key": "k" }]),
            ),
            "credentials[0]: missing field `secret`",
        ),
        (
            "a key with a space",
            with(
                "credentials",
                json!([{ "environment": "sandbox", "key": "a key", "secret": "s" }]),
            ),
            "credentials[0].key: must be 1 to 200 visible ASCII characters without spaces",
        ),
        (
            "a credential key owned by another account",
            with(
                "credentials",
                json!([{ "environment": "production", "key": LIVE_KEY, "secret": "s" }]),
            ),
            "credentials: a key is already issued to another account",
        ),
        (
            "an invalid phone-book number",
            with("phone_book", json!([{ "payer": "Aetna", "phone": "123" }])),
            "phone_book[0].phone: \"123\" is not a valid U.S. phone number",
        ),
        (
            "a webhook URL that is not http",
            with("webhook_url", json!("ftp://hooks.example.test/acme")),
            "webhook_url: \"ftp://hooks.example.test/acme\" must be an http(s) URL with a host",
        ),
        (
            "a blank name",
            with("name", json!("  ")),
            "name: must not be blank",
        ),
        (
            "a misspelt key",
            with("timezones", json!("UTC")),
            "timezones: unknown field `timezones`",
        ),
        (
            "no capacity",
            json!({ "name": "Acme" }),
            "Request body has the wrong shape: missing field `daily_call_capacity`",
        ),
    ];
    for (description, body, message) in cases {
        let response = app
            .admin(Method::PUT, "/admin/v1/accounts/acme", Some(body))
            .await;
        assert_invalid_request(response, message, description).await;
    }

    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/accounts/bad%20id",
            Some(acme_body()),
        )
        .await;
    assert_invalid_request(
        response,
        "id: \"bad id\" must be 1 to 128 letters, digits, '-' or '_'",
        "an invalid path id",
    )
    .await;
    let response = app
        .client
        .put(app.url("/admin/v1/accounts/acme"))
        .bearer_auth(ADMIN_TOKEN)
        .header("content-type", "application/json")
        .body("{\"daily_call_capacity\": 5")
        .send()
        .await
        .unwrap();
    assert_invalid_request(
        response,
        "Request body is not valid JSON: ",
        "a truncated JSON body",
    )
    .await;

    // Nothing was written, and the demo account still owns its key.
    let response = app
        .admin(Method::GET, "/admin/v1/accounts/acme", None)
        .await;
    assert_eq!(response.status(), 404);
    app.live_token().await;
}

#[actix_web::test]
async fn a_new_account_authenticates_and_lists_exactly_its_provisioned_schemas() {
    let app = spawn_app().await;
    assert_eq!(put_acme(&app).await.0, 201);
    for (key, secret) in [
        (ACME_LIVE_KEY, ACME_LIVE_SECRET),
        (ACME_SANDBOX_KEY, ACME_SANDBOX_SECRET),
    ] {
        let (status, body) = status_and_json(auth(&app, key, secret).await).await;
        assert_eq!(status, 200, "{key}: {body}");
        let token = body["token"].as_str().unwrap();
        let (status, schemas) = status_and_json(app.get("/v1/schemas", token).await).await;
        assert_eq!(
            (status, schemas),
            (
                200,
                json!({ "schemas": [
                    { "schemaId": "claim-status-basic", "name": "Claim status", "requestType": "claim-status" },
                    { "schemaId": "vob-basic", "name": "Verification of benefits", "requestType": "vob" },
                ] })
            ),
            "{key}"
        );
        // A demo schema not provisioned to acme is not there for it.
        let response = app.get("/v1/schemas/prior-auth-status", token).await;
        assert_eq!(
            status_and_envelope(response).await,
            (
                404,
                json!({ "error": "SCHEMA_NOT_FOUND", "message": "Schema 'prior-auth-status' was not found" })
            ),
            "{key}"
        );
    }
    let response = auth(&app, ACME_LIVE_KEY, ACME_SANDBOX_SECRET).await;
    assert_eq!(
        status_and_json(response).await,
        (401, json!({ "error": "UNAUTHORIZED" })),
        "another pair's secret"
    );
}

#[actix_web::test]
async fn replacing_an_accounts_credentials_revokes_the_tokens_of_removed_pairs() {
    let app = spawn_app().await;
    assert_eq!(put_acme(&app).await.0, 201);
    let kept_token = app.token(ACME_LIVE_KEY, ACME_LIVE_SECRET).await;
    let removed_token = app.token(ACME_SANDBOX_KEY, ACME_SANDBOX_SECRET).await;

    let mut body = acme_body();
    body["credentials"] = json!([
        { "environment": "production", "key": ACME_LIVE_KEY, "secret": ACME_LIVE_SECRET },
        { "environment": "sandbox", "key": "sk_test_acme_2", "secret": "acme-sandbox-secret-2" },
    ]);
    let (status, replaced) = status_and_json(
        app.admin(Method::PUT, "/admin/v1/accounts/acme", Some(body))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{replaced}");

    let response = app.get("/v1/schemas", &removed_token).await;
    assert_token_rejected(
        response,
        "Authorization token has been revoked",
        "the token of the removed sandbox pair",
    )
    .await;
    let response = auth(&app, ACME_SANDBOX_KEY, ACME_SANDBOX_SECRET).await;
    assert_eq!(
        status_and_json(response).await,
        (401, json!({ "error": "INVALID_API_KEY" })),
        "the removed key"
    );
    // The pair declared again with the same key and secret keeps its tokens; the new pair works.
    assert_eq!(app.get("/v1/schemas", &kept_token).await.status(), 200);
    let new_token = app.token("sk_test_acme_2", "acme-sandbox-secret-2").await;
    assert_eq!(app.get("/v1/schemas", &new_token).await.status(), 200);

    // Declaring the same key with a new secret is a new pair: the old tokens go too.
    let mut body = acme_body();
    body["credentials"] = json!([
        { "environment": "production", "key": ACME_LIVE_KEY, "secret": "rotated-secret" },
    ]);
    let response = app
        .admin(Method::PUT, "/admin/v1/accounts/acme", Some(body))
        .await;
    assert_eq!(response.status(), 200);
    let response = app.get("/v1/schemas", &kept_token).await;
    assert_token_rejected(
        response,
        "Authorization token has been revoked",
        "the token of a pair whose secret was rotated",
    )
    .await;
    app.token(ACME_LIVE_KEY, "rotated-secret").await;
}

#[actix_web::test]
async fn delete_account_answers_204_and_its_live_tokens_then_get_account_not_found() {
    let app = spawn_app().await;
    assert_eq!(put_acme(&app).await.0, 201);
    let token = app.token(ACME_LIVE_KEY, ACME_LIVE_SECRET).await;

    let response = app
        .admin(Method::DELETE, "/admin/v1/accounts/acme", None)
        .await;
    assert_eq!(response.status(), 204);
    assert_eq!(response.text().await.unwrap(), "");

    for path in ["/v1/schemas", "/v1/schemas/vob-basic"] {
        let response = app.get(path, &token).await;
        assert_eq!(
            status_and_envelope(response).await,
            (
                404,
                json!({
                    "error": "ACCOUNT_NOT_FOUND",
                    "message": "The account for these credentials no longer exists",
                })
            ),
            "the deleted account's unexpired token on {path}"
        );
    }
    let account_not_found = json!({
        "error": "ACCOUNT_NOT_FOUND",
        "message": "Account 'acme' does not exist",
    });
    let response = app
        .admin(Method::DELETE, "/admin/v1/accounts/acme", None)
        .await;
    assert_eq!(
        status_and_envelope(response).await,
        (404, account_not_found.clone()),
        "a second DELETE"
    );
    let response = app
        .admin(Method::GET, "/admin/v1/accounts/acme", None)
        .await;
    assert_eq!(
        status_and_envelope(response).await,
        (404, account_not_found)
    );
    let response = auth(&app, ACME_LIVE_KEY, ACME_LIVE_SECRET).await;
    assert_eq!(
        status_and_json(response).await,
        (401, json!({ "error": "INVALID_API_KEY" })),
        "the deleted account's key"
    );

    // The deleted account's keys are free again.
    put_account_with(&app, "acme-two", ACME_LIVE_KEY, ACME_LIVE_SECRET, &[]).await;
    app.token(ACME_LIVE_KEY, ACME_LIVE_SECRET).await;
}

#[actix_web::test]
async fn post_credentials_issues_a_new_pair_that_authenticates() {
    let app = spawn_app().await;
    for (environment, prefix) in [("sandbox", "sk_test_"), ("production", "sk_live_")] {
        let response = app
            .admin(
                Method::POST,
                "/admin/v1/accounts/demo/credentials",
                Some(json!({ "environment": environment })),
            )
            .await;
        let (status, issued) = status_and_json(response).await;
        assert_eq!(status, 201, "{environment}: {issued}");
        let key = issued["key"].as_str().unwrap().to_owned();
        let secret = issued["secret"].as_str().unwrap().to_owned();
        assert!(key.starts_with(prefix) && key.len() > prefix.len(), "{key}");
        assert!(secret.len() >= 32, "{secret}");
        assert_eq!(
            issued,
            json!({
                "id": issued["id"],
                "environment": environment,
                "key": key,
                "secret": secret,
            })
        );

        let token = app.token(&key, &secret).await;
        let (status, schemas) = status_and_json(app.get("/v1/schemas", &token).await).await;
        assert_eq!(status, 200, "{environment}: {schemas}");
        assert_eq!(schemas["schemas"].as_array().unwrap().len(), 4);

        // The account shows the new key, never its secret.
        let response = app
            .admin(Method::GET, "/admin/v1/accounts/demo", None)
            .await;
        let text = response.text().await.unwrap();
        assert!(!text.contains(&secret), "{text}");
        let account: Value = serde_json::from_str(&text).unwrap();
        assert!(
            account["credentials"].as_array().unwrap().contains(&json!({
                "id": issued["id"],
                "environment": environment,
                "key": key,
                "issued_at": START_WIRE,
            })),
            "{account}"
        );
    }
    // The configured pairs still work alongside the issued ones.
    app.live_token().await;
    app.sandbox_token().await;
}

#[actix_web::test]
async fn post_credentials_rejects_an_unknown_account_or_environment() {
    let app = spawn_app().await;
    let response = app
        .admin(
            Method::POST,
            "/admin/v1/accounts/nobody/credentials",
            Some(json!({ "environment": "sandbox" })),
        )
        .await;
    assert_eq!(
        status_and_envelope(response).await,
        (
            404,
            json!({ "error": "ACCOUNT_NOT_FOUND", "message": "Account 'nobody' does not exist" })
        )
    );
    let cases = [
        (
            "an unknown environment",
            json!({ "environment": "staging" }),
            "environment: unknown variant `staging`, expected `production` or `sandbox`",
        ),
        (
            "no environment",
            json!({}),
            "Request body has the wrong shape: missing field `environment`",
        ),
        (
            "an environment that is not a string",
            json!({ "environment": 1 }),
            "environment: invalid type: integer `1`",
        ),
        (
            "a caller-chosen key",
            json!({ "environment": "sandbox", "key": "sk_test_mine" }),
            "key: unknown field `key`",
        ),
    ];
    for (description, body, message) in cases {
        let response = app
            .admin(
                Method::POST,
                "/admin/v1/accounts/demo/credentials",
                Some(body),
            )
            .await;
        assert_invalid_request(response, message, description).await;
    }
    let (_, demo) = status_and_json(
        app.admin(Method::GET, "/admin/v1/accounts/demo", None)
            .await,
    )
    .await;
    assert_eq!(
        demo["credentials"].as_array().unwrap().len(),
        2,
        "no rejected call issued a pair: {demo}"
    );
}

// ---- schemas ------------------------------------------------------------------------------------

#[actix_web::test]
async fn put_schema_creates_version_1_then_publishes_version_2() {
    let app = spawn_app().await;
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/schemas/eligibility",
            Some(eligibility_schema(2)),
        )
        .await;
    assert_eq!(
        status_and_json(response).await,
        (
            201,
            json!({ "schemaId": "eligibility", "version": 1, "retired": false, "hidden": false })
        )
    );
    let (status, head) = status_and_json(
        app.admin(Method::GET, "/admin/v1/schemas/eligibility", None)
            .await,
    )
    .await;
    assert_eq!(
        (status, head),
        (
            200,
            json!({
                "schemaId": "eligibility",
                "version": 1,
                "retired": false,
                "hidden": false,
                "publishedAt": START_WIRE,
                "requestType": "eligibility",
                "fieldCount": 2,
            })
        )
    );

    app.advance_clock(60).await;
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/schemas/eligibility",
            Some(eligibility_schema(3)),
        )
        .await;
    assert_eq!(
        status_and_json(response).await,
        (
            200,
            json!({ "schemaId": "eligibility", "version": 2, "retired": false, "hidden": false })
        )
    );
    let (status, head) = status_and_json(
        app.admin(Method::GET, "/admin/v1/schemas/eligibility", None)
            .await,
    )
    .await;
    assert_eq!(
        (status, head),
        (
            200,
            json!({
                "schemaId": "eligibility",
                "version": 2,
                "retired": false,
                "hidden": false,
                "publishedAt": "2026-11-23T14:01:00.000000+00:00",
                "requestType": "eligibility",
                "fieldCount": 3,
            })
        )
    );

    // An account provisioned with it sees the latest version's fields, sorted by name.
    put_account_with(
        &app,
        "acme",
        ACME_LIVE_KEY,
        ACME_LIVE_SECRET,
        &["eligibility"],
    )
    .await;
    let token = app.token(ACME_LIVE_KEY, ACME_LIVE_SECRET).await;
    let (status, detail) = status_and_json(app.get("/v1/schemas/eligibility", &token).await).await;
    assert_eq!(
        (status, detail),
        (
            200,
            json!({
                "schemaId": "eligibility",
                "name": "Eligibility check",
                "requestType": "eligibility",
                "resultsFields": [
                    {
                        "name": "callReferenceNumber",
                        "label": "Call reference number",
                        "description": "What is the reference number for this call?",
                        "type": "alphanumeric",
                    },
                    {
                        "name": "coverageStatus",
                        "label": "Coverage status",
                        "description": "Is the member's coverage active on the date of service?",
                        "type": "multiple",
                        "allowedValues": ["ACTIVE", "INACTIVE", "TERMED"],
                    },
                    {
                        "name": "deductibleRemaining",
                        "label": "Deductible remaining",
                        "description": "How much of the deductible is left to meet?",
                        "type": "dollar",
                    },
                ],
            })
        )
    );
    let (status, list) = status_and_json(app.get("/v1/schemas", &token).await).await;
    assert_eq!(
        (status, list),
        (
            200,
            json!({ "schemas": [
                { "schemaId": "eligibility", "name": "Eligibility check", "requestType": "eligibility" },
            ] })
        )
    );

    let response = app
        .admin(Method::GET, "/admin/v1/schemas/no-such-schema", None)
        .await;
    assert_eq!(
        status_and_envelope(response).await,
        (
            404,
            json!({ "error": "SCHEMA_NOT_FOUND", "message": "Schema 'no-such-schema' was not found" })
        )
    );
}

#[actix_web::test]
async fn put_schema_rejects_invalid_definitions_naming_the_offending_key() {
    let app = spawn_app().await;
    let with = |key: &str, value: Value| {
        let mut body = eligibility_schema(2);
        body[key] = value;
        body
    };
    let with_field = |key: &str, value: Value| {
        let mut body = eligibility_schema(2);
        match value {
            Value::Null => {
                body["fields"][0].as_object_mut().unwrap().remove(key);
            }
            value => body["fields"][0][key] = value,
        }
        body
    };
    let cases = [
        (
            "no fields",
            with("fields", json!([])),
            "fields: a schema needs at least one field",
        ),
        (
            "a multiple field without allowed_values",
            with_field("allowed_values", Value::Null),
            "fields[0].allowed_values: a multiple field needs allowed_values",
        ),
        (
            "a multiple field with empty allowed_values",
            with_field("allowed_values", json!([])),
            "fields[0].allowed_values: must be non-blank values, at least one",
        ),
        (
            "allowed_values on a date field",
            with_field("type", json!("date")),
            "fields[0].allowed_values: only multiple fields take allowed_values, not date",
        ),
        (
            "an unknown field type",
            with_field("type", json!("number")),
            "fields[0].type: unknown variant `number`",
        ),
        (
            "a blank label",
            with_field("label", json!(" ")),
            "fields[0].label: must not be blank",
        ),
        (
            "a field without a description",
            with_field("description", Value::Null),
            "fields[0]: missing field `description`",
        ),
        (
            "a condition on an unknown field",
            with_field("when", json!({ "field": "nope", "equals": "x" })),
            "fields[0].when.field: \"nope\" is not another field of this schema",
        ),
        (
            "a follow-up to an unknown schema",
            with("follow_up", json!("no-such-schema")),
            "follow_up: \"no-such-schema\" is not a known schema",
        ),
        (
            "a follow-up to itself",
            with("follow_up", json!("eligibility")),
            "follow_up: a schema cannot chain to itself",
        ),
        (
            "a blank request type",
            with("request_type", json!("  ")),
            "request_type: must not be blank",
        ),
        (
            "version 0",
            with("version", json!(0)),
            "version: versions start at 1",
        ),
        (
            "an input listed as required and optional",
            with("optional_inputs", json!(["memberId"])),
            "optional_inputs[0]: \"memberId\" is listed twice",
        ),
        (
            "a body id that differs from the path",
            with("id", json!("other")),
            "id: the body's id does not match the path",
        ),
        (
            "a misspelt key",
            with("requestType", json!("eligibility")),
            "requestType: unknown field `requestType`",
        ),
    ];
    for (description, body, message) in cases {
        let response = app
            .admin(Method::PUT, "/admin/v1/schemas/eligibility", Some(body))
            .await;
        assert_invalid_request(response, message, description).await;
    }
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/schemas/_eligibility",
            Some(eligibility_schema(1)),
        )
        .await;
    assert_invalid_request(response, "id: ", "a path id starting with '_'").await;

    let response = app
        .admin(Method::GET, "/admin/v1/schemas/eligibility", None)
        .await;
    assert_eq!(response.status(), 404, "no rejected PUT created the schema");
    // A follow-up to an existing schema is accepted.
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/schemas/eligibility",
            Some(with("follow_up", json!("vob-basic"))),
        )
        .await;
    assert_eq!(response.status(), 201);
}

#[actix_web::test]
async fn delete_schema_retires_it_for_detail_and_list() {
    let app = spawn_app().await;
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/schemas/eligibility",
            Some(eligibility_schema(1)),
        )
        .await;
    assert_eq!(response.status(), 201);
    put_account_with(
        &app,
        "acme",
        ACME_LIVE_KEY,
        ACME_LIVE_SECRET,
        &["eligibility", "vob-basic"],
    )
    .await;
    let token = app.token(ACME_LIVE_KEY, ACME_LIVE_SECRET).await;
    assert_eq!(
        app.get("/v1/schemas/eligibility", &token).await.status(),
        200
    );

    let response = app
        .admin(Method::DELETE, "/admin/v1/schemas/eligibility", None)
        .await;
    assert_eq!(
        status_and_json(response).await,
        (
            200,
            json!({ "schemaId": "eligibility", "version": 1, "retired": true, "hidden": false })
        )
    );
    let schema_not_found = json!({
        "error": "SCHEMA_NOT_FOUND",
        "message": "Schema 'eligibility' was not found",
    });
    for path in [
        "/v1/schemas/eligibility",
        "/v1/schemas/eligibility/required-inputs",
    ] {
        let response = app.get(path, &token).await;
        assert_eq!(
            status_and_envelope(response).await,
            (404, schema_not_found.clone()),
            "{path} of a retired schema"
        );
    }
    let (status, list) = status_and_json(app.get("/v1/schemas", &token).await).await;
    assert_eq!(
        (status, list),
        (
            200,
            json!({ "schemas": [
                { "schemaId": "vob-basic", "name": "Verification of benefits", "requestType": "vob" },
            ] })
        )
    );
    // The admin view still has it, marked retired.
    let (status, head) = status_and_json(
        app.admin(Method::GET, "/admin/v1/schemas/eligibility", None)
            .await,
    )
    .await;
    assert_eq!((status, &head["retired"]), (200, &json!(true)), "{head}");

    let response = app
        .admin(Method::DELETE, "/admin/v1/schemas/no-such-schema", None)
        .await;
    assert_eq!(
        status_and_envelope(response).await,
        (
            404,
            json!({ "error": "SCHEMA_NOT_FOUND", "message": "Schema 'no-such-schema' was not found" })
        )
    );
}

// ---- payers -------------------------------------------------------------------------------------

#[actix_web::test]
async fn put_payer_creates_or_replaces_a_directory_entry() {
    let app = spawn_app().await;
    let body = json!({
        "aliases": ["AHP", "Acme Health"],
        "phone": "(800) 555-0199",
        "required_inputs": ["groupNumber"],
        "electronic": true,
        "electronic_payer_id": "00621",
        "member_id_prefixes": ["AHP"],
    });
    let expected = json!({
        "name": "Acme Health Plan",
        "aliases": ["AHP", "Acme Health"],
        "phone": "8005550199",
        "required_inputs": ["groupNumber"],
        "electronic": true,
        "electronic_payer_id": "00621",
        "member_id_prefixes": ["AHP"],
    });
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/payers/Acme%20Health%20Plan",
            Some(body),
        )
        .await;
    assert_eq!(status_and_json(response).await, (200, expected.clone()));

    let listed = |list: &Value| -> Vec<Value> {
        list["payers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "Acme Health Plan")
            .cloned()
            .collect()
    };
    let (status, list) =
        status_and_json(app.admin(Method::GET, "/admin/v1/payers", None).await).await;
    assert_eq!(status, 200);
    assert_eq!(listed(&list), [expected]);
    let n_payers = list["payers"].as_array().unwrap().len();

    // A second PUT replaces the entry; a payer without a number on file has a null phone.
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/payers/Acme%20Health%20Plan",
            Some(json!({ "name": "Acme Health Plan" })),
        )
        .await;
    let replaced = json!({
        "name": "Acme Health Plan",
        "aliases": [],
        "phone": null,
        "required_inputs": [],
        "electronic": false,
        "electronic_payer_id": null,
        "member_id_prefixes": [],
    });
    assert_eq!(status_and_json(response).await, (200, replaced.clone()));
    let (_, list) = status_and_json(app.admin(Method::GET, "/admin/v1/payers", None).await).await;
    assert_eq!(listed(&list), [replaced]);
    assert_eq!(list["payers"].as_array().unwrap().len(), n_payers);
}

#[actix_web::test]
async fn put_payer_rejects_invalid_entries_naming_the_offending_key() {
    let app = spawn_app().await;
    let cases = [
        (
            "an invalid phone",
            json!({ "phone": "123" }),
            "phone: \"123\" is not a valid U.S. phone number",
        ),
        (
            "a phone with a 1xx exchange",
            json!({ "phone": "800-155-0199" }),
            "phone: \"800-155-0199\" is not a valid U.S. phone number",
        ),
        (
            "a body name that differs from the path",
            json!({ "name": "Other Plan" }),
            "name: the body's name does not match the path",
        ),
        (
            "a blank alias",
            json!({ "aliases": ["AHP", " "] }),
            "aliases[1]: must not be blank",
        ),
        (
            "a lowercase member ID prefix",
            json!({ "member_id_prefixes": ["ahp"] }),
            "member_id_prefixes[0]: \"ahp\" must match ^[A-Z][A-Z2-9][A-Z]$",
        ),
        (
            "electronic as a string",
            json!({ "electronic": "yes" }),
            "electronic: invalid type: string \"yes\", expected a boolean",
        ),
    ];
    for (description, body, message) in cases {
        let response = app
            .admin(
                Method::PUT,
                "/admin/v1/payers/Acme%20Health%20Plan",
                Some(body),
            )
            .await;
        assert_invalid_request(response, message, description).await;
    }
    let response = app
        .admin(Method::PUT, "/admin/v1/payers/%20", Some(json!({})))
        .await;
    assert_invalid_request(response, "name: must not be blank", "a blank path name").await;

    let (_, list) = status_and_json(app.admin(Method::GET, "/admin/v1/payers", None).await).await;
    assert!(
        list["payers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"] != "Acme Health Plan"),
        "no rejected PUT created the payer"
    );
}

// ---- clock --------------------------------------------------------------------------------------

async fn move_clock(app: &TestApp, body: Value) -> Response {
    app.admin(Method::POST, "/admin/v1/clock", Some(body)).await
}

#[actix_web::test]
async fn post_clock_advances_or_sets_the_manual_clock() {
    let app = spawn_app().await;
    let (status, clock) =
        status_and_json(app.admin(Method::GET, "/admin/v1/clock", None).await).await;
    assert_eq!(
        (status, clock),
        (200, json!({ "now": START_WIRE, "mode": "manual" }))
    );
    let moves = [
        (
            "a day forward",
            json!({ "advanceSeconds": 86400 }),
            "2026-11-24T14:00:00.000000+00:00",
        ),
        (
            "no move at all",
            json!({ "advanceSeconds": 0 }),
            "2026-11-24T14:00:00.000000+00:00",
        ),
        (
            "set to a later instant",
            json!({ "set": "2026-12-01T00:00:00Z" }),
            "2026-12-01T00:00:00.000000+00:00",
        ),
        (
            "set to the same instant",
            json!({ "set": "2026-12-01T00:00:00Z" }),
            "2026-12-01T00:00:00.000000+00:00",
        ),
        (
            "set with an offset",
            json!({ "set": "2026-12-01T09:30:00.25+05:00" }),
            "2026-12-01T04:30:00.250000+00:00",
        ),
    ];
    for (description, body, now) in moves {
        assert_eq!(
            status_and_json(move_clock(&app, body).await).await,
            (200, json!({ "now": now })),
            "{description}"
        );
    }
    let (_, clock) = status_and_json(app.admin(Method::GET, "/admin/v1/clock", None).await).await;
    assert_eq!(
        clock,
        json!({ "now": "2026-12-01T04:30:00.250000+00:00", "mode": "manual" })
    );
}

#[actix_web::test]
async fn post_clock_rejects_backward_negative_or_ambiguous_moves() {
    let app = spawn_app().await;
    let cases = [
        (
            "a set before now",
            json!({ "set": "2026-11-23T13:59:59Z" }),
            "the clock cannot move backwards",
        ),
        (
            "a negative advance",
            json!({ "advanceSeconds": -1 }),
            "advanceSeconds must not be negative",
        ),
        (
            "both keys",
            json!({ "advanceSeconds": 60, "set": "2026-12-01T00:00:00Z" }),
            "give exactly one of advanceSeconds or set",
        ),
        (
            "neither key",
            json!({}),
            "give exactly one of advanceSeconds or set",
        ),
        (
            "a set that is not RFC 3339",
            json!({ "set": "tomorrow" }),
            "set: \"tomorrow\" is not an RFC 3339 instant",
        ),
        (
            "a fractional advance",
            json!({ "advanceSeconds": 1.5 }),
            "advanceSeconds: invalid type: floating point `1.5`",
        ),
        (
            "a snake_case key",
            json!({ "advance_seconds": 60 }),
            "advance_seconds: unknown field `advance_seconds`",
        ),
    ];
    for (description, body, message) in cases {
        let response = move_clock(&app, body).await;
        assert_invalid_request(response, message, description).await;
    }
    let (_, clock) = status_and_json(app.admin(Method::GET, "/admin/v1/clock", None).await).await;
    assert_eq!(
        clock,
        json!({ "now": START_WIRE, "mode": "manual" }),
        "no rejected move moved the clock"
    );
}

#[actix_web::test]
async fn post_clock_is_refused_with_the_system_clock() {
    let mut config = TestConfig::default();
    config.set("clock.mode", "system");
    let app = spawn_app_with(&config).await;
    let refused = json!({
        "error": "INVALID_REQUEST",
        "message": "the clock is in system mode; only a manual clock can be moved",
    });
    for body in [
        json!({ "advanceSeconds": 60 }),
        json!({ "set": "2099-01-01T00:00:00Z" }),
    ] {
        assert_eq!(
            status_and_envelope(move_clock(&app, body.clone()).await).await,
            (400, refused.clone()),
            "{body}"
        );
    }
    let (status, clock) =
        status_and_json(app.admin(Method::GET, "/admin/v1/clock", None).await).await;
    assert_eq!((status, &clock["mode"]), (200, &json!("system")), "{clock}");
}

#[actix_web::test]
async fn tokens_expire_exactly_one_hour_after_issue_on_the_manual_clock() {
    let app = spawn_app().await;
    let first = app.live_token().await;
    app.advance_clock(3600).await;
    assert_token_rejected(
        app.get("/v1/schemas", &first).await,
        "Authorization token has expired",
        "a token one hour old",
    )
    .await;

    let second = app.live_token().await;
    app.advance_clock(3599).await;
    assert_eq!(
        app.get("/v1/schemas", &second).await.status(),
        200,
        "a token 3599 s old"
    );
    app.advance_clock(1).await;
    assert_token_rejected(
        app.get("/v1/schemas", &second).await,
        "Authorization token has expired",
        "a token 3600 s old",
    )
    .await;
    // A fresh exchange is all it takes.
    let third = app.live_token().await;
    assert_eq!(app.get("/v1/schemas", &third).await.status(), 200);
}

// ---- webhook deliveries -------------------------------------------------------------------------

#[actix_web::test]
async fn webhook_deliveries_lists_no_attempts_and_requires_a_request_id() {
    let app = spawn_app().await;
    let response = app
        .admin(
            Method::GET,
            "/admin/v1/webhook-deliveries?requestId=x",
            None,
        )
        .await;
    assert_eq!(
        status_and_json(response).await,
        (
            200,
            json!({
                "requestId": "x", "status": null, "url": null, "nextRound": null, "nextAttemptAt": null,
                "deliveries": [],
            })
        )
    );
    let required = json!({
        "error": "INVALID_REQUEST",
        "message": "requestId query parameter is required",
    });
    for (description, path) in [
        ("no query", "/admin/v1/webhook-deliveries"),
        (
            "a blank requestId",
            "/admin/v1/webhook-deliveries?requestId=%20",
        ),
        (
            "the snake_case name",
            "/admin/v1/webhook-deliveries?request_id=x",
        ),
    ] {
        let response = app.admin(Method::GET, path, None).await;
        assert_eq!(
            status_and_envelope(response).await,
            (400, required.clone()),
            "{description}"
        );
    }
}

#[actix_web::test]
async fn an_account_webhook_url_on_a_private_address_is_refused() {
    let app = spawn_app().await;
    for url in [
        "http://127.0.0.1:9/hook",
        "http://169.254.169.254/latest",
        "http://10.0.0.8/hook",
        "http://[::127.0.0.1]/hook",
        "http://[64:ff9b::7f00:1]/hook",
        "http://[2002:7f00:1::]/hook",
        "http://localhost./hook",
        "http://foo.localhost/hook",
    ] {
        let body = json!({ "daily_call_capacity": 5, "webhook_url": url });
        let (status, envelope) = status_and_json(
            app.admin(Method::PUT, "/admin/v1/accounts/private", Some(body))
                .await,
        )
        .await;
        assert_eq!(
            (status, envelope["error"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{url}"
        );
        assert!(
            envelope["message"]
                .as_str()
                .unwrap()
                .starts_with("webhook_url: "),
            "{envelope}"
        );
    }
    let public = json!({ "daily_call_capacity": 5, "webhook_url": "http://93.184.216.34/hook" });
    assert_eq!(
        app.admin(Method::PUT, "/admin/v1/accounts/public", Some(public))
            .await
            .status(),
        201
    );
}
