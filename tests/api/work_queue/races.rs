//! Durability and races: of two completions of one task exactly one wins, and a completion survives
//! kill -9 of the binary.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use super::{answers_for, call, completion, config, path, sandbox_item};
use crate::helpers::{
    spawn_app_with, write_config, Api, BinaryServer, ADMIN_TOKEN, SANDBOX_KEY, SANDBOX_SECRET,
};

#[actix_web::test]
async fn of_two_completions_raced_exactly_one_wins() {
    race_two_completions(&config(true)).await;
}

#[actix_web::test]
async fn on_postgres_of_two_completions_raced_exactly_one_wins() {
    let mut config = config(true);
    config.set("storage.kind", "postgres").set(
        "storage.url",
        switchboard_storage::fresh_postgres_database(),
    );
    race_two_completions(&config).await;
}

async fn race_two_completions(config: &crate::helpers::TestConfig) {
    let app = spawn_app_with(config).await;
    let (token, id, task) = super::task_of(&app, "failure:IVR_FAILURE").await;
    call(&app, Method::POST, &path(&task, "claim"), ADMIN_TOKEN, None).await;
    let (_, sheet) = call(&app, Method::GET, &path(&task, ""), ADMIN_TOKEN, None).await;
    let body = completion(answers_for(&sheet));
    let route = path(&task, "complete");
    let (first, second) = futures::join!(
        call(&app, Method::POST, &route, ADMIN_TOKEN, Some(body.clone())),
        call(&app, Method::POST, &route, ADMIN_TOKEN, Some(body.clone())),
    );
    let mut statuses = [first.0, second.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{first:?} {second:?}");
    let loser = if first.0 == 409 { first.1 } else { second.1 };
    assert_eq!(loser["error"], "TASK_CLOSED");
    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "SUCCESS");
    let by_person = ended["contributingCalls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("placedBy").is_some())
        .count();
    assert_eq!(by_person, 1, "one person's call: {ended}");
    assert_eq!(super::audit_events(&app, "task.complete").await.len(), 1);
}

#[actix_web::test]
async fn a_completion_survives_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(true);
    config.set("server.bind", "127.0.0.1:0");
    let config_path = write_config(dir.path(), &config);
    let data_dir = dir.path().join("data");
    let server = BinaryServer::start_ready(&config_path, &data_dir).await;
    let api: &Api = &server;
    let token = api.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let id = api
        .create_request(&token, &sandbox_item("failure:IVR_FAILURE"))
        .await;
    let task = wait_task_on(api, &id).await;
    let (status, _) = api_call(api, Method::POST, &path(&task, "claim"), None).await;
    assert_eq!(status, 200);
    let (_, sheet) = api_call(api, Method::GET, &path(&task, ""), None).await;
    let (status, done) = api_call(
        api,
        Method::POST,
        &path(&task, "complete"),
        Some(completion(answers_for(&sheet))),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    server.kill_hard();

    let server = BinaryServer::start_ready(&config_path, &data_dir).await;
    let api: &Api = &server;
    let token = api.token(SANDBOX_KEY, SANDBOX_SECRET).await;
    let ended = api
        .wait_terminal_within(&token, &id, Duration::from_secs(30))
        .await;
    assert_eq!(ended["state"], "SUCCESS", "{ended}");
    let (_, read) = api_call(api, Method::GET, &path(&task, ""), None).await;
    assert_eq!(read["state"], "done");
    let (status, closed) = api_call(api, Method::POST, &path(&task, "claim"), None).await;
    assert_eq!((status, &closed["error"]), (409, &json!("TASK_CLOSED")));
}

async fn api_call(
    api: &Api,
    method: Method,
    route: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut request = api
        .client
        .request(method, api.url(route))
        .bearer_auth(ADMIN_TOKEN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    crate::helpers::status_and_json(request.send().await.unwrap()).await
}

async fn wait_task_on(api: &Api, id: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (_, body) = api_call(api, Method::GET, "/admin/v1/tasks", None).await;
        if let Some(task) = body["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["requestId"] == id)
        {
            return task.clone();
        }
        assert!(std::time::Instant::now() < deadline, "no task: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
