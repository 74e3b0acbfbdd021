//! The log an operator reads (operator contract section 1), from the built binary's stderr at the default
//! level: one `info` line per HTTP request, JSON lines that stay JSON through a panic, no colour codes off
//! a terminal, and nothing a client does wrong or a starting server says reported as a server problem.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::{
    binary, client, drain_stderr, free_port, skip_on_postgres, write_config, TestConfig,
    ADMIN_TOKEN,
};

/// The message of the line every HTTP request gets.
const HTTP_LINE: &str = "http request answered";

/// The binary on `port` with its stderr captured, logging at the default level in `format`.
struct LoggedBinary {
    child: Child,
    /// Reads stderr while the server runs: a pipe left unread fills (64 KiB) and blocks the server's next
    /// log line, and one panic's backtrace alone can be larger than that.
    stderr: Option<JoinHandle<String>>,
    address: String,
    _config_dir: Option<tempfile::TempDir>,
    _data_dir: Option<tempfile::TempDir>,
}

impl LoggedBinary {
    fn start(format: &str, port: u16) -> LoggedBinary {
        let config_dir = tempfile::tempdir().unwrap();
        let data_dir = tempfile::tempdir().unwrap();
        let config = write_config(config_dir.path(), &TestConfig::default());
        let mut child = command(&config, data_dir.path(), format, port)
            .spawn()
            .unwrap();
        LoggedBinary {
            stderr: Some(drain_stderr(&mut child)),
            child,
            address: format!("http://127.0.0.1:{port}"),
            _config_dir: Some(config_dir),
            _data_dir: Some(data_dir),
        }
    }

    /// The binary on a configuration and data directory the test keeps (for restarts).
    fn start_on(config: &Path, data_dir: &Path, port: u16) -> LoggedBinary {
        let mut child = command(config, data_dir, "json", port).spawn().unwrap();
        LoggedBinary {
            stderr: Some(drain_stderr(&mut child)),
            child,
            address: format!("http://127.0.0.1:{port}"),
            _config_dir: None,
            _data_dir: None,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// Polls `/readyz` until it answers 200 (20 s at most).
    async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = client().get(self.url("/readyz")).send().await;
            if ready.is_ok_and(|r| r.status() == 200) {
                return;
            }
            assert!(Instant::now() < deadline, "the server never became ready");
            actix_web::rt::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// SIGTERM, and every line the server wrote to stderr.
    fn stop(mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert_eq!(self.child.wait().unwrap().code(), Some(0), "{stderr}");
        stderr
    }
}

impl Drop for LoggedBinary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(config: &Path, data_dir: &Path, format: &str, port: u16) -> Command {
    let mut command = Command::new(binary());
    command
        .args(["serve", "--config"])
        .arg(config)
        .env_remove("SWITCHBOARD_MASTER_KEY")
        .env_remove("RUST_LOG")
        .env("RUST_BACKTRACE", "1")
        .env("SWITCHBOARD_LOG_FORMAT", format)
        .env("SWITCHBOARD_BIND", format!("127.0.0.1:{port}"))
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Every stderr line parsed as JSON; fails on the first that is not.
fn json_lines(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|_| panic!("not a JSON line: {line:?}"))
        })
        .collect()
}

/// The raw answer to `request`, sent on a socket of its own.
fn send_raw(port: u16, request: &[u8]) -> String {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[actix_web::test]
async fn every_http_request_gets_one_info_line_with_method_route_status_and_latency() {
    let server = LoggedBinary::start("json", free_port());
    server.wait_ready().await;
    let response = client()
        .get(server.url("/v1/requests/not-a-real-id-7731"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    let lines = json_lines(&server.stop());

    let answered: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == HTTP_LINE)
        .filter(|l| l["span"]["route"] == "/v1/requests/{requestId}")
        .collect();
    assert_eq!(answered.len(), 1, "{lines:#?}");
    let line = answered[0];
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["span"]["method"], "GET", "{line}");
    assert_eq!(line["span"]["status"], 401, "{line}");
    assert!(line["fields"]["latency_ms"].is_f64(), "{line}");
    assert!(
        !lines
            .iter()
            .any(|l| l.to_string().contains("not-a-real-id-7731")),
        "the raw path is not logged"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l["fields"]["message"] == HTTP_LINE)
            .all(|l| l["fields"]["message"] != "request finished"),
        "the HTTP line is not an extraction request's"
    );
}

#[actix_web::test]
async fn with_json_logs_a_panic_is_logged_as_json_and_every_stderr_line_stays_json() {
    let server = LoggedBinary::start("json", free_port());
    server.wait_ready().await;
    let response = client()
        .post(server.url("/admin/v1/faults/handler-panic"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);

    let lines = json_lines(&server.stop());

    let panics: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "a thread panicked")
        .collect();
    assert_eq!(panics.len(), 1, "{lines:#?}");
    assert_eq!(panics[0]["level"], "ERROR");
    // A message written as it stands is logged; one formatted at run time would be withheld.
    assert_eq!(
        panics[0]["fields"]["panic.message"],
        "fault injection: handler panic requested through the admin API"
    );
    assert!(
        panics[0]["fields"]["backtrace"].is_string(),
        "RUST_BACKTRACE=1 puts the backtrace in a field: {}",
        panics[0]
    );
    // The 500 gets its access line at info, as every request does, and a warning of its own.
    let of_the_500 = |message: &str| -> Vec<&Value> {
        lines
            .iter()
            .filter(|l| l["span"]["status"] == 500 && l["fields"]["message"] == message)
            .collect()
    };
    let answered = of_the_500(HTTP_LINE);
    assert_eq!(answered.len(), 1, "{lines:#?}");
    assert_eq!(answered[0]["level"], "INFO");
    let warned = of_the_500("server error answered");
    assert_eq!(warned.len(), 1, "{lines:#?}");
    assert_eq!(warned[0]["level"], "WARN");
    // Frames named with every type argument of an async handler made this one line 400 KB.
    let longest = lines.iter().map(|l| l.to_string().len()).max().unwrap_or(0);
    assert!(longest < 32 * 1024, "a log line of {longest} bytes");
}

#[actix_web::test]
async fn plain_logs_off_a_terminal_carry_no_colour_codes() {
    let server = LoggedBinary::start("text", free_port());
    server.wait_ready().await;
    client().get(server.url("/healthz")).send().await.unwrap();

    let stderr = server.stop();

    assert!(stderr.contains(" INFO "), "{stderr}");
    assert!(stderr.contains(HTTP_LINE), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "colour codes: {stderr:?}");
}

#[actix_web::test]
async fn a_503_from_readyz_while_starting_is_logged_at_info_not_as_a_warning() {
    let port = free_port();
    let server = LoggedBinary::start("json", port);
    // Raw probes from the first moment the port answers: start-up provisions the whole configuration
    // (dozens of payers, each written and flushed) before it declares itself ready.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut not_ready = 0;
    loop {
        let status = std::net::TcpStream::connect(("127.0.0.1", port))
            .ok()
            .map(|_| {
                send_raw(
                    port,
                    b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                )
            });
        match status.as_deref().and_then(|a| a.lines().next()) {
            Some(line) if line.contains(" 200 ") => break,
            Some(line) if line.contains(" 503 ") => not_ready += 1,
            _ => {}
        }
        assert!(Instant::now() < deadline, "never ready");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(not_ready > 0, "no 503 was seen while starting");

    let lines = json_lines(&server.stop());

    let readyz: Vec<&Value> = lines
        .iter()
        .filter(|l| l["span"]["route"] == "/readyz" && l["span"]["status"] == 503)
        .collect();
    assert!(!readyz.is_empty(), "the 503s are logged: {lines:#?}");
    for line in readyz {
        assert_eq!(line["level"], "INFO", "{line}");
    }
}

#[actix_web::test]
async fn a_header_with_a_nul_byte_and_a_malformed_request_are_not_logged_as_errors() {
    let port = free_port();
    let server = LoggedBinary::start("text", port);
    server.wait_ready().await;
    let requests: [(&str, &[u8]); 3] = [
        (
            "a NUL byte in a header",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n\r\n",
        ),
        ("a request line that is not HTTP", b"GARBAGE\r\n\r\n"),
        (
            "a Content-Length that is not a number",
            b"POST /v1/requests HTTP/1.1\r\nHost: x\r\nContent-Length: many\r\n\r\n",
        ),
    ];
    for (what, request) in requests {
        let answer = send_raw(port, request);
        assert!(answer.starts_with("HTTP/1.1 400"), "{what}: {answer}");
    }

    let stderr = server.stop();

    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(
        errors.is_empty(),
        "client mistakes logged as errors: {errors:#?}"
    );
}

#[actix_web::test]
async fn each_start_logs_per_config_entry_whether_it_was_applied_or_kept_as_stored() {
    let config_dir = tempfile::tempdir().unwrap();
    let data_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &TestConfig::default());
    let entries = |lines: &[Value], message: &str| -> Vec<(String, String)> {
        lines
            .iter()
            .filter(|l| l["fields"]["message"] == message && l["level"] == "INFO")
            .map(|l| {
                let kind = l["fields"]["kind"].as_str().unwrap_or_default().to_owned();
                (
                    kind,
                    l["fields"]["id"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    let applied = "config entry applied to the store";
    let kept = "config entry kept as stored: unchanged in the file since it was last applied";

    let server = LoggedBinary::start_on(&config, data_dir.path(), free_port());
    server.wait_ready().await;
    let (status, _) = crate::helpers::status_and_json(
        client()
            .patch(server.url("/admin/v1/accounts/demo"))
            .bearer_auth(ADMIN_TOKEN)
            .json(&json!({ "daily_call_capacity": 3 }))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let first = json_lines(&server.stop());
    let server = LoggedBinary::start_on(&config, data_dir.path(), free_port());
    server.wait_ready().await;
    let capacity = client()
        .get(server.url("/admin/v1/accounts/demo"))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["daily_call_capacity"]
        .clone();
    let second = json_lines(&server.stop());

    let demo = ("account".to_owned(), "demo".to_owned());
    let vob = ("schema".to_owned(), "vob-basic".to_owned());
    assert!(entries(&first, applied).contains(&demo), "{first:#?}");
    assert!(entries(&first, applied).contains(&vob), "{first:#?}");
    assert!(entries(&first, kept).is_empty(), "{first:#?}");
    assert!(entries(&second, kept).contains(&demo), "{second:#?}");
    assert!(entries(&second, kept).contains(&vob), "{second:#?}");
    assert!(entries(&second, applied).is_empty(), "{second:#?}");
    assert_eq!(capacity, 3, "the admin change survives the restart");
    let payers = entries(&second, kept)
        .iter()
        .filter(|(kind, _)| kind == "payer")
        .count();
    assert!(payers > 10, "every payer is logged: {payers}");
}

#[actix_web::test]
async fn with_json_logs_a_start_that_fails_ends_on_a_json_error_line() {
    let holder = LoggedBinary::start("json", free_port());
    holder.wait_ready().await;
    let held = holder._data_dir.as_ref().unwrap().path();
    let config_dir = holder._config_dir.as_ref().unwrap().path();
    let config = config_dir.join("switchboard.toml");
    if !skip_on_postgres(
        "the held data directory's refusal: sled locks it, a second server on PostgreSQL stands by",
    ) {
        let second = command(&config, held, "json", free_port())
            .output()
            .unwrap();
        assert_ne!(second.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&second.stderr);
        let lines = json_lines(&stderr);
        let fatal: Vec<&Value> = lines.iter().filter(|l| l["level"] == "ERROR").collect();
        assert_eq!(fatal.len(), 1, "{stderr}");
        let message = fatal[0]["fields"]["message"].as_str().unwrap();
        assert!(
            message.contains("another Switchboard holds the data directory"),
            "{message}"
        );
        assert!(fatal[0]["timestamp"].is_string(), "{}", fatal[0]);
    }

    // A configuration that cannot be read fails before the log is set up, still as a JSON line.
    let broken = config_dir.join("broken.toml");
    std::fs::write(&broken, "[server\n").unwrap();
    let unreadable = command(&broken, held, "json", free_port())
        .output()
        .unwrap();
    assert_eq!(unreadable.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unreadable.stderr);
    let lines = json_lines(&stderr);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert_eq!(lines[0]["level"], "ERROR");
    holder.stop();
}
