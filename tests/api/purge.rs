//! Purge and retention (operator contract section 7): a purged request is gone for clients, its neighbours
//! are untouched, and the sealed bytes that held it (on sled still on disk in its files) no longer open
//! even with the master key. Retention purges what has been terminal long enough, as the system.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};
use switchboard_storage::RequestId;

use crate::helpers::{
    on_postgres, open_store, spawn_app_with, status_and_json, write_config, Api, BinaryServer,
    TestApp, TestConfig, ADMIN_TOKEN, SANDBOX_KEY, SANDBOX_SECRET,
};
use crate::sealing::markers::Markers;
use crate::sealing::scan::files_under;

/// Any call with a bearer token: status and JSON body (`null` for a body that is not JSON, such as a 204's).
async fn call(
    api: &Api,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = api.client.request(method, api.url(path)).bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Whether `needle` appears anywhere in the files under `dir`.
fn on_disk(dir: &Path, needle: &[u8]) -> bool {
    files_under(dir).iter().any(|f| {
        std::fs::read(f)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
    })
}

#[actix_web::test]
async fn a_purged_request_is_gone_for_clients_and_its_superseded_bytes_no_longer_open() {
    let (data, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut config = TestConfig::default();
    config.dispatching();
    let config = write_config(work.path(), &config);
    let server = BinaryServer::start_ready(&config, data.path()).await;
    let base = server.api.clone();
    let token = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let (alone, kept) = (Markers::new(), Markers::new());
    // A request alone in its batch, one in a batch of three, and neighbours created in the same hour.
    let lone = base
        .create_request(&token, &alone.claim(1, Some("success")))
        .await;
    let batch = json!({ "requests": [kept.claim(2, Some("success")), alone.claim(3, Some("success")), kept.claim(4, Some("redial"))] });
    let (status, created) = base.post_requests(&token, &batch).await;
    assert_eq!(status, 200, "{created}");
    let members: Vec<String> = created["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap().to_owned())
        .collect();
    let neighbour = base
        .create_request(&token, &kept.claim(5, Some("success")))
        .await;
    let mut before = Vec::new();
    for id in [&lone, &members[0], &members[1], &members[2], &neighbour] {
        before.push(server.wait_terminal(&token, id).await);
    }
    let lone_link = before[0]["recordingDownloadUrl"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(server.terminate(), Some(0));

    // The sealed bytes that hold the two requests to purge, as an attacker would later find them on disk.
    let held = {
        let store = open_store(&config, data.path());
        let held: Vec<_> = [&lone, &members[1]]
            .into_iter()
            .map(|id| {
                store
                    .sealed_bytes_for_tests(&RequestId::from(id.as_str()))
                    .unwrap()
                    .unwrap()
            })
            .collect();
        for (tree, key, bytes) in &held {
            assert!(
                store.opens_for_tests(tree, key, bytes),
                "they open before the purge"
            );
        }
        store.close().unwrap();
        held
    };

    let server = BinaryServer::start_ready(&config, data.path()).await;
    let token = server.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    for id in [&lone, &members[1]] {
        let (status, body) = call(
            &base_of(&server),
            Method::DELETE,
            &format!("/admin/v1/requests/{id}"),
            ADMIN_TOKEN,
            None,
        )
        .await;
        assert_eq!(status, 204, "{body}");
    }
    let base = base_of(&server);
    // Gone for clients: reads, lists, the recording link, a second purge.
    for id in [&lone, &members[1]] {
        let (status, body) = call(
            &base,
            Method::GET,
            &format!("/v1/requests/{id}"),
            &token,
            None,
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some("REQUEST_NOT_FOUND"))
        );
        let (status, body) = call(
            &base,
            Method::DELETE,
            &format!("/admin/v1/requests/{id}"),
            ADMIN_TOKEN,
            None,
        )
        .await;
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some("REQUEST_NOT_FOUND")),
            "purged twice"
        );
    }
    let (_, listed) = call(
        &base,
        Method::GET,
        "/v1/requests?pageSize=100",
        &token,
        None,
    )
    .await;
    let listed: Vec<&str> = listed["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap())
        .collect();
    assert!(
        !listed.contains(&lone.as_str()) && !listed.contains(&members[1].as_str()),
        "{listed:?}"
    );
    assert_eq!(listed.len(), 3, "{listed:?}");
    let batch_id = before[1]["requestBatchId"].as_str().unwrap();
    let (_, in_batch) = call(
        &base,
        Method::GET,
        &format!("/v1/requests?requestBatchId={batch_id}"),
        &token,
        None,
    )
    .await;
    assert_eq!(
        in_batch["requests"].as_array().unwrap().len(),
        2,
        "{in_batch}"
    );
    let path = lone_link.split_once("/v1/recordings/").unwrap().1;
    let audio = base
        .client
        .get(base.url(&format!("/v1/recordings/{path}")))
        .send()
        .await
        .unwrap();
    assert_eq!(audio.status(), 404, "the recording link is dead");
    // Its neighbours read back exactly as before.
    for (id, was) in [
        (&members[0], &before[1]),
        (&members[2], &before[3]),
        (&neighbour, &before[4]),
    ] {
        let (status, now) = call(
            &base,
            Method::GET,
            &format!("/v1/requests/{id}"),
            &token,
            None,
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(now["results"], was["results"]);
        assert_eq!(now["inputs"], was["inputs"]);
    }
    // Its idempotency key went with it: the same internalId makes a new request.
    let (_, again) = call(
        &base,
        Method::POST,
        "/v1/requests",
        &token,
        Some(alone.claim(1, Some("success"))),
    )
    .await;
    assert_ne!(again["requestId"].as_str().unwrap(), lone);
    // Bad input.
    let (status, body) = call(
        &base,
        Method::DELETE,
        "/admin/v1/requests/no-such-request",
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("REQUEST_NOT_FOUND"))
    );
    assert_eq!(server.terminate(), Some(0));

    // The store itself: the old sealed bytes may still sit in sled's files, but no key of the store opens
    // them any more, master key included; the kept neighbours still open.
    let store = open_store(&config, data.path());
    for (tree, key, bytes) in &held {
        assert!(
            !store.opens_for_tests(tree, key, bytes),
            "purged bytes in {tree} still open"
        );
    }
    if !on_postgres() {
        let found_on_disk = held
            .iter()
            .filter(|(_, _, bytes)| on_disk(data.path(), &bytes[..64.min(bytes.len())]))
            .count();
        eprintln!(
            "superseded sealed values of purged requests still in sled's files: {found_on_disk} of 2"
        );
    }
    for id in [&members[0], &members[2], &neighbour] {
        let (tree, key, bytes) = store
            .sealed_bytes_for_tests(&RequestId::from(id.as_str()))
            .unwrap()
            .unwrap();
        assert!(
            store.opens_for_tests(tree, &key, &bytes),
            "{id} still opens"
        );
    }
}

fn base_of(server: &BinaryServer) -> Api {
    server.api.clone()
}

async fn admin(app: &TestApp, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    status_and_json(app.admin(method, path, body).await).await
}

#[actix_web::test]
async fn retention_purges_as_the_system_what_has_been_terminal_long_enough_and_spares_the_rest() {
    let mut config = TestConfig::default();
    config.dispatching();
    config
        .demo_account()
        .insert("retention_days".into(), 30.into());
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let old = app
        .create_request(&token, &Markers::new().claim(1, Some("success")))
        .await;
    app.wait_terminal(&token, &old).await;
    let (_, account) = admin(&app, Method::GET, "/admin/v1/accounts/demo", None).await;
    assert_eq!(account["retention_days"], 30, "{account}");

    // 29 days on: kept. Then a request still running, and 31 days: the old one goes, the running one stays.
    app.advance_clock(29 * 86_400).await;
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    // Tokens expire; the clock moved a month.
    let token = app.sandbox_token().await;
    let (status, _) = status_and_json(app.get(&format!("/v1/requests/{old}"), &token).await).await;
    assert_eq!(status, 200);
    let stuck = app
        .create_request(&token, &Markers::new().claim(2, Some("stuck")))
        .await;
    app.advance_clock(2 * 86_400).await;
    let token = app.sandbox_token().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _) =
            status_and_json(app.get(&format!("/v1/requests/{old}"), &token).await).await;
        if status == 404 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "retention never purged it"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    let (status, body) =
        status_and_json(app.get(&format!("/v1/requests/{stuck}"), &token).await).await;
    assert_eq!((status, body["state"].as_str()), (200, Some("PROCESSING")));
    let (_, events) = admin(
        &app,
        Method::GET,
        &format!("/admin/v1/audit?action=request.purge&targetId={old}"),
        None,
    )
    .await;
    assert_eq!(
        events["events"][0]["actor"],
        json!({ "id": "system", "kind": "system" }),
        "{events}"
    );
    // A bad retention is refused.
    let mut bad = serde_json::Map::new();
    bad.insert("daily_call_capacity".into(), 10.into());
    bad.insert("retention_days".into(), 0.into());
    let (status, body) = admin(
        &app,
        Method::PUT,
        "/admin/v1/accounts/other",
        Some(Value::Object(bad)),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("INVALID_REQUEST")),
        "{body}"
    );
}
