//! `GET /v1/auth` (4.1) and bearer-token checking (5, 7.1).

use reqwest::Method;
use serde_json::json;

use crate::helpers::{
    spawn_app, spawn_app_with, status_and_json, TestConfig, LIVE_KEY, LIVE_SECRET, SANDBOX_KEY,
    SANDBOX_SECRET,
};

#[actix_web::test]
async fn auth_returns_a_bearer_token_for_a_valid_pair_of_either_environment() {
    let app = spawn_app().await;
    for (key, secret) in [(LIVE_KEY, LIVE_SECRET), (SANDBOX_KEY, SANDBOX_SECRET)] {
        let (status, body) = status_and_json(
            app.auth_with(&[
                ("Switchboard-API-Key", key),
                ("Switchboard-API-Secret", secret),
            ])
            .await,
        )
        .await;
        assert_eq!(status, 200, "{key}");
        let token = body["token"].as_str().unwrap();
        assert_eq!(token.split('.').count(), 3);
        assert_eq!(body.as_object().unwrap().len(), 1, "only the token: {body}");
    }
}

#[actix_web::test]
async fn auth_rejects_each_credential_problem_with_its_code_and_no_message() {
    let app = spawn_app().await;
    type Headers = Vec<(&'static str, &'static str)>;
    let cases: [(&str, Headers, &str); 7] = [
        ("no headers", vec![], "MISSING_API_KEY"),
        (
            "secret only",
            vec![("Switchboard-API-Secret", LIVE_SECRET)],
            "MISSING_API_KEY",
        ),
        (
            "empty key",
            vec![
                ("Switchboard-API-Key", " "),
                ("Switchboard-API-Secret", LIVE_SECRET),
            ],
            "MISSING_API_KEY",
        ),
        (
            "key only",
            vec![("Switchboard-API-Key", LIVE_KEY)],
            "MISSING_API_SECRET",
        ),
        (
            "empty secret",
            vec![
                ("Switchboard-API-Key", LIVE_KEY),
                ("Switchboard-API-Secret", ""),
            ],
            "MISSING_API_SECRET",
        ),
        (
            "unknown key",
            vec![
                ("Switchboard-API-Key", "sk_live_nope"),
                ("Switchboard-API-Secret", LIVE_SECRET),
            ],
            "INVALID_API_KEY",
        ),
        (
            "wrong secret",
            vec![
                ("Switchboard-API-Key", LIVE_KEY),
                ("Switchboard-API-Secret", SANDBOX_SECRET),
            ],
            "UNAUTHORIZED",
        ),
    ];
    for (description, headers, code) in cases {
        let (status, body) = status_and_json(app.auth_with(&headers).await).await;
        assert_eq!(
            (status, body),
            (401, json!({ "error": code })),
            "{description}"
        );
    }
}

#[actix_web::test]
async fn auth_header_names_are_case_insensitive() {
    let app = spawn_app().await;
    let response = app
        .auth_with(&[
            ("switchboard-api-key", LIVE_KEY),
            ("SWITCHBOARD-API-SECRET", LIVE_SECRET),
        ])
        .await;
    assert_eq!(response.status(), 200);
}

#[actix_web::test]
async fn the_product_word_renames_the_credential_headers_and_the_realm() {
    let mut config = TestConfig::default();
    config.set("server.product_word", "Acme");
    let app = spawn_app_with(&config).await;
    let old = app
        .auth_with(&[
            ("Switchboard-API-Key", LIVE_KEY),
            ("Switchboard-API-Secret", LIVE_SECRET),
        ])
        .await;
    assert_eq!(
        status_and_json(old).await,
        (401, json!({ "error": "MISSING_API_KEY" }))
    );
    let new = app
        .auth_with(&[("Acme-API-Key", LIVE_KEY), ("Acme-API-Secret", LIVE_SECRET)])
        .await;
    assert_eq!(new.status(), 200);
    let challenge = app.client.get(app.url("/v1/schemas")).send().await.unwrap();
    assert_eq!(
        challenge.headers()["www-authenticate"],
        "Bearer realm=\"Acme\""
    );
}

/// Every token problem: status 401, body `{code: 401, message}`, and the RFC 6750 challenge.
#[actix_web::test]
async fn protected_routes_reject_missing_malformed_and_forged_tokens() {
    let app = spawn_app().await;
    let good = app.live_token().await;
    let mut forged_parts: Vec<&str> = good.split('.').collect();
    forged_parts[2] = "c2lnbmF0dXJl";
    let forged = forged_parts.join(".");
    let cases: [(&str, Option<String>, &str, Option<&str>); 6] = [
        ("no Authorization header", None, "missing", None),
        (
            "basic scheme",
            Some("Basic dXNlcjpwYXNz".into()),
            "Bearer",
            None,
        ),
        (
            "not three parts",
            Some("Bearer abc.def".into()),
            "header.payload.signature",
            Some("invalid_token"),
        ),
        (
            "empty bearer",
            Some("Bearer ".into()),
            "header.payload.signature",
            Some("invalid_token"),
        ),
        (
            "forged signature",
            Some(format!("Bearer {forged}")),
            "invalid",
            Some("invalid_token"),
        ),
        (
            "garbage parts",
            Some("Bearer aaa.bbb.ccc".into()),
            "invalid",
            Some("invalid_token"),
        ),
    ];
    for path in [
        "/v1/schemas",
        "/v1/schemas/vob-basic",
        "/v1/schemas/vob-basic/required-inputs",
        "/v1/requests",
        "/v1/requests/some-request-id",
    ] {
        for (description, header, message_part, rfc_error) in &cases {
            let mut request = app.client.get(app.url(path));
            if let Some(header) = header {
                request = request.header("Authorization", header);
            }
            let response = request.send().await.unwrap();
            let challenge = response.headers()["www-authenticate"]
                .to_str()
                .unwrap()
                .to_owned();
            let (status, body) = status_and_json(response).await;
            assert_eq!(status, 401, "{path}: {description}");
            assert_eq!(body["code"], 401, "{path}: {description}: {body}");
            assert_eq!(
                body.as_object().unwrap().len(),
                2,
                "{path}: {description}: {body}"
            );
            let message = body["message"].as_str().unwrap();
            assert!(
                message.contains(message_part),
                "{path}: {description}: {message}"
            );
            assert!(
                challenge.starts_with("Bearer realm=\"Switchboard\""),
                "{description}: {challenge}"
            );
            match rfc_error {
                Some(code) => assert!(
                    challenge.contains(&format!("error=\"{code}\"")),
                    "{description}: {challenge}"
                ),
                None => assert!(!challenge.contains("error="), "{description}: {challenge}"),
            }
        }
    }
}

#[actix_web::test]
async fn a_token_expires_after_exactly_one_hour_on_the_clock() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    app.advance_clock(3599).await;
    assert_eq!(app.get("/v1/schemas", &token).await.status(), 200);
    app.advance_clock(1).await;
    let response = app.get("/v1/schemas", &token).await;
    let challenge = response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 401);
    assert_eq!(
        body,
        json!({ "code": 401, "message": "Authorization token has expired" })
    );
    assert!(challenge.contains("error=\"invalid_token\""));
    // A fresh exchange works again.
    let fresh = app.live_token().await;
    assert_eq!(app.get("/v1/schemas", &fresh).await.status(), 200);
}

#[actix_web::test]
async fn a_token_of_a_deleted_account_gets_account_not_found() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    assert_eq!(
        app.admin(Method::DELETE, "/admin/v1/accounts/demo", None)
            .await
            .status(),
        204
    );
    for path in [
        "/v1/schemas",
        "/v1/schemas/vob-basic",
        "/v1/schemas/vob-basic/required-inputs",
        "/v1/requests",
        "/v1/requests/some-request-id",
    ] {
        let (status, body) = status_and_json(app.get(path, &token).await).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"], "ACCOUNT_NOT_FOUND", "{path}");
        assert!(body["message"].is_string());
    }
    let (status, body) = status_and_json(
        app.auth_with(&[
            ("Switchboard-API-Key", LIVE_KEY),
            ("Switchboard-API-Secret", LIVE_SECRET),
        ])
        .await,
    )
    .await;
    assert_eq!((status, body), (401, json!({ "error": "INVALID_API_KEY" })));
}

#[actix_web::test]
async fn a_token_signed_by_another_server_is_rejected() {
    let one = spawn_app().await;
    let two = spawn_app().await;
    let token = one.live_token().await;
    let (status, body) = status_and_json(two.get("/v1/schemas", &token).await).await;
    assert_eq!(
        (status, body["message"].as_str().unwrap()),
        (401, "Authorization token is invalid")
    );
}
