//! A real webhook receiver for tests: an actix-web server on a random loopback port that records every
//! request it gets (method, path, headers, exact body bytes, arrival time) and answers from a script.
//!
//! ```ignore
//! let receiver = Receiver::start().await;
//! receiver.respond_with(vec![Reply::Status(503), Reply::Status(200)]); // then the default, 200
//! let url = receiver.url("/hook");
//! // ... make Switchboard send to `url` ...
//! let got = receiver.wait_for(2, Duration::from_secs(5)).await;
//! ```

use std::collections::VecDeque;
use std::net::TcpListener;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::http::StatusCode;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};

/// How the receiver answers one request.
#[derive(Clone, Copy, Debug)]
pub enum Reply {
    /// Answer at once with this status.
    Status(u16),
    /// Hold the request this long, then answer with this status (slow endpoints, timeouts).
    Delay(Duration, u16),
    /// Answer 307 Temporary Redirect to this path of the same receiver.
    Redirect(&'static str),
}

/// One request as it arrived.
#[derive(Clone, Debug)]
pub struct Received {
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body bytes exactly as received.
    pub body: Vec<u8>,
    /// When the request reached the handler (before any scripted delay).
    pub at: Instant,
}

impl Received {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as UTF-8 text; panics if it is not.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("webhook body is UTF-8")
    }

    /// The body parsed as JSON; panics if it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("webhook body is not JSON ({e}): {:?}", self.text()))
    }
}

struct Inner {
    received: Vec<Received>,
    script: VecDeque<Reply>,
    default: Reply,
}

/// A running receiver; stopped when dropped.
pub struct Receiver {
    address: String,
    inner: web::Data<Mutex<Inner>>,
    handle: ServerHandle,
}

impl Receiver {
    /// Binds 127.0.0.1:0 and starts serving on the current actix System. Every request, on any path and
    /// method, is recorded and answered by the next scripted [`Reply`], or the default (200) once the
    /// script is used up.
    pub async fn start() -> Receiver {
        let inner = web::Data::new(Mutex::new(Inner {
            received: Vec::new(),
            script: VecDeque::new(),
            default: Reply::Status(200),
        }));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let data = inner.clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .default_service(web::to(answer))
        })
        .workers(1)
        .disable_signals()
        .shutdown_timeout(0)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Receiver {
            address,
            inner,
            handle,
        }
    }

    /// The absolute URL of `path` on this receiver.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// Appends replies to the script: the next requests get them, in order.
    pub fn respond_with(&self, replies: Vec<Reply>) {
        self.inner.lock().unwrap().script.extend(replies);
    }

    /// The reply once the script is used up (200 unless changed).
    pub fn always(&self, reply: Reply) {
        self.inner.lock().unwrap().default = reply;
    }

    /// Everything received so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.inner.lock().unwrap().received.clone()
    }

    /// Waits (polling every 10 ms) until at least `n` requests have arrived and returns all received;
    /// panics if they do not arrive within `timeout`.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            let received = self.received();
            if received.len() >= n {
                return received;
            }
            assert!(
                Instant::now() < deadline,
                "receiver {} got {} of {n} requests within {timeout:?}",
                self.address,
                received.len()
            );
            actix_web::rt::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

async fn answer(
    request: HttpRequest,
    body: web::Bytes,
    inner: web::Data<Mutex<Inner>>,
) -> HttpResponse {
    let reply = {
        let mut inner = inner.lock().unwrap();
        inner.received.push(Received {
            method: request.method().to_string(),
            path: request.uri().to_string(),
            headers: request
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: body.to_vec(),
            at: Instant::now(),
        });
        let default = inner.default;
        inner.script.pop_front().unwrap_or(default)
    };
    let status = match reply {
        Reply::Status(status) => status,
        Reply::Delay(wait, status) => {
            actix_web::rt::time::sleep(wait).await;
            status
        }
        Reply::Redirect(path) => {
            return HttpResponse::TemporaryRedirect()
                .insert_header(("Location", path))
                .finish()
        }
    };
    HttpResponse::build(StatusCode::from_u16(status).unwrap()).finish()
}
