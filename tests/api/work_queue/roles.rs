//! Who may work the queue: `caller` works it and nothing else, `support` reads it, `auditor` never sees it.

use reqwest::Method;
use serde_json::json;

use super::{call, config, path, task_of};
use crate::helpers::spawn_app_with;
use crate::operators::operator;

#[actix_web::test]
async fn each_role_meets_the_queue_as_its_rule_says() {
    let app = spawn_app_with(&config(true)).await;
    let (_, _, task) = task_of(&app, "failure:IVR_FAILURE").await;
    let caller = operator(&app, "carol", "caller").await;
    let support = operator(&app, "sam", "support").await;
    let auditor = operator(&app, "audrey", "auditor").await;

    for token in [&caller, &support] {
        let (status, body) = call(&app, Method::GET, "/admin/v1/tasks", token, None).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = call(&app, Method::GET, &path(&task, ""), token, None).await;
        assert_eq!(status, 200, "{body}");
    }
    for (method, route) in [
        (Method::GET, "/admin/v1/tasks".to_owned()),
        (Method::GET, path(&task, "")),
        (Method::POST, path(&task, "claim")),
    ] {
        let (status, body) = call(&app, method, &route, &auditor, None).await;
        assert_eq!(
            (status, &body["error"]),
            (403, &json!("FORBIDDEN")),
            "{route}"
        );
    }
    for action in ["claim", "release", "complete", "give-up"] {
        let (status, body) = call(
            &app,
            Method::POST,
            &path(&task, action),
            &support,
            Some(
                json!({"errorCode": "OTHER", "answers": {}, "call": {"phoneNumber": "8005550123"}}),
            ),
        )
        .await;
        assert_eq!(
            (status, &body["error"]),
            (403, &json!("FORBIDDEN")),
            "{action}"
        );
    }
    // A caller works tasks and nothing else of the admin API.
    for route in [
        "/admin/v1/accounts",
        "/admin/v1/audit",
        "/admin/v1/clock",
        "/console/api/requests?account=demo&environment=sandbox",
    ] {
        let (status, _) = call(&app, Method::GET, route, &caller, None).await;
        assert_eq!(status, 403, "{route}");
    }
    let (status, body) = call(&app, Method::POST, &path(&task, "claim"), &caller, None).await;
    assert_eq!(status, 200, "{body}");
}
