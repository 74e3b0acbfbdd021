//! Building the audit log's events in the HTTP layer: who (an API credential, an operator), from where (the
//! connection's peer), when (the clock). Events carry ids, never PHI.

use std::net::IpAddr;

use actix_web::HttpRequest;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use switchboard_storage::audit::{Actor, NewEvent, Target};

use crate::state::AppState;

/// An event of `action` by `actor` on `target`, now.
pub fn event(
    state: &AppState,
    actor: Actor,
    action: &'static str,
    target: Option<Target>,
    outcome: &'static str,
    ip: Option<IpAddr>,
) -> NewEvent {
    event_at(state.clock.now(), actor, action, target, outcome, ip)
}

/// An event of `action` by `actor` on `target`, at `at`: for a caller that read the clock already.
pub fn event_at(
    at: DateTime<Utc>,
    actor: Actor,
    action: &'static str,
    target: Option<Target>,
    outcome: &'static str,
    ip: Option<IpAddr>,
) -> NewEvent {
    NewEvent {
        at,
        actor,
        action: action.into(),
        target,
        outcome: outcome.into(),
        ip,
        count: None,
    }
}

/// The client's address (behind a forwarding node, the one it proved).
pub fn peer(req: &HttpRequest) -> Option<IpAddr> {
    crate::client_ip::client_ip(req)
}

/// The actor of a key/secret exchange that found no credential: see [`unknown`].
pub fn unknown_key(key: &str) -> Actor {
    Actor::api_key(&unknown(key))
}

/// The name of whoever presented `credential` (an API key, an operator token) that belongs to no one: the
/// text itself may be half of a real credential, so only a short digest of it names the attempt.
pub fn unknown(credential: &str) -> String {
    let digest = Sha256::digest(credential.as_bytes());
    format!("unknown:{}", hex::encode(&digest[..6]))
}

/// The event of `operator` taking `action` (a change, or a read audited as one) on the `kind` named `id`.
pub fn change(
    state: &AppState,
    operator: &crate::auth::Operator,
    action: &'static str,
    kind: &'static str,
    id: &str,
) -> NewEvent {
    event(
        state,
        operator.actor(),
        action,
        Some(Target::new(kind, id)),
        "ok",
        operator.ip,
    )
}

/// The event of the server itself applying its configuration file to the `kind` named `id`.
pub fn provisioned(
    at: chrono::DateTime<chrono::Utc>,
    action: &'static str,
    kind: &'static str,
    id: &str,
) -> NewEvent {
    NewEvent {
        at,
        actor: Actor::system(),
        action: action.into(),
        target: Some(Target::new(kind, id)),
        outcome: "ok".into(),
        ip: None,
        count: None,
    }
}
