//! The admin API's document (`GET /admin/v1/openapi.json`): served to operators only, its roles are the
//! ones the server enforces, and real answers of every admin operation validate against it.

use reqwest::Method;
use serde_json::{json, Value};

use super::{deref, operations, response_schema, Schemas};
use crate::helpers::{on_postgres, spawn_app, TestApp, ADMIN_TOKEN};
use crate::operators::operator;

const DOCUMENT: &str = "/admin/v1/openapi.json";

async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = app.client.request(method, app.url(path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn fetch_admin_document(app: &TestApp, token: &str) -> Value {
    let (status, document) = call(app, Method::GET, DOCUMENT, Some(token), None).await;
    assert_eq!(status, 200, "{document}");
    document
}

/// A documented path with every `{parameter}` replaced by `x`.
fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => inside = true,
            '}' => {
                inside = false;
                out.push('x');
            }
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

#[actix_web::test]
async fn the_admin_document_is_served_to_every_operator_and_its_roles_are_the_ones_enforced() {
    let app = spawn_app().await;
    let client_token = app.live_token().await;
    for token in [None, Some(client_token.as_str()), Some("sbop_nobody")] {
        let (status, body) = call(&app, Method::GET, DOCUMENT, token, None).await;
        assert_eq!(
            (status, body),
            (401, json!({ "error": "UNAUTHORIZED" })),
            "{token:?}"
        );
    }
    let support = operator(&app, "sam", "support").await;
    let auditor = operator(&app, "aud", "auditor").await;
    let document = fetch_admin_document(&app, ADMIN_TOKEN).await;
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1."));
    for token in [&support, &auditor] {
        assert_eq!(fetch_admin_document(&app, token).await, document);
    }
    // The client API's document holds none of it.
    let client = super::fetch_document(&app).await;
    assert!(client["paths"]
        .as_object()
        .unwrap()
        .keys()
        .all(|p| !p.starts_with("/admin")));

    let documented = operations(&document);
    assert!(documented.len() >= 23, "{} operations", documented.len());
    for (path, method, operation) in documented {
        let roles: Vec<&str> = operation["x-roles"]
            .as_array()
            .unwrap_or_else(|| panic!("{method} {path} names its roles"))
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(roles.contains(&"admin"), "{method} {path}: {roles:?}");
        let description = operation["description"].as_str().unwrap();
        assert!(
            description.ends_with(&format!("Roles: {}.", roles.join(", "))),
            "{description}"
        );
        if path.contains("/faults/") {
            continue;
        }
        // An empty object: a permitted change then fails validation or finds nothing, never 403.
        for (role, token) in [("support", &support), ("auditor", &auditor)] {
            let target = concrete(&path);
            let (status, body) =
                call(&app, method.clone(), &target, Some(token), Some(&json!({}))).await;
            if roles.contains(&role) {
                assert!(
                    status != 403 && status != 401,
                    "{role} {method} {path}: {status} {body}"
                );
            } else {
                assert_eq!(
                    (status, body),
                    (403, json!({ "error": "FORBIDDEN" })),
                    "{role} {method} {path}"
                );
            }
        }
    }
}

struct Checker<'a> {
    app: &'a TestApp,
    document: Value,
    schemas: Schemas,
    checked: Vec<(String, Method)>,
}

impl Checker<'_> {
    /// Calls `concrete` with the admin token, expects `status`, and validates the answer against what
    /// the document says of `path`'s operation for that status.
    async fn expect(
        &mut self,
        method: Method,
        path: &str,
        concrete: &str,
        body: Option<Value>,
        status: u16,
    ) -> Value {
        let (got, answer) = call(
            self.app,
            method.clone(),
            concrete,
            Some(ADMIN_TOKEN),
            body.as_ref(),
        )
        .await;
        assert_eq!(got, status, "{method} {concrete}: {answer}");
        self.validate(&method, path, status, &answer);
        self.checked.push((path.to_owned(), method));
        answer
    }

    fn validate(&self, method: &Method, path: &str, status: u16, answer: &Value) {
        let operation = &self.document["paths"][path][method.as_str().to_lowercase()];
        assert!(operation.is_object(), "{method} {path} is documented");
        match response_schema(&self.document, operation, status) {
            Some(schema) => {
                self.schemas
                    .assert_valid(&schema, answer, &format!("{status} of {method} {path}"))
            }
            None => assert!(answer.is_null(), "{method} {path}: {status} has no body"),
        }
    }
}

#[actix_web::test]
async fn real_admin_answers_validate_against_the_admin_document() {
    let app = spawn_app().await;
    let document = fetch_admin_document(&app, ADMIN_TOKEN).await;
    let mut check = Checker {
        app: &app,
        schemas: Schemas::of(&document),
        document: document.clone(),
        checked: Vec::new(),
    };
    use Method as M;
    let account = "/admin/v1/accounts/{id}";
    check
        .expect(
            M::GET,
            "/admin/v1/accounts",
            "/admin/v1/accounts",
            None,
            200,
        )
        .await;
    check
        .expect(M::GET, account, "/admin/v1/accounts/demo", None, 200)
        .await;
    check
        .expect(M::GET, account, "/admin/v1/accounts/nobody", None, 404)
        .await;
    let probe = json!({
        "daily_call_capacity": 5,
        "webhook_url": "https://hooks.example.com/switchboard",
        "webhook_secret": "whsec_probe",
        "features": ["payer_phone_lookup"],
        "schemas": ["vob-basic"],
        "phone_book": [{ "payer": "Aetna", "phone": "8005550142" }],
        "retention_days": 30,
    });
    let at = "/admin/v1/accounts/probe";
    check
        .expect(M::PUT, account, at, Some(probe.clone()), 201)
        .await;
    check.expect(M::PUT, account, at, Some(probe), 200).await;
    check
        .expect(
            M::PUT,
            account,
            at,
            Some(json!({ "daily_call_capacity": "x" })),
            400,
        )
        .await;
    check
        .expect(
            M::PATCH,
            account,
            at,
            Some(json!({ "daily_call_capacity": 9 })),
            200,
        )
        .await;
    let credentials = "/admin/v1/accounts/{id}/credentials";
    check
        .expect(
            M::POST,
            credentials,
            "/admin/v1/accounts/probe/credentials",
            Some(json!({ "environment": "sandbox" })),
            201,
        )
        .await;
    let issued = check.expect(M::GET, account, at, None, 200).await;
    assert_eq!(
        issued["credentials"].as_array().unwrap().len(),
        1,
        "{issued}"
    );
    check.expect(M::DELETE, account, at, None, 204).await;

    let schema = "/admin/v1/schemas/{id}";
    check
        .expect(M::GET, schema, "/admin/v1/schemas/vob-basic", None, 200)
        .await;
    let spec = json!({
        "name": "Probe",
        "request_type": "claim_status",
        "required_inputs": ["memberId"],
        "fields": [{ "name": "active", "label": "Active", "description": "Is the plan active?",
                     "type": "boolean", "required": true }],
    });
    let at = "/admin/v1/schemas/probe-schema";
    check
        .expect(M::PUT, schema, at, Some(spec.clone()), 201)
        .await;
    check.expect(M::PUT, schema, at, Some(spec), 200).await;
    check.expect(M::DELETE, schema, at, None, 200).await;
    check
        .expect(M::GET, schema, "/admin/v1/schemas/nothing", None, 404)
        .await;

    check
        .expect(M::GET, "/admin/v1/payers", "/admin/v1/payers", None, 200)
        .await;
    check
        .expect(
            M::PUT,
            "/admin/v1/payers/{name}",
            "/admin/v1/payers/Probe%20Health",
            Some(json!({ "aliases": ["PH"], "phone": "8005550199", "required_inputs": ["groupNumber"] })),
            200,
        )
        .await;
    let stats = "/admin/v1/payers/{name}/stats";
    check
        .expect(M::GET, stats, "/admin/v1/payers/Aetna/stats", None, 200)
        .await;
    check
        .expect(
            M::GET,
            stats,
            "/admin/v1/payers/Nobody%20Health/stats",
            None,
            404,
        )
        .await;

    let clock = "/admin/v1/clock";
    check.expect(M::GET, clock, clock, None, 200).await;
    check
        .expect(
            M::POST,
            clock,
            clock,
            Some(json!({ "advanceSeconds": 1 })),
            200,
        )
        .await;
    check
        .expect(M::POST, clock, clock, Some(json!({})), 400)
        .await;

    let deliveries = "/admin/v1/webhook-deliveries";
    check
        .expect(
            M::GET,
            deliveries,
            &format!("{deliveries}?requestId=x"),
            None,
            200,
        )
        .await;
    check
        .expect(M::GET, deliveries, deliveries, None, 400)
        .await;
    check
        .expect(
            M::POST,
            "/admin/v1/webhook-deliveries/{requestId}/redeliver",
            "/admin/v1/webhook-deliveries/x/redeliver",
            None,
            404,
        )
        .await;
    check
        .expect(
            M::GET,
            "/admin/v1/orchestration",
            "/admin/v1/orchestration",
            None,
            200,
        )
        .await;

    let operators = "/admin/v1/operators";
    let new = json!({ "name": "olga", "role": "support" });
    check
        .expect(M::POST, operators, operators, Some(new.clone()), 201)
        .await;
    check
        .expect(M::POST, operators, operators, Some(new), 409)
        .await;
    check.expect(M::GET, operators, operators, None, 200).await;
    let named = "/admin/v1/operators/{name}";
    check
        .expect(M::DELETE, named, "/admin/v1/operators/olga", None, 204)
        .await;
    check
        .expect(M::DELETE, named, "/admin/v1/operators/olga", None, 404)
        .await;

    let backups = tempfile::tempdir().unwrap();
    let target = backups.path().join("one");
    let body = json!({ "path": target.display().to_string() });
    // On PostgreSQL the database is backed up with its own tools: the call is refused, as documented.
    let first = if on_postgres() { 409 } else { 200 };
    check
        .expect(
            M::POST,
            "/admin/v1/backups",
            "/admin/v1/backups",
            Some(body.clone()),
            first,
        )
        .await;
    check
        .expect(
            M::POST,
            "/admin/v1/backups",
            "/admin/v1/backups",
            Some(body),
            409,
        )
        .await;
    check
        .expect(
            M::DELETE,
            "/admin/v1/requests/{requestId}",
            "/admin/v1/requests/x",
            None,
            404,
        )
        .await;

    let audit = "/admin/v1/audit";
    let page = check
        .expect(M::GET, audit, &format!("{audit}?pageSize=3"), None, 200)
        .await;
    assert!(page["nextPageToken"].is_string(), "{page}");
    check
        .expect(M::GET, audit, &format!("{audit}?pageSize=1001"), None, 400)
        .await;
    check
        .expect(
            M::GET,
            "/admin/v1/audit/verify",
            "/admin/v1/audit/verify",
            None,
            200,
        )
        .await;
    let checkpoint = check
        .expect(
            M::GET,
            "/admin/v1/audit/checkpoint",
            "/admin/v1/audit/checkpoint",
            None,
            200,
        )
        .await;
    let verified = check
        .expect(
            M::POST,
            "/admin/v1/audit/verify",
            "/admin/v1/audit/verify",
            Some(json!({ "checkpoints": [checkpoint.clone()] })),
            200,
        )
        .await;
    assert_eq!(verified["ok"], true, "{verified}");
    let mut forged = checkpoint;
    forged["mac"] = json!("00".repeat(32));
    check
        .expect(
            M::POST,
            "/admin/v1/audit/verify",
            "/admin/v1/audit/verify",
            Some(json!({ "checkpoints": [forged] })),
            400,
        )
        .await;
    check
        .expect(
            M::POST,
            "/admin/v1/faults/actor-panic/{actor}",
            "/admin/v1/faults/actor-panic/nobody",
            None,
            404,
        )
        .await;

    let tasks = "/admin/v1/tasks";
    check.expect(M::GET, tasks, tasks, None, 200).await;
    check
        .expect(M::GET, tasks, &format!("{tasks}?state=lost"), None, 400)
        .await;
    check
        .expect(
            M::GET,
            "/admin/v1/tasks/{taskId}",
            "/admin/v1/tasks/x",
            None,
            404,
        )
        .await;
    let complete = json!({ "answers": {}, "call": { "phoneNumber": "8005550123" } });
    let give_up = json!({ "errorCode": "PAYER_REFUSAL" });
    for (action, body) in [
        ("claim", None),
        ("release", None),
        ("complete", Some(complete)),
        ("give-up", Some(give_up)),
    ] {
        check
            .expect(
                M::POST,
                &format!("/admin/v1/tasks/{{taskId}}/{action}"),
                &format!("/admin/v1/tasks/x/{action}"),
                body,
                404,
            )
            .await;
    }

    // The shared refusals.
    let (status, body) = call(&app, M::GET, "/admin/v1/accounts", None, None).await;
    check.validate(&M::GET, "/admin/v1/accounts", status, &body);
    let auditor = operator(&app, "aud", "auditor").await;
    let (status, body) = call(&app, M::GET, "/admin/v1/payers", Some(&auditor), None).await;
    assert_eq!(status, 403);
    check.validate(&M::GET, "/admin/v1/payers", status, &body);

    // Every documented operation was called (but the handler panic, whose answer is a plain 500).
    for (path, method, operation) in operations(&document) {
        if path.ends_with("/handler-panic") {
            let shared = deref(&document, &operation["responses"]["500"]);
            assert!(shared.is_object());
            continue;
        }
        assert!(
            check.checked.contains(&(path.clone(), method.clone())),
            "{method} {path} was not checked"
        );
    }
}
