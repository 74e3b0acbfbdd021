//! Schema endpoints (4.2-4.4) with their rules (2.1-2.3, 8).

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_app_with, status_and_json, TestConfig};

fn schema_body(request_type: &str, name: Option<&str>, field_names: &[&str]) -> Value {
    let fields: Vec<Value> = field_names
        .iter()
        .map(|n| json!({ "name": n, "label": n.to_uppercase(), "description": format!("What is {n}?"), "type": "alphanumeric", "required": true }))
        .collect();
    let mut body = json!({ "request_type": request_type, "required_inputs": ["payerName", "phoneNumber"], "fields": fields });
    if let Some(name) = name {
        body["name"] = json!(name);
    }
    body
}

/// Publishes a schema and provisions it (with the demo schemas) to the demo account.
async fn publish_for_demo(app: &crate::helpers::TestApp, id: &str, body: Value) {
    let status = app
        .admin(Method::PUT, &format!("/admin/v1/schemas/{id}"), Some(body))
        .await
        .status();
    assert!(status == 201 || status == 200, "publish {id}: {status}");
    let (_, account) = status_and_json(
        app.admin(Method::GET, "/admin/v1/accounts/demo", None)
            .await,
    )
    .await;
    let mut schemas: Vec<Value> = account["schemas"].as_array().unwrap().clone();
    if !schemas.contains(&json!(id)) {
        schemas.push(json!(id));
    }
    let body = json!({
        "name": account["name"], "daily_call_capacity": account["daily_call_capacity"], "timezone": account["timezone"],
        "features": account["features"], "schemas": schemas,
    });
    assert_eq!(
        app.admin(Method::PUT, "/admin/v1/accounts/demo", Some(body))
            .await
            .status(),
        200
    );
}

#[actix_web::test]
async fn the_list_shows_the_accounts_schemas_with_server_derived_request_types() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let (status, body) = status_and_json(app.get("/v1/schemas", &token).await).await;
    assert_eq!(status, 200);
    let rows = body["schemas"].as_array().unwrap();
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["schemaId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "claim-appeal-basic",
            "claim-status-basic",
            "prior-auth-status",
            "vob-basic"
        ]
    );
    let vob = rows.iter().find(|r| r["schemaId"] == "vob-basic").unwrap();
    assert_eq!(
        vob,
        &json!({ "schemaId": "vob-basic", "name": "Verification of benefits", "requestType": "vob" })
    );
}

#[actix_web::test]
async fn sandbox_and_production_tokens_see_the_same_schemas() {
    let app = spawn_app().await;
    let live = status_and_json(app.get("/v1/schemas", &app.live_token().await).await).await;
    let sandbox = status_and_json(app.get("/v1/schemas", &app.sandbox_token().await).await).await;
    assert_eq!(live, sandbox);
}

#[actix_web::test]
async fn the_name_falls_back_to_the_schema_id() {
    let app = spawn_app().await;
    publish_for_demo(&app, "nameless", schema_body("claim-status", None, &["a"])).await;
    let token = app.live_token().await;
    let (_, list) = status_and_json(app.get("/v1/schemas", &token).await).await;
    let row = list["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["schemaId"] == "nameless")
        .cloned();
    assert_eq!(
        row,
        Some(json!({ "schemaId": "nameless", "name": "nameless", "requestType": "claim-status" }))
    );
    let (_, detail) = status_and_json(app.get("/v1/schemas/nameless", &token).await).await;
    assert_eq!(detail["name"], "nameless");
}

#[actix_web::test]
async fn hidden_schemas_leave_the_list_but_keep_their_detail_and_retired_ones_are_gone() {
    let app = spawn_app().await;
    let mut hidden = schema_body("vob", Some("Hidden"), &["a"]);
    hidden["hidden"] = json!(true);
    publish_for_demo(&app, "hidden-one", hidden).await;
    publish_for_demo(
        &app,
        "retired-one",
        schema_body("vob", Some("Retired"), &["a"]),
    )
    .await;
    assert_eq!(
        app.admin(Method::DELETE, "/admin/v1/schemas/retired-one", None)
            .await
            .status(),
        200
    );

    let token = app.live_token().await;
    let (_, list) = status_and_json(app.get("/v1/schemas", &token).await).await;
    let ids: Vec<&str> = list["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["schemaId"].as_str().unwrap())
        .collect();
    assert!(
        !ids.contains(&"hidden-one") && !ids.contains(&"retired-one"),
        "{ids:?}"
    );

    assert_eq!(
        app.get("/v1/schemas/hidden-one", &token).await.status(),
        200
    );
    assert_eq!(
        app.get("/v1/schemas/hidden-one/required-inputs", &token)
            .await
            .status(),
        200
    );
    for path in [
        "/v1/schemas/retired-one",
        "/v1/schemas/retired-one/required-inputs",
    ] {
        let (status, body) = status_and_json(app.get(path, &token).await).await;
        assert_eq!(
            (status, body["error"].as_str().unwrap()),
            (404, "SCHEMA_NOT_FOUND"),
            "{path}"
        );
    }
}

#[actix_web::test]
async fn detail_lists_every_field_sorted_by_name_with_allowed_values_only_on_multiple() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let (status, body) =
        status_and_json(app.get("/v1/schemas/claim-status-basic", &token).await).await;
    assert_eq!(status, 200);
    assert_eq!(body["schemaId"], "claim-status-basic");
    assert_eq!(body["requestType"], "claim-status");
    let fields = body["resultsFields"].as_array().unwrap();
    assert!(!fields.is_empty());
    let names: Vec<&str> = fields.iter().map(|f| f["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let types = ["alphanumeric", "boolean", "multiple", "dollar", "date"];
    for field in fields {
        let field_type = field["type"].as_str().unwrap();
        assert!(types.contains(&field_type), "{field}");
        assert!(
            field["label"].is_string() && field["description"].is_string(),
            "{field}"
        );
        assert_eq!(
            field.get("allowedValues").is_some(),
            field_type == "multiple",
            "{field}"
        );
        let keys = field.as_object().unwrap().len();
        assert_eq!(
            keys,
            if field_type == "multiple" { 5 } else { 4 },
            "{field}"
        );
    }
    let status_field = fields.iter().find(|f| f["name"] == "claimStatus").unwrap();
    assert!(status_field["allowedValues"]
        .as_array()
        .unwrap()
        .contains(&json!("DENIED")));
}

#[actix_web::test]
async fn detail_describes_the_latest_version() {
    let app = spawn_app().await;
    publish_for_demo(
        &app,
        "evolving",
        schema_body("vob", Some("Evolving"), &["first"]),
    )
    .await;
    publish_for_demo(
        &app,
        "evolving",
        schema_body("vob", Some("Evolving v2"), &["second", "third"]),
    )
    .await;
    let token = app.live_token().await;
    let (_, body) = status_and_json(app.get("/v1/schemas/evolving", &token).await).await;
    assert_eq!(body["name"], "Evolving v2");
    let names: Vec<&str> = body["resultsFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["second", "third"]);
}

#[actix_web::test]
async fn schemas_outside_the_account_or_unknown_are_not_found() {
    let app = spawn_app().await;
    app.admin(
        Method::PUT,
        "/admin/v1/schemas/other-account-only",
        Some(schema_body("vob", None, &["a"])),
    )
    .await;
    let token = app.live_token().await;
    for id in ["no-such-schema", "other-account-only"] {
        for path in [
            format!("/v1/schemas/{id}"),
            format!("/v1/schemas/{id}/required-inputs"),
        ] {
            let (status, body) = status_and_json(app.get(&path, &token).await).await;
            assert_eq!(status, 404, "{path}");
            assert_eq!(body["error"], "SCHEMA_NOT_FOUND", "{path}");
            assert!(
                body["message"].as_str().unwrap().contains(id),
                "{path}: {body}"
            );
            assert!(body.get("details").is_none());
        }
    }
}

#[actix_web::test]
async fn the_schema_id_path_rules_answer_400_invalid_request() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let long = "a".repeat(1501);
    let cases = [
        ("blank", "%20%20".to_owned(), "blank"),
        ("empty", "".to_owned(), "blank"),
        ("over 1500 characters", long, "1500"),
        ("encoded slash", "a%2Fb".to_owned(), "'/'"),
        ("leading underscore", "_private".to_owned(), "'_' or '.'"),
        ("leading dot", ".hidden".to_owned(), "'_' or '.'"),
    ];
    for (description, id, message_part) in cases {
        for path in [
            format!("/v1/schemas/{id}"),
            format!("/v1/schemas/{id}/required-inputs"),
        ] {
            let (status, body) = status_and_json(app.get(&path, &token).await).await;
            assert_eq!(status, 400, "{description}: {path}");
            assert_eq!(body["error"], "INVALID_REQUEST", "{description}");
            assert!(
                body["message"].as_str().unwrap().contains(message_part),
                "{description}: {body}"
            );
        }
    }
    // Exactly 1500 characters is allowed by the path rule (and then simply not found).
    let (status, body) = status_and_json(
        app.get(&format!("/v1/schemas/{}", "a".repeat(1500)), &token)
            .await,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (404, "SCHEMA_NOT_FOUND")
    );
}

#[actix_web::test]
async fn required_inputs_are_sorted_disjoint_and_phone_number_moves_with_payer_lookup() {
    let mut config = TestConfig::default();
    config.features(&["electronic_channels"]);
    let without_lookup = spawn_app_with(&config).await;
    let token = without_lookup.live_token().await;
    let (status, body) = status_and_json(
        without_lookup
            .get("/v1/schemas/claim-status-basic/required-inputs", &token)
            .await,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["schemaId"], "claim-status-basic");
    let required: Vec<&str> = body["requiredInputs"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let optional: Vec<&str> = body["optionalInputs"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(required.contains(&"phoneNumber") && !optional.contains(&"phoneNumber"));
    assert!(required.windows(2).all(|w| w[0] < w[1]), "{required:?}");
    assert!(optional.windows(2).all(|w| w[0] < w[1]), "{optional:?}");
    assert!(required.iter().all(|k| !optional.contains(k)));

    let with_lookup = spawn_app().await; // the demo account has payer_phone_lookup
    let token = with_lookup.live_token().await;
    let (_, body) = status_and_json(
        with_lookup
            .get("/v1/schemas/claim-status-basic/required-inputs", &token)
            .await,
    )
    .await;
    let required_lookup: Vec<&str> = body["requiredInputs"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let optional_lookup: Vec<&str> = body["optionalInputs"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!required_lookup.contains(&"phoneNumber") && optional_lookup.contains(&"phoneNumber"));
    assert_eq!(required_lookup.len() + 1, required.len());
    assert!(
        optional_lookup.windows(2).all(|w| w[0] < w[1]),
        "{optional_lookup:?}"
    );
}

#[actix_web::test]
async fn an_unreadable_or_empty_stored_version_is_a_500_never_an_empty_200() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    app.state
        .store
        .corrupt_schema_version_for_tests("vob-basic", 1, b"\x01{not json")
        .unwrap();
    for path in [
        "/v1/schemas/vob-basic",
        "/v1/schemas/vob-basic/required-inputs",
        "/v1/schemas",
    ] {
        let (status, body) = status_and_json(app.get(path, &token).await).await;
        assert_eq!(status, 500, "{path}");
        assert_eq!(body["error"], "INTERNAL_ERROR", "{path}");
        assert!(
            !body["message"].as_str().unwrap().contains("json"),
            "no internals leak: {body}"
        );
    }
    // A version record without fields (written by an older release, say) is just as unusable.
    let empty = br#"{"id":"claim-status-basic","version":1,"published_at":"2026-11-23T14:00:00Z","definition":{"name":null,"request_type":"claim-status","required_inputs":[],"optional_inputs":[],"follow_up":null,"fields":[]}}"#;
    let mut bytes = vec![1u8];
    bytes.extend_from_slice(empty);
    app.state
        .store
        .corrupt_schema_version_for_tests("claim-status-basic", 1, &bytes)
        .unwrap();
    let (status, body) =
        status_and_json(app.get("/v1/schemas/claim-status-basic", &token).await).await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (500, "INTERNAL_ERROR")
    );
}
