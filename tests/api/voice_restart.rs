//! Crash safety of real calls, with the built binary and `kill -9`: a restart re-attaches to the live
//! platform call (or finds the one whose create answer was lost) and never places a second call; and a
//! create that never left the machine is told apart in the log from one whose answer was lost.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fakes::retell::{FakeRetell, Scenario};
use crate::helpers::{create_vob, write_config, BinaryServer, TestConfig};
use crate::voice_retell::retell_config;

/// A restarted server resumes its calls first: a longer wait than the default.
const RESTART_WAIT: Duration = Duration::from_secs(30);

fn config(dir: &Path, fake: &FakeRetell) -> std::path::PathBuf {
    let mut config = TestConfig::default();
    retell_config(&mut config, fake);
    write_config(dir, &config)
}

#[actix_web::test]
async fn kill_9_during_a_live_call_reattaches_without_a_second_create() {
    let fake = FakeRetell::start().await;
    fake.hold_calls(true);
    fake.force(&[Scenario::Answered]);
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = config(config_dir.path(), &fake);
    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    let token = server.live_token().await;
    let id = create_vob(&server, &token).await;
    let created = fake.wait_creates(1).await;
    crate::voice_retell::wait_platform_call(&fake, &created[0]).await;
    // The platform's id is stored before anything waits on it; give the flush a moment, then crash.
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    server.kill_hard();

    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    fake.release_calls();
    let done = server.wait_terminal_within(&token, &id, RESTART_WAIT).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(fake.creates().len(), 1, "the restart placed a second call");
    assert_eq!(server.terminate(), Some(0));
}

#[actix_web::test]
async fn kill_9_before_the_create_answer_finds_the_call_instead_of_placing_another() {
    let fake = FakeRetell::start().await;
    fake.hold_calls(true);
    fake.delay_create_answers(Duration::from_secs(5));
    fake.force(&[Scenario::Answered]);
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = config(config_dir.path(), &fake);
    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    let token = server.live_token().await;
    let id = create_vob(&server, &token).await;
    // The call exists at Retell, but Switchboard has not heard its id yet.
    fake.wait_creates(1).await;
    server.kill_hard();
    fake.delay_create_answers(Duration::ZERO);

    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    fake.release_calls();
    let done = server.wait_terminal_within(&token, &id, RESTART_WAIT).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(fake.creates().len(), 1, "the restart placed a second call");
    assert_eq!(server.terminate(), Some(0));
}

const AGENT_SECRET: &str = "agent-shared-secret";

/// A voice agent that accepts every job and keeps it.
async fn start_agent(jobs: std::sync::Arc<std::sync::Mutex<Vec<Value>>>) -> String {
    use actix_web::{web, App, HttpResponse, HttpServer};
    let server = HttpServer::new(move || {
        let jobs = std::sync::Arc::clone(&jobs);
        App::new().route(
            "/calls",
            web::post().to(move |body: web::Json<Value>| {
                let jobs = std::sync::Arc::clone(&jobs);
                async move {
                    jobs.lock().unwrap().push(body.into_inner());
                    HttpResponse::Accepted().finish()
                }
            }),
        )
    })
    .workers(1)
    .bind("127.0.0.1:0")
    .unwrap();
    let url = format!("http://{}/calls", server.addrs()[0]);
    actix_web::rt::spawn(server.run());
    url
}

#[actix_web::test]
async fn an_accepted_http_job_is_not_posted_again_after_kill_9_and_its_outcome_still_lands() {
    use hmac::{Hmac, Mac};
    let jobs = std::sync::Arc::default();
    let agent_url = start_agent(std::sync::Arc::clone(&jobs)).await;
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("dialer.kind", "http")
        .set("dialer.url", agent_url.as_str())
        .set("dialer.secret", AGENT_SECRET)
        .features(&[]);
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(config_dir.path(), &config);
    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    let token = server.live_token().await;
    let id = create_vob(&server, &token).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while jobs.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "no job reached the agent");
        actix_web::rt::time::sleep(Duration::from_millis(25)).await;
    }
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    server.kill_hard();

    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    actix_web::rt::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        jobs.lock().unwrap().len(),
        1,
        "the accepted job was posted again"
    );

    let job = jobs.lock().unwrap()[0].clone();
    let required: serde_json::Map<String, Value> = job["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["required"] == true)
        .map(|f| (f["name"].as_str().unwrap().to_owned(), json!("true")))
        .collect();
    // Signed for its call, now: an outcome names both (docs/channels.md).
    let outcome = json!({
        "callId": job["callId"], "timestamp": chrono::Utc::now().timestamp(),
        "disposition": "completed", "durationSeconds": 60, "captured": required,
    })
    .to_string();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(AGENT_SECRET.as_bytes()).unwrap();
    mac.update(outcome.as_bytes());
    let response = server
        .client
        .post(server.url(&format!(
            "/agent/v1/calls/{}/outcome",
            job["callId"].as_str().unwrap()
        )))
        .header("Content-Type", "application/json")
        .header(
            "X-Switchboard-Signature",
            hex::encode(mac.finalize().into_bytes()),
        )
        .body(outcome)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let done = server.wait_terminal_within(&token, &id, RESTART_WAIT).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(jobs.lock().unwrap().len(), 1);
    assert_eq!(server.terminate(), Some(0));
}

#[actix_web::test]
async fn a_create_that_never_left_the_machine_is_logged_as_not_sent_not_as_a_lost_answer() {
    use crate::fakes::retell::{AGENT_ID, API_KEY, FROM_NUMBER};
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nobody = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("dialer.kind", "retell")
        .set("dialer.retell.api_key", API_KEY)
        .set("dialer.retell.base_url", nobody.as_str())
        .set("dialer.retell.agent_id", AGENT_ID)
        .set("dialer.retell.from_number", FROM_NUMBER);
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = write_config(config_dir.path(), &config);
    let (server, log) = BinaryServer::start_logged(&config, data_dir.path(), &[]);
    server.wait_ready().await;
    let token = server.live_token().await;
    let id = create_vob(&server, &token).await;
    // Three creates, none sent, then the call fails: the request ends within seconds.
    let done = server.wait_terminal_within(&token, &id, RESTART_WAIT).await;
    assert_eq!(
        done["error"]["errorMessage"], "The voice platform could not be reached",
        "{done}"
    );
    server.kill_hard();
    let log = log.join().unwrap();
    assert!(!log.contains("answer lost"), "{log}");
    let not_sent = log
        .lines()
        .find(|line| line.contains("did not reach the platform"))
        .unwrap_or_else(|| panic!("no line for the create that was not sent: {log}"));
    assert!(
        not_sent.contains("onnection refused"),
        "the cause: {not_sent}"
    );
}
