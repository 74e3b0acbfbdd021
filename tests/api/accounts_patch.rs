//! `PATCH /admin/v1/accounts/{id}`: the given fields change, every other one keeps its stored value
//! (issued credentials included), and a body `PUT` would refuse is refused the same way, with nothing
//! changed.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, status_and_json, TestApp, LIVE_KEY, LIVE_SECRET};

async fn patch(app: &TestApp, id: &str, body: Value) -> (u16, Value) {
    status_and_json(
        app.admin(
            Method::PATCH,
            &format!("/admin/v1/accounts/{id}"),
            Some(body),
        )
        .await,
    )
    .await
}

async fn stored(app: &TestApp) -> Value {
    status_and_json(
        app.admin(Method::GET, "/admin/v1/accounts/demo", None)
            .await,
    )
    .await
    .1
}

#[actix_web::test]
async fn a_patch_changes_only_the_given_fields_and_keeps_the_issued_credentials() {
    let app = spawn_app().await;
    let before = stored(&app).await;

    let (status, after) = patch(
        &app,
        "demo",
        json!({ "daily_call_capacity": 9, "name": "Renamed" }),
    )
    .await;

    assert_eq!(status, 200, "{after}");
    let mut expected = before.clone();
    expected["daily_call_capacity"] = json!(9);
    expected["name"] = json!("Renamed");
    assert_eq!(after, expected);
    assert_eq!(stored(&app).await, expected);
    app.api.token(LIVE_KEY, LIVE_SECRET).await;
}

#[actix_web::test]
async fn a_patch_that_put_would_refuse_is_refused_with_nothing_changed() {
    let app = spawn_app().await;
    let before = stored(&app).await;
    let rows = [
        (
            json!({ "daily_call_capacity": "many" }),
            "daily_call_capacity",
            "a field of the wrong type",
        ),
        (
            json!({ "daily_call_capacity": null }),
            "daily_call_capacity",
            "a required field cleared",
        ),
        (json!({ "colour": "blue" }), "colour", "an unknown field"),
        (
            json!({ "schemas": ["no-such-schema"] }),
            "schemas[0]",
            "an unknown schema",
        ),
        (
            json!({ "features": ["teleportation"] }),
            "features",
            "an unknown feature",
        ),
        (
            json!({ "timezone": "Mars/Olympus" }),
            "timezone",
            "an unknown time zone",
        ),
        (
            json!({ "id": "another" }),
            "id",
            "a body id that is not the path's",
        ),
        (
            json!(["daily_call_capacity"]),
            "",
            "a body that is not an object",
        ),
    ];
    for (body, key, description) in rows {
        let (status, answer) = patch(&app, "demo", body).await;
        assert_eq!(status, 400, "{description}: {answer}");
        assert_eq!(
            answer["error"], "INVALID_REQUEST",
            "{description}: {answer}"
        );
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(key), "{description}: {message}");
    }
    assert_eq!(stored(&app).await, before, "nothing changed");
}

#[actix_web::test]
async fn a_patch_of_a_missing_account_is_404_and_creates_nothing() {
    let app = spawn_app().await;

    let (status, answer) = patch(&app, "nobody", json!({ "daily_call_capacity": 1 })).await;

    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"], "ACCOUNT_NOT_FOUND", "{answer}");
    let (status, _) = status_and_json(
        app.admin(Method::GET, "/admin/v1/accounts/nobody", None)
            .await,
    )
    .await;
    assert_eq!(status, 404);
}

#[actix_web::test]
async fn only_an_admin_may_patch_an_account() {
    let app = spawn_app().await;
    for role in ["support", "auditor"] {
        let token = crate::operators::operator(&app, &format!("{role}-patcher"), role).await;
        let response = app
            .client
            .patch(app.url("/admin/v1/accounts/demo"))
            .bearer_auth(&token)
            .json(&json!({ "daily_call_capacity": 1 }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 403, "{role}");
    }
    let (status, body) =
        status_and_json(app.admin(Method::GET, "/admin/v1/audit", None).await).await;
    assert_eq!(status, 200, "{body}");
}
