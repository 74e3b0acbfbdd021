//! The audit log (operator contract section 7): one event per exchange, create, read (list entries
//! included), recording download and change, ids only, a hash chain an auditor recomputes outside
//! Switchboard, and paging with filters.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::helpers::{
    create_vob, spawn_app, spawn_app_with, status_and_json, write_config, Api, BinaryServer,
    TestApp, TestConfig,
};
use crate::operators::operator;

/// Every event, paging through the log with the admin token.
async fn all_events(app: &TestApp) -> Vec<Value> {
    let mut events = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let path = match &token {
            Some(t) => format!("/admin/v1/audit?pageSize=7&pageToken={t}"),
            None => "/admin/v1/audit?pageSize=7".to_owned(),
        };
        let (status, page) = status_and_json(app.admin(Method::GET, &path, None).await).await;
        assert_eq!(status, 200, "{page}");
        events.extend(page["events"].as_array().unwrap().iter().cloned());
        match page["nextPageToken"].as_str() {
            Some(next) => token = Some(next.to_owned()),
            None => return events,
        }
    }
}

/// Polls until an event of `action` on `target` shows (reads are written within a second).
async fn wait_for(app: &TestApp, action: &str, target: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let path = format!("/admin/v1/audit?action={action}&targetId={target}");
        let (_, page) = status_and_json(app.admin(Method::GET, &path, None).await).await;
        if let Some(event) = page["events"].as_array().unwrap().first() {
            return event.clone();
        }
        assert!(Instant::now() < deadline, "no {action} on {target}");
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
}

/// JSON with sorted keys and no whitespace: what the chain hashes, written here independently of the
/// server's code.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical(&map[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Recomputes the chain: each hash is SHA-256 of the previous hash's text then the event without `hash`.
fn recompute(events: &[Value]) {
    let mut previous = "0".repeat(64);
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event["seq"], i as u64 + 1, "{event}");
        assert_eq!(event["prevHash"], previous.as_str(), "{event}");
        let mut unhashed = event.clone();
        unhashed.as_object_mut().unwrap().remove("hash");
        let digest = Sha256::digest(format!("{previous}{}", canonical(&unhashed)).as_bytes());
        let hash = hex::encode(digest);
        assert_eq!(event["hash"], hash.as_str(), "{event}");
        previous = hash;
    }
}

#[actix_web::test]
async fn each_kind_of_access_and_change_is_one_event_with_ids_only_and_the_chain_recomputes() {
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    // Exchanges: one refused, one accepted.
    let refused = app
        .auth_with(&[
            ("Switchboard-API-Key", "sk_live_demo_7Qh2m9XcP4"),
            ("Switchboard-API-Secret", "wrong"),
        ])
        .await;
    assert_eq!(refused.status(), 401);
    let stranger = app
        .auth_with(&[
            ("Switchboard-API-Key", "sk_live_nobody_has_this"),
            ("Switchboard-API-Secret", "wrong"),
        ])
        .await;
    assert_eq!(stranger.status(), 401);
    // A known key without its secret names the key's account too.
    let no_secret = app
        .auth_with(&[("Switchboard-API-Key", "sk_live_demo_7Qh2m9XcP4")])
        .await;
    assert_eq!(no_secret.status(), 401);
    // No key at all: refused, and audited with no one to name.
    let keyless = app
        .auth_with(&[("Switchboard-API-Secret", "demo-live-secret-change-me")])
        .await;
    assert_eq!(keyless.status(), 401);
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;
    let done = app.wait_terminal(&token, &id).await;
    let (status, _) = status_and_json(app.get("/v1/requests?pageSize=5", &token).await).await;
    assert_eq!(status, 200);
    // A change by an operator.
    let alice = operator(&app, "alice", "auditor").await;

    let created = wait_for(&app, "request.create", &id).await;
    assert_eq!(created["actor"]["kind"], "api_key");
    assert_eq!(created["outcome"], "ok");
    assert_eq!(created["ip"], "127.0.0.1");
    wait_for(&app, "request.read", &id).await;
    let op = wait_for(&app, "operator.create", "alice").await;
    assert_eq!(op["actor"], json!({ "id": "admin", "kind": "operator" }));
    let exchanges = {
        let (_, page) = status_and_json(
            app.admin(Method::GET, "/admin/v1/audit?action=auth.token", None)
                .await,
        )
        .await;
        page["events"].as_array().unwrap().clone()
    };
    let outcomes: Vec<&str> = exchanges
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert!(
        outcomes.contains(&"denied") && outcomes.contains(&"ok"),
        "{exchanges:?}"
    );
    // Each names the account its key belongs to (the refused secret was for the demo account's key too),
    // or `unknown` for a key of no account.
    let targets: Vec<&Value> = exchanges.iter().map(|e| &e["target"]).collect();
    assert!(
        targets.iter().all(|t| t["kind"] == "account"),
        "{targets:?}"
    );
    let unknown = targets.iter().filter(|t| t["id"] == "unknown").count();
    assert_eq!(unknown, 2, "{targets:?}");
    let nameless = exchanges
        .iter()
        .filter(|e| e["actor"] == json!({ "id": "unknown", "kind": "api_key" }))
        .count();
    assert_eq!(nameless, 1, "the keyless exchange: {exchanges:?}");
    assert_eq!(
        targets.iter().filter(|t| t["id"] == "demo").count(),
        targets.len() - unknown,
        "{targets:?}"
    );

    // One read event per entry of a list, and per single read.
    let reads = {
        let (_, page) = status_and_json(
            app.admin(
                Method::GET,
                &format!("/admin/v1/audit?action=request.read&targetId={id}"),
                None,
            )
            .await,
        )
        .await;
        page["events"].as_array().unwrap().len()
    };
    assert!(reads >= 2, "the polls and the list entry: {reads}");

    // The recording download.
    let link = done["recordingDownloadUrl"]
        .as_str()
        .expect("a simulated call has a recording");
    let path = link.split_once("/v1/recordings/").unwrap().1;
    let audio = app
        .client
        .get(app.url(&format!("/v1/recordings/{path}")))
        .send()
        .await
        .unwrap();
    assert_eq!(audio.status(), 200);
    let call_id = path.split('?').next().unwrap();
    wait_for(&app, "recording.download", call_id).await;

    // The auditor reads the log; that read is itself an event. The chain recomputes outside Switchboard.
    let response = app
        .client
        .get(app.url("/admin/v1/audit/verify"))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    let (status, verified) = status_and_json(response).await;
    assert_eq!(status, 200);
    assert_eq!(verified["ok"], true, "{verified}");
    wait_for(&app, "audit.verify", "chain").await;
    let events = all_events(&app).await;
    assert!(events.len() as u64 >= verified["events"].as_u64().unwrap());
    recompute(&events);
    let text = serde_json::to_string(&events).unwrap();
    for phi in ["W123456789", "Ann", "Lee", "1980-01-02"] {
        assert!(
            !text.contains(&format!("\"{phi}\"")),
            "{phi} in the audit log"
        );
    }
}

#[actix_web::test]
async fn the_log_pages_and_filters_and_refuses_bad_parameters() {
    let app = spawn_app().await;
    for name in ["a1", "a2", "a3"] {
        operator(&app, name, "support").await;
    }
    let (status, page) = status_and_json(
        app.admin(
            Method::GET,
            "/admin/v1/audit?action=operator.create&pageSize=2",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    let targets: Vec<&str> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["target"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["a1", "a2"]);
    let next = page["nextPageToken"].as_str().unwrap();
    let (_, rest) = status_and_json(
        app.admin(
            Method::GET,
            &format!("/admin/v1/audit?action=operator.create&pageSize=2&pageToken={next}"),
            None,
        )
        .await,
    )
    .await;
    assert_eq!(rest["events"][0]["target"]["id"], "a3");
    assert!(rest.get("nextPageToken").is_none(), "{rest}");
    let (_, none) = status_and_json(
        app.admin(Method::GET, "/admin/v1/audit?actor=nobody", None)
            .await,
    )
    .await;
    assert_eq!(none["events"], json!([]));
    let (_, later) = status_and_json(
        app.admin(
            Method::GET,
            "/admin/v1/audit?since=2999-01-01T00:00:00Z",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(later["events"], json!([]));
    let (_, earlier) = status_and_json(
        app.admin(
            Method::GET,
            "/admin/v1/audit?until=2000-01-01T00:00:00Z",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(
        earlier["events"],
        json!([]),
        "until excludes every later event"
    );
    let (_, window) = status_and_json(
        app.admin(
            Method::GET,
            "/admin/v1/audit?since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z&action=operator.create",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(window["events"].as_array().unwrap().len(), 3, "{window}");
    for bad in [
        "pageSize=0",
        "pageSize=1001",
        "pageSize=5000",
        "pageSize=x",
        "since=yesterday",
        "pageToken=forged",
        "color=red",
    ] {
        let (status, body) = status_and_json(
            app.admin(Method::GET, &format!("/admin/v1/audit?{bad}"), None)
                .await,
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("INVALID_REQUEST")),
            "{bad}: {body}"
        );
    }
}

/// The `auth.token` events the log holds, by the admin token.
async fn token_exchanges(api: &Api) -> usize {
    let response = api
        .admin(
            Method::GET,
            "/admin/v1/audit?action=auth.token&pageSize=500",
            None,
        )
        .await;
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body["events"].as_array().unwrap().len()
}

#[actix_web::test]
async fn reads_on_an_idle_server_are_on_disk_within_a_second_even_through_a_kill_9() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(work.path(), &TestConfig::default());
    let server = BinaryServer::start_ready(&config, data.path()).await;
    // Key/secret exchanges are logged as reads: nothing else is written meanwhile, so no flush of the
    // store carries them to the disk.
    for _ in 0..3 {
        server.live_token().await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.kill_hard();

    let restarted = BinaryServer::start_ready(&config, data.path()).await;
    assert_eq!(
        token_exchanges(&restarted).await,
        3,
        "every exchange made a second before the kill is in the log"
    );
    let (status, verified) = status_and_json(
        restarted
            .admin(Method::GET, "/admin/v1/audit/verify", None)
            .await,
    )
    .await;
    assert_eq!(
        (status, verified["ok"].clone()),
        (200, json!(true)),
        "{verified}"
    );
}

#[actix_web::test]
async fn verify_names_the_first_event_that_no_longer_matches_its_hash() {
    let app = spawn_app().await;
    let created = create_vob(&app.api, &app.live_token().await).await;
    let event = wait_for(&app, "request.create", &created).await;
    let (status, verified) =
        status_and_json(app.admin(Method::GET, "/admin/v1/audit/verify", None).await).await;
    assert_eq!(status, 200);
    assert_eq!(verified["ok"], json!(true), "{verified}");

    // The create event's target changed in the store: the chain breaks at that event and no earlier.
    let tampered = app
        .state
        .store
        .tamper_audit_for_tests(&format!("\"{created}\""), "\"someone-else\"")
        .unwrap();
    assert!(tampered, "the create event is stored");
    let (status, verified) =
        status_and_json(app.admin(Method::GET, "/admin/v1/audit/verify", None).await).await;
    assert_eq!(status, 200);
    assert_eq!(
        verified,
        json!({"ok": false, "firstBadSeq": event["seq"]}),
        "the whole answer"
    );
}

#[actix_web::test]
async fn behind_a_trusted_proxy_an_event_carries_the_address_the_proxy_names_and_otherwise_the_peer(
) {
    // The test client is the peer, 127.0.0.1; its header names a client of its own (198.51.100.1, which a
    // client may write) and then the address the "proxy" received the call from.
    for (trusted, expected) in [(Some("127.0.0.1"), "203.0.113.9"), (None, "127.0.0.1")] {
        let mut config = TestConfig::default();
        if let Some(proxy) = trusted {
            config.set("server.trusted_proxies", vec![proxy]);
        }
        let app = spawn_app_with(&config).await;
        let token = app.live_token().await;
        let id = create_vob(&app, &token).await;
        let read = app
            .client
            .get(app.url(&format!("/v1/requests/{id}")))
            .bearer_auth(&token)
            .header("X-Forwarded-For", "198.51.100.1, 203.0.113.9")
            .send()
            .await
            .unwrap();
        assert_eq!(read.status(), 200);
        let event = wait_for(&app, "request.read", &id).await;
        assert_eq!(event["ip"], expected, "trusted {trusted:?}: {event}");
        let created = wait_for(&app, "request.create", &id).await;
        assert_eq!(
            created["ip"], "127.0.0.1",
            "no header on the create: {created}"
        );
    }
}
