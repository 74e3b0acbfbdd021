//! Forwarding one request to the node that runs requests, and its answer back, as a reverse proxy does:
//! method, path, query, headers and body go as they came, less the headers that belong to one connection.

use std::time::Duration;

use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse, ResponseError};
use anyhow::Context;

use super::Route;
use crate::client_ip::{
    behind_proxies, path_of, unix_now, ForwardingKey, CLIENT_IP, CLIENT_IP_PROOF,
};
use crate::configuration::Settings;
use crate::errors::{ApiError, Code};
use crate::wire::ReadyOut;

/// Marks a forwarded request: a node that is standing by too answers it rather than forwarding it again,
/// so two nodes with stale views of the lease never pass a request back and forth.
const FORWARDED: &str = "x-switchboard-forwarded";

/// Headers of one connection rather than of the request (RFC 9110 §7.6.1), the length the client computes
/// again, and the client-address headers only a forwarding node may set.
const NOT_PASSED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    CLIENT_IP,
    CLIENT_IP_PROOF,
    FORWARDED,
];

/// What every forwarding handler shares.
pub struct Hop {
    route: Route,
    /// This node's own address: a lease that names it is an earlier process of this node's, being taken
    /// back, never a node to forward to.
    own_url: Option<url::Url>,
    client: reqwest::Client,
    /// Forwards that could not reach the holder, logged once per episode.
    unreachable: Unreachable,
    forwarding: Option<ForwardingKey>,
    /// `[server] trusted_proxies`: the address proved is the one behind them.
    trusted_proxies: Vec<ipnet::IpNet>,
}

impl Hop {
    pub fn new(
        settings: &Settings,
        route: Route,
        forwarding: Option<ForwardingKey>,
    ) -> anyhow::Result<Hop> {
        let mut client = reqwest::Client::builder()
            .use_rustls_tls()
            // An answer is passed on as it is, a redirect included.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(120));
        // The nodes share one configuration, so the holder serves this node's certificate: trusted even
        // when it is self-signed.
        if let Some(tls) = &settings.server.tls {
            let pem = crate::tls::read_bounded(&tls.cert_file)
                .map_err(|problem| anyhow::anyhow!("{}: {problem}", tls.cert_file.display()))?;
            for certificate in reqwest::Certificate::from_pem_bundle(&pem)? {
                client = client.add_root_certificate(certificate);
            }
        }
        Ok(Hop {
            route,
            own_url: settings.server.node_url.clone(),
            unreachable: Unreachable::default(),
            client: client
                .build()
                .context("cannot build the forwarding client")?,
            forwarding,
            trusted_proxies: settings.server.trusted_proxies.clone(),
        })
    }
}

/// Every route but the probes: passed on to the node that runs requests.
pub async fn forward(req: HttpRequest, body: web::Bytes, hop: web::Data<Hop>) -> HttpResponse {
    if req.headers().contains_key(FORWARDED) {
        return ApiError::not_ready(
            "The node this was forwarded to is standing by as well; retry shortly",
        );
    }
    let Some(holder) = hop.holder() else {
        return ApiError::not_ready(
            "No node runs requests right now (one is taking over); retry shortly",
        );
    };
    let joined = format!("{}{}", holder.as_str().trim_end_matches('/'), path_of(&req));
    let Ok(target) = url::Url::parse(&joined) else {
        return ApiError::new(Code::InvalidRequest, "The path cannot be forwarded")
            .error_response();
    };
    // The path and query as the holder will receive them: the URL percent-encodes what a client may send
    // raw (a quote in the query, say) and resolves dot segments, and the proof must cover those bytes.
    let sent = target[url::Position::BeforePath..].to_owned();
    let Ok(method) = reqwest::Method::from_bytes(req.method().as_str().as_bytes()) else {
        return ApiError::new(Code::InvalidRequest, "Unknown HTTP method").error_response();
    };
    let mut outgoing = hop.client.request(method, target).body(body);
    for (name, value) in req.headers() {
        if !NOT_PASSED.contains(&name.as_str()) {
            outgoing = outgoing.header(name.as_str(), value.as_bytes());
        }
    }
    outgoing = outgoing.header(FORWARDED, "1");
    if let (Some(key), Some(peer)) = (&hop.forwarding, req.peer_addr()) {
        let client = behind_proxies(peer.ip(), req.headers(), &hop.trusted_proxies);
        outgoing = outgoing.header(CLIENT_IP, client.to_string()).header(
            CLIENT_IP_PROOF,
            key.prove(client, req.method().as_str(), &sent, unix_now()),
        );
    }
    let answer = match outgoing.send().await {
        Ok(answer) => answer,
        // Never reached: nothing was done, and a retry is safe.
        Err(e) if e.is_connect() => {
            hop.unreachable.failed(&holder, causes(&e.without_url()));
            return ApiError::not_ready(
                "The node that runs requests cannot be reached; retry shortly",
            );
        }
        Err(e) => {
            // Without the URL: its query may carry a client's filter values.
            tracing::warn!(
                error = causes(&e.without_url()),
                "the node that runs requests did not answer a forwarded request"
            );
            return outcome_unknown();
        }
    };
    hop.unreachable.reached(&holder);
    relay(answer).await
}

/// The holder got the request and then failed to answer (it died, or took too long): whether the call
/// took effect is not known, so no `Retry-After` invites a blind retry. An `internalId` makes a create's
/// retry safe.
fn outcome_unknown() -> HttpResponse {
    ApiError::new(
        Code::InternalError,
        "The node that runs requests stopped answering, so the call may have taken effect; please retry the request (a create with its internalId, so it is made once)",
    )
    .error_response()
}

/// The holder's answer, as this node's.
async fn relay(answer: reqwest::Response) -> HttpResponse {
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = HttpResponse::build(status);
    for (name, value) in answer.headers() {
        if NOT_PASSED.contains(&name.as_str()) {
            continue;
        }
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_str().as_bytes()),
            HeaderValue::from_bytes(value.as_bytes()),
        ) {
            response.append_header((name, value));
        }
    }
    match answer.bytes().await {
        Ok(body) => response.body(body),
        Err(e) => {
            tracing::warn!(error = %e.without_url(), "the node that runs requests broke off its answer");
            outcome_unknown()
        }
    }
}

/// 200 while this node reaches the node that runs requests (`"status": "standby"`), else 503 saying why:
/// no node holds the lease, or the holder does not answer this node (down, or refusing its TLS).
pub async fn readyz(hop: web::Data<Hop>) -> HttpResponse {
    let Some(holder) = hop.holder() else {
        return ApiError::not_ready("No node runs requests right now (one is taking over)");
    };
    let probe = holder.join("healthz").expect("a path joins any base URL");
    match hop.client.get(probe).timeout(PROBE_TIMEOUT).send().await {
        Ok(answer) if answer.status().is_success() => {
            hop.unreachable.reached(&holder);
            HttpResponse::Ok().json(ReadyOut { status: "standby" })
        }
        Ok(answer) => ApiError::not_ready(format!(
            "The node that runs requests ({holder}) answers its health check with {}",
            answer.status().as_u16()
        )),
        Err(e) => {
            let cause = causes(&e.without_url());
            hop.unreachable.failed(&holder, cause.clone());
            ApiError::not_ready(format!(
                "The node that runs requests ({holder}) cannot be reached from this node: {cause}"
            ))
        }
    }
}

/// How long a standby's readiness waits for the holder's health check.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

impl Hop {
    /// Where the node that runs requests is reached, unless the lease names this node's own address: an
    /// earlier process of this node's, whose lease this one is taking back.
    fn holder(&self) -> Option<url::Url> {
        self.route
            .current()
            .filter(|holder| Some(holder) != self.own_url.as_ref())
    }
}

/// An error with every cause under it: reqwest's own text says only "error sending request", where the
/// cause says what failed (a refused connection, a certificate rustls would not accept).
pub(crate) fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// Forwards that found the holder out of reach since it was last reached: the first is logged with its
/// cause, the rest counted, and the count logged when the holder answers again, so a takeover's seconds of
/// refused forwards make two lines, not one per call.
#[derive(Default)]
struct Unreachable(std::sync::Mutex<Option<Episode>>);

struct Episode {
    since: std::time::Instant,
    failures: u64,
}

impl Unreachable {
    fn failed(&self, holder: &url::Url, cause: String) {
        let mut episode = self.0.lock().expect("episode lock");
        match episode.as_mut() {
            Some(episode) => episode.failures += 1,
            None => {
                tracing::warn!(
                    holder = %holder,
                    error = cause,
                    "the node that runs requests cannot be reached; answering 503 until it can \
                     (further failures are counted, not logged)"
                );
                *episode = Some(Episode {
                    since: std::time::Instant::now(),
                    failures: 1,
                });
            }
        }
    }

    fn reached(&self, holder: &url::Url) {
        let ended = self.0.lock().expect("episode lock").take();
        if let Some(episode) = ended {
            tracing::info!(
                holder = %holder,
                failures = episode.failures,
                seconds = episode.since.elapsed().as_secs_f64(),
                "the node that runs requests is reached again"
            );
        }
    }
}

/// A standby's own metrics: only that it stands by (the node that runs requests counts the work).
pub async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(
            "# HELP switchboard_standby Whether this node stands by, forwarding to the node that runs requests.\n\
             # TYPE switchboard_standby gauge\nswitchboard_standby 1\n",
        )
}
