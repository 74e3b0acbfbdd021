//! The one client of a Switchboard under test, in this process ([`super::TestApp`]) or a child process
//! ([`super::BinaryServer`]); both dereference to it. Its reqwest client is [`client`]: no redirects, a
//! bound on each call, and idle connections dropped well inside the server's keep-alive.

use std::time::{Duration, Instant};

use reqwest::{Method, Response};
use serde_json::Value;

use super::{
    client, status_and_json, ADMIN_TOKEN, LIVE_KEY, LIVE_SECRET, SANDBOX_KEY, SANDBOX_SECRET,
};

/// How long [`Api::wait_terminal`] waits for a request to leave `PROCESSING`, and how often it reads it.
pub const WAIT_LIMIT: Duration = Duration::from_secs(20);
const WAIT_STEP: Duration = Duration::from_millis(25);

/// The states a request ends in.
pub const TERMINAL: [&str; 3] = ["SUCCESS", "PARTIAL", "FAILURE"];

/// A Switchboard's base address and the test client that talks to it.
#[derive(Clone, Debug)]
pub struct Api {
    /// `http://127.0.0.1:PORT` (or `https://...`).
    pub address: String,
    pub client: reqwest::Client,
}

impl Api {
    /// A client of the Switchboard at `address`, with the shared test client.
    pub fn at(address: impl Into<String>) -> Api {
        Api::with_client(address, client())
    }

    /// A client of the Switchboard at `address` through `client` (one that trusts a test certificate).
    pub fn with_client(address: impl Into<String>, client: reqwest::Client) -> Api {
        Api {
            address: address.into(),
            client,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// `GET /v1/auth` with whichever headers are given.
    pub async fn auth_with(&self, headers: &[(&str, &str)]) -> Response {
        let mut request = self.client.get(self.url("/v1/auth"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// `GET /v1/auth` with a key/secret pair: status and JSON body.
    pub async fn auth(&self, key: &str, secret: &str) -> (u16, Value) {
        let response = self
            .auth_with(&[
                ("Switchboard-API-Key", key),
                ("Switchboard-API-Secret", secret),
            ])
            .await;
        status_and_json(response).await
    }

    /// A bearer token for a key/secret pair; the exchange must answer 200.
    pub async fn token(&self, key: &str, secret: &str) -> String {
        let (status, body) = self.auth(key, secret).await;
        assert_eq!(status, 200, "auth for {key}: {body}");
        body["token"].as_str().unwrap().to_owned()
    }

    /// A token of the demo account's live credential.
    pub async fn live_token(&self) -> String {
        self.token(LIVE_KEY, LIVE_SECRET).await
    }

    /// A token of the demo account's sandbox credential.
    pub async fn sandbox_token(&self) -> String {
        self.token(SANDBOX_KEY, SANDBOX_SECRET).await
    }

    /// GET with a bearer token.
    pub async fn get(&self, path: &str, token: &str) -> Response {
        self.client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }

    /// GET with a bearer token: status and JSON body.
    pub async fn get_json(&self, path: &str, token: &str) -> (u16, Value) {
        status_and_json(self.get(path, token).await).await
    }

    /// POST of a JSON body with a bearer token: status and JSON body.
    pub async fn post_json(&self, path: &str, token: &str, body: &Value) -> (u16, Value) {
        self.send(Method::POST, path, token, Some(body)).await
    }

    /// Any method with a bearer token and an optional JSON body: status and JSON body.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(body);
        }
        status_and_json(request.send().await.unwrap()).await
    }

    /// GET of a body that need not be JSON (metrics, recordings): status and text.
    pub async fn text(&self, path: &str, token: &str) -> (u16, String) {
        let response = self.get(path, token).await;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A POST of a body that need not be valid JSON: status and text.
    pub async fn raw_post(&self, token: &str, path: &str, body: String) -> (u16, String) {
        let response = self
            .client
            .post(self.url(path))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    }

    /// `POST /v1/requests`: status and JSON body.
    pub async fn post_requests(&self, token: &str, body: &Value) -> (u16, Value) {
        self.post_json("/v1/requests", token, body).await
    }

    /// Creates one request with `body`, asserts the 200 and returns its `requestId`.
    pub async fn create_request(&self, token: &str, body: &Value) -> String {
        let (status, created) = self.post_requests(token, body).await;
        assert_eq!(status, 200, "create: {created}");
        created["requestId"].as_str().unwrap().to_owned()
    }

    /// `GET /v1/requests/{id}`, which must answer 200.
    pub async fn read_request(&self, token: &str, id: &str) -> Value {
        let (status, body) = self.get_json(&format!("/v1/requests/{id}"), token).await;
        assert_eq!(status, 200, "read {id}: {body}");
        body
    }

    /// Polls the single read until the request is terminal (at most [`WAIT_LIMIT`]) and returns that read.
    pub async fn wait_terminal(&self, token: &str, id: &str) -> Value {
        self.wait_terminal_within(token, id, WAIT_LIMIT).await
    }

    /// [`Api::wait_terminal`] with another limit. Every read answers 200, and every state seen before a
    /// terminal one is `PROCESSING`: the only transition is PROCESSING -> terminal.
    pub async fn wait_terminal_within(&self, token: &str, id: &str, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let body = self.read_request(token, id).await;
            let state = body["state"].as_str().unwrap_or_default();
            if TERMINAL.contains(&state) {
                return body;
            }
            assert_eq!(
                state, "PROCESSING",
                "before it is terminal a request is PROCESSING: {body}"
            );
            assert!(
                Instant::now() < deadline,
                "request {id} was not terminal within {limit:?}: {body}"
            );
            actix_web::rt::time::sleep(WAIT_STEP).await;
        }
    }

    /// An admin call with the admin token and an optional JSON body.
    pub async fn admin(&self, method: Method, path: &str, body: Option<Value>) -> Response {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(ADMIN_TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.unwrap()
    }

    /// `GET /admin/v1/orchestration`, which must answer 200.
    pub async fn orchestration_stats(&self) -> Value {
        let (status, body) = self.get_json("/admin/v1/orchestration", ADMIN_TOKEN).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Moves the manual clock forward.
    pub async fn advance_clock(&self, seconds: i64) {
        let response = self
            .admin(
                Method::POST,
                "/admin/v1/clock",
                Some(serde_json::json!({ "advanceSeconds": seconds })),
            )
            .await;
        assert_eq!(response.status(), 200);
    }

    /// Waits until `/readyz` says this node runs requests itself (`"ready"`; a node standing by answers
    /// 200 too, with `"standby"`), and answers how long that took.
    pub async fn wait_serving(&self, limit: Duration) -> Duration {
        let started = Instant::now();
        loop {
            let ready = self.client.get(self.url("/readyz")).send().await;
            if let Ok(ready) = ready {
                let body: Value = ready.json().await.unwrap_or_default();
                if body["status"] == "ready" {
                    return started.elapsed();
                }
            }
            assert!(
                started.elapsed() < limit,
                "the node did not take over within {limit:?}"
            );
            actix_web::rt::time::sleep(WAIT_STEP).await;
        }
    }

    /// Polls until the server answers `/readyz` with 200 (start-up recovery done, or standing by ready to
    /// forward), at most 20 s.
    pub async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = self.client.get(self.url("/readyz")).send().await;
            let status = ready.as_ref().map(|r| r.status().as_u16());
            if status.as_ref().is_ok_and(|s| *s == 200) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the server never became ready: {status:?}"
            );
            actix_web::rt::time::sleep(WAIT_STEP).await;
        }
    }
}
