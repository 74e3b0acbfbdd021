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

/// The answer to `GET {path}` on `port` (status line, headers and body), sent with a plain socket from
/// another thread than the server's; `None` while nothing listens.
fn answer_of(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

/// The status line of [`answer_of`].
fn status_of(port: u16, path: &str) -> Option<String> {
    answer_of(port, path).and_then(|a| a.lines().next().map(str::to_owned))
}

#[test]
fn the_listener_answers_while_recovery_runs_and_readyz_says_503_until_it_is_done() {
    let port = crate::helpers::free_port();
    let data_dir = tempfile::tempdir().unwrap();
    let overrides = switchboard::configuration::Overrides {
        bind: Some(format!("127.0.0.1:{port}")),
        data_dir: Some(data_dir.path().to_owned()),
        ..Default::default()
    };
    let settings = switchboard::configuration::from_toml_str(
        &crate::helpers::TestConfig::default().for_server().to_toml(),
        "test config",
        &overrides,
    )
    .unwrap();
    // The hook runs at the end of recovery, before the API opens: it holds recovery there until a probe
    // from another thread has been answered.
    let (answered, release) = std::sync::mpsc::channel();
    let probe = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let seen = loop {
            if let (Some(health), Some(ready)) =
                (status_of(port, "/healthz"), status_of(port, "/readyz"))
            {
                break (health, ready);
            }
            assert!(std::time::Instant::now() < deadline, "nothing listened");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        // The API and every other route that reads stored work wait for recovery.
        let closed: Vec<String> = [
            "/v1/schemas",
            "/console/api/session",
            "/dialers/vapi/events",
        ]
        .iter()
        .map(|path| answer_of(port, path).unwrap())
        .collect();
        answered.send(()).unwrap();
        (seen, closed)
    });
    actix_web::rt::System::new().block_on(async move {
        let app = switchboard::startup::Application::build_with(
            settings,
            move || {
                release
                    .recv_timeout(std::time::Duration::from_secs(20))
                    .expect("the probe was answered during recovery");
            },
            |_| {},
        )
        .await
        .expect("application builds");
        let ((health, ready), closed) = probe.join().unwrap();
        assert_eq!(health, "HTTP/1.1 200 OK");
        assert_eq!(ready, "HTTP/1.1 503 Service Unavailable");
        for answer in closed {
            assert!(
                answer.starts_with("HTTP/1.1 503 Service Unavailable"),
                "{answer}"
            );
            assert!(
                answer.to_ascii_lowercase().contains("retry-after: 1"),
                "{answer}"
            );
            assert!(answer.contains("\"NOT_READY\""), "{answer}");
        }
        assert_eq!(status_of(port, "/readyz").unwrap(), "HTTP/1.1 200 OK");
        app.handle().stop(true).await;
        crate::helpers::keep_open_if_sled(&app.state());
    });
}
