//! The binary with its whole output captured, and the client calls the PHI tests make on it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{binary, client, status_and_json, BinaryServer};

/// Every level of Switchboard's crates and of the HTTP stack, everything else at debug. sled's own debug
/// output is left out only because it slows the server down; its messages are about pages, not records.
const LOG_FILTER: &str = "debug,switchboard=trace,switchboard_actors=trace,\
                          switchboard_storage=trace,actix_web=trace,actix_http=trace,reqwest=trace,\
                          hyper=trace,hyper_util=trace,sled=info";

/// How the server writes its log lines (`SWITCHBOARD_LOG_FORMAT`).
#[derive(Clone, Copy, Debug)]
pub enum LogFormat {
    Text,
    Json,
}

/// The binary with stdout and stderr captured whole, from the first line to the exit.
pub struct LoggedServer {
    server: BinaryServer,
    log: Arc<Mutex<String>>,
    readers: Vec<JoinHandle<()>>,
}

impl LoggedServer {
    pub async fn start(config: &Path, data_dir: &Path, format: LogFormat) -> LoggedServer {
        let mut command = Command::new(binary());
        command
            .args(["serve", "--config"])
            .arg(config)
            .env("SWITCHBOARD_BIND", "127.0.0.1:0")
            .env("SWITCHBOARD_DATA_DIR", data_dir)
            .env("RUST_LOG", LOG_FILTER)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match format {
            LogFormat::Text => command.env_remove("SWITCHBOARD_LOG_FORMAT"),
            LogFormat::Json => command.env("SWITCHBOARD_LOG_FORMAT", "json"),
        };
        let mut child = command.spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = child.stderr.take().unwrap();
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let log = Arc::new(Mutex::new(first.clone()));
        let streams = [Box::new(stdout) as Box<dyn Read + Send>, Box::new(stderr)];
        let readers = streams
            .into_iter()
            .map(|stream| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    for line in BufReader::new(stream).lines().map_while(Result::ok) {
                        let mut log = log.lock().unwrap();
                        log.push_str(&line);
                        log.push('\n');
                    }
                })
            })
            .collect();
        let address = first
            .trim()
            .strip_prefix("Switchboard listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .to_owned();
        let server = BinaryServer { child, address };
        server.wait_ready().await;
        LoggedServer {
            server,
            log,
            readers,
        }
    }

    pub fn api(&self) -> Api {
        Api {
            http: client(),
            base: self.server.address.clone(),
        }
    }

    /// SIGTERM, a clean exit, and everything the server wrote until then.
    pub fn stop(self) -> String {
        assert_eq!(self.server.terminate(), Some(0), "a graceful stop");
        // The readers end when the pipes close, so nothing written before the exit is missed.
        for reader in self.readers {
            reader.join().unwrap();
        }
        let log = self.log.lock().unwrap();
        log.clone()
    }
}

/// Client calls on the server, answering status and body.
pub struct Api {
    http: reqwest::Client,
    base: String,
}

impl Api {
    pub async fn auth(&self, key: &str, secret: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}/v1/auth", self.base))
            .header("Switchboard-API-Key", key)
            .header("Switchboard-API-Secret", secret)
            .send()
            .await
            .unwrap();
        status_and_json(response).await
    }

    pub async fn token(&self, key: &str, secret: &str) -> String {
        let (status, body) = self.auth(key, secret).await;
        assert_eq!(status, 200, "{body}");
        body["token"].as_str().unwrap().to_owned()
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        status_and_json(request.send().await.unwrap()).await
    }

    /// GET of a body that need not be JSON (metrics, recordings).
    pub async fn text(&self, path: &str, token: &str) -> (u16, String) {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A POST of a body that need not be valid JSON.
    pub async fn raw_post(&self, token: &str, path: &str, body: String) -> (u16, String) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    pub async fn post(&self, token: &str, body: &Value) -> (u16, Value) {
        self.send(Method::POST, "/v1/requests", token, Some(body))
            .await
    }

    pub async fn create(&self, token: &str, item: &Value) -> String {
        let (status, body) = self.post(token, item).await;
        assert_eq!(status, 200, "{body}");
        body["requestId"].as_str().unwrap().to_owned()
    }

    /// Polls the single read until the request leaves PROCESSING (at most 30 s).
    pub async fn wait_terminal(&self, token: &str, id: &str) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let path = format!("/v1/requests/{id}");
            let (status, body) = self.send(Method::GET, &path, token, None).await;
            assert_eq!(status, 200, "{body}");
            if body["state"] != "PROCESSING" {
                return body;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "request {id} not terminal: {body}"
            );
            actix_web::rt::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
