//! Operators with roles (operator contract section 7): every admin route answers each role as its rule
//! says, a deleted operator's token is refused at once, and bad input is refused with nothing created.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, status_and_json, TestApp};

/// An admin call with `token`.
async fn call(
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
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Creates an operator and answers their token.
pub async fn operator(app: &TestApp, name: &str, role: &str) -> String {
    let (status, body) = status_and_json(
        app.admin(
            Method::POST,
            "/admin/v1/operators",
            Some(json!({ "name": name, "role": role })),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["name"], name);
    assert_eq!(body["role"], role);
    body["token"].as_str().unwrap().to_owned()
}

/// Who may: `A` admin only, `R` admin and support, `U` admin and auditor.
const ROUTES: [(&str, &str, char); 23] = [
    ("GET", "/admin/v1/accounts", 'R'),
    ("GET", "/admin/v1/accounts/demo", 'R'),
    ("PUT", "/admin/v1/accounts/roles-probe", 'A'),
    ("DELETE", "/admin/v1/accounts/roles-probe", 'A'),
    ("POST", "/admin/v1/accounts/demo/credentials", 'A'),
    ("GET", "/admin/v1/schemas/vob-basic", 'R'),
    ("PUT", "/admin/v1/schemas/roles-probe", 'A'),
    ("DELETE", "/admin/v1/schemas/roles-probe", 'A'),
    ("GET", "/admin/v1/payers", 'R'),
    ("PUT", "/admin/v1/payers/Roles%20Probe", 'A'),
    ("GET", "/admin/v1/payers/Aetna/stats", 'R'),
    ("GET", "/admin/v1/clock", 'R'),
    ("POST", "/admin/v1/clock", 'A'),
    ("GET", "/admin/v1/webhook-deliveries?requestId=x", 'R'),
    ("POST", "/admin/v1/webhook-deliveries/x/redeliver", 'A'),
    ("GET", "/admin/v1/orchestration", 'R'),
    ("GET", "/admin/v1/operators", 'A'),
    ("POST", "/admin/v1/operators", 'A'),
    ("DELETE", "/admin/v1/operators/nobody", 'A'),
    ("GET", "/admin/v1/audit", 'U'),
    ("GET", "/admin/v1/audit/verify", 'U'),
    (
        "GET",
        "/console/api/session?account=demo&environment=production",
        'R',
    ),
    (
        "GET",
        "/console/api/requests?account=demo&environment=production",
        'R',
    ),
];

#[actix_web::test]
async fn every_admin_route_answers_each_role_as_its_rule_says() {
    let app = spawn_app().await;
    let support = operator(&app, "sam", "support").await;
    let auditor = operator(&app, "aud", "auditor").await;
    for (method, path, rule) in ROUTES {
        let method: Method = method.parse().unwrap();
        for (role, token) in [("support", &support), ("auditor", &auditor)] {
            let allowed = match rule {
                'A' => false,
                'R' => role == "support",
                _ => role == "auditor",
            };
            // An empty object: a permitted change then fails validation (400), never 403.
            let (status, body) = call(&app, method.clone(), path, token, Some(json!({}))).await;
            if allowed {
                assert!(
                    status != 403 && status != 401,
                    "{role} {method} {path}: {status} {body}"
                );
            } else {
                assert_eq!(status, 403, "{role} {method} {path}: {body}");
                assert_eq!(
                    body,
                    json!({ "error": "FORBIDDEN" }),
                    "{role} {method} {path}"
                );
            }
        }
    }
    // The configured token is the operator admin, allowed everywhere.
    let (status, body) =
        status_and_json(app.admin(Method::GET, "/admin/v1/audit", None).await).await;
    assert_eq!(status, 200, "{body}");
    // A token nobody holds is 401, as before.
    let (status, body) = call(&app, Method::GET, "/admin/v1/accounts", "sbop_nobody", None).await;
    assert_eq!((status, body), (401, json!({ "error": "UNAUTHORIZED" })));

    // Every refusal is audited: by whom, on which route (its pattern, never a path's ids).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let events = loop {
        let (status, page) = status_and_json(
            app.admin(
                Method::GET,
                "/admin/v1/audit?action=admin.access&pageSize=500",
                None,
            )
            .await,
        )
        .await;
        assert_eq!(status, 200, "{page}");
        let events = page["events"].as_array().unwrap().clone();
        let refusals = ROUTES.iter().filter(|(_, _, rule)| *rule != 'R').count()
            + ROUTES.iter().filter(|(_, _, rule)| *rule != 'U').count()
            + 1;
        if events.len() >= refusals || std::time::Instant::now() > deadline {
            assert_eq!(events.len(), refusals, "{page}");
            break events;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    for event in &events {
        assert_eq!(event["outcome"], "denied", "{event}");
        assert_eq!(event["target"]["kind"], "route", "{event}");
        let route = event["target"]["id"].as_str().unwrap();
        assert!(
            route.starts_with("/admin/v1/") || route.starts_with("/console/api/"),
            "{event}"
        );
    }
    let by = |id: &str| events.iter().filter(|e| e["actor"]["id"] == id).count();
    assert!(by("sam") > 0 && by("aud") > 0, "{events:?}");
    let stranger = events
        .iter()
        .find(|e| e["actor"]["id"].as_str().unwrap().starts_with("unknown:"));
    assert!(stranger.is_some(), "{events:?}");
    assert!(!stranger.unwrap().to_string().contains("sbop_nobody"));
}

#[actix_web::test]
async fn operators_are_listed_without_tokens_and_a_deleted_operators_token_is_refused_at_once() {
    let app = spawn_app().await;
    let token = operator(&app, "alice", "support").await;
    assert!(token.starts_with("sbop_") && token.len() > 40);
    let (status, _) = call(&app, Method::GET, "/admin/v1/accounts", &token, None).await;
    assert_eq!(status, 200);

    let (status, listed) =
        status_and_json(app.admin(Method::GET, "/admin/v1/operators", None).await).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = listed["operators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["admin", "alice"]);
    assert_eq!(listed["operators"][1]["role"], "support");
    // Every entry's createdAt is an RFC 3339 instant, the configured admin's included.
    for operator in listed["operators"].as_array().unwrap() {
        let at = operator["createdAt"].as_str().unwrap();
        chrono::DateTime::parse_from_rfc3339(at).unwrap();
    }
    assert!(
        !listed.to_string().contains(&token),
        "tokens are shown once"
    );

    let response = app
        .admin(Method::DELETE, "/admin/v1/operators/alice", None)
        .await;
    assert_eq!(response.status(), 204);
    let (status, _) = call(&app, Method::GET, "/admin/v1/accounts", &token, None).await;
    assert_eq!(status, 401);
    let (status, body) = status_and_json(
        app.admin(Method::DELETE, "/admin/v1/operators/alice", None)
            .await,
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (404, Some("NOT_FOUND")));
}

#[actix_web::test]
async fn bad_operator_input_is_refused_in_the_admin_envelope_with_nothing_created() {
    let app = spawn_app().await;
    operator(&app, "bob", "auditor").await;
    let cases = [
        (
            json!({ "name": "carol", "role": "superuser" }),
            400,
            "INVALID_REQUEST",
            "role",
        ),
        (
            json!({ "name": "bob", "role": "support" }),
            409,
            "CONFLICT",
            "exists already",
        ),
        (
            json!({ "name": "Bob", "role": "support" }),
            409,
            "CONFLICT",
            "exists already",
        ),
        (
            json!({ "name": "BOB", "role": "admin" }),
            409,
            "CONFLICT",
            "exists already",
        ),
        (
            json!({ "name": "admin", "role": "support" }),
            400,
            "INVALID_REQUEST",
            "reserved",
        ),
        (
            json!({ "name": "Admin", "role": "admin" }),
            400,
            "INVALID_REQUEST",
            "reserved",
        ),
        (
            json!({ "name": "system", "role": "admin" }),
            400,
            "INVALID_REQUEST",
            "reserved",
        ),
        (
            json!({ "name": "SYSTEM", "role": "auditor" }),
            400,
            "INVALID_REQUEST",
            "reserved",
        ),
        (
            json!({ "name": "unknown", "role": "support" }),
            400,
            "INVALID_REQUEST",
            "reserved",
        ),
        (
            json!({ "name": "Unknown", "role": "support" }),
            400,
            "INVALID_REQUEST",
            "reserved",
        ),
        (
            json!({ "name": "no spaces", "role": "support" }),
            400,
            "INVALID_REQUEST",
            "name",
        ),
        (json!({ "name": "dave" }), 400, "INVALID_REQUEST", "role"),
        (
            json!({ "name": "erin", "role": "support", "extra": 1 }),
            400,
            "INVALID_REQUEST",
            "extra",
        ),
    ];
    for (body, status, code, mentions) in cases {
        let (got, answer) = status_and_json(
            app.admin(Method::POST, "/admin/v1/operators", Some(body.clone()))
                .await,
        )
        .await;
        assert_eq!(got, status, "{body} -> {answer}");
        assert_eq!(answer["error"], code, "{body} -> {answer}");
        assert!(
            answer["message"].as_str().unwrap().contains(mentions),
            "{body} -> {answer}"
        );
    }
    let (_, listed) =
        status_and_json(app.admin(Method::GET, "/admin/v1/operators", None).await).await;
    assert_eq!(listed["operators"].as_array().unwrap().len(), 2, "{listed}");
    let (status, body) = status_and_json(
        app.admin(Method::DELETE, "/admin/v1/operators/admin", None)
            .await,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("INVALID_REQUEST"))
    );
}

#[actix_web::test]
async fn names_differing_only_in_case_created_at_once_give_one_operator() {
    let app = spawn_app().await;
    let names = ["carol", "Carol", "CAROL", "cArOl"];
    let answers = futures::future::join_all(names.iter().map(|name| {
        app.admin(
            Method::POST,
            "/admin/v1/operators",
            Some(json!({ "name": name, "role": "support" })),
        )
    }))
    .await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status().as_u16()).collect();
    statuses.sort();
    assert_eq!(statuses, [201, 409, 409, 409]);
    let (_, listed) =
        status_and_json(app.admin(Method::GET, "/admin/v1/operators", None).await).await;
    assert_eq!(listed["operators"].as_array().unwrap().len(), 2, "{listed}");
}
