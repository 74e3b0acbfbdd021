use crate::helpers::{spawn_app, status_and_json};

#[actix_web::test]
async fn healthz_answers_ok_without_auth() {
    let app = spawn_app().await;
    let (status, body) =
        status_and_json(app.client.get(app.url("/healthz")).send().await.unwrap()).await;
    assert_eq!((status, body), (200, serde_json::json!({ "status": "ok" })));
}

#[actix_web::test]
async fn readyz_answers_200_once_start_up_work_is_done() {
    let app = spawn_app().await;
    let (status, body) =
        status_and_json(app.client.get(app.url("/readyz")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "ready");
}
