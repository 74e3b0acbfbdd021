//! An audit event and its canonical form: the JSON whose SHA-256, after the previous event's hash, is the
//! event's own hash. Fields are declared in sorted order, so serde writes the canonical key order without a
//! sorted map (the workspace's serde_json keeps insertion order).

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Who acted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// What it is.
    pub id: String,
    /// `api_key`, `operator` or `system`.
    pub kind: String,
}

impl Actor {
    /// The server itself (retention).
    pub fn system() -> Actor {
        Actor {
            id: "system".into(),
            kind: "system".into(),
        }
    }

    /// An operator, by name.
    pub fn operator(name: &str) -> Actor {
        Actor {
            id: name.into(),
            kind: "operator".into(),
        }
    }

    /// An API credential, by its id.
    pub fn api_key(id: &str) -> Actor {
        Actor {
            id: id.into(),
            kind: "api_key".into(),
        }
    }
}

/// What was acted on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Its id.
    pub id: String,
    /// `request`, `recording`, `operator`, `account`, `schema`, `backup`, `audit`, `credential`.
    pub kind: String,
}

impl Target {
    /// A target of `kind` named `id`.
    pub fn new(kind: &str, id: impl Into<String>) -> Target {
        Target {
            id: id.into(),
            kind: kind.into(),
        }
    }
}

/// An event before it joins the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who.
    pub actor: Actor,
    /// One of the fixed action names (`request.read`, ...).
    pub action: String,
    /// On what.
    pub target: Option<Target>,
    /// `ok`, `denied` or `error`.
    pub outcome: String,
    /// The client's address; `None` for the system.
    pub ip: Option<String>,
}

/// An event in the chain, as stored and served.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEvent {
    /// The action.
    pub action: String,
    /// Who.
    pub actor: Actor,
    /// When, RFC 3339 with microseconds.
    pub at: String,
    /// SHA-256 of `prev_hash` and the canonical JSON of the event without this field.
    pub hash: String,
    /// The client's address.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ip: Option<String>,
    /// `ok`, `denied` or `error`.
    pub outcome: String,
    /// The hash of the event before (64 zeros for the first).
    pub prev_hash: String,
    /// Position in the chain, from 1.
    pub seq: u64,
    /// On what.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub target: Option<Target>,
}

/// The event without its hash, keys in sorted order: what is hashed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Unhashed<'a> {
    action: &'a str,
    actor: &'a Actor,
    at: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip: Option<&'a str>,
    outcome: &'a str,
    prev_hash: &'a str,
    seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<&'a Target>,
}

/// The `prevHash` of the first event.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

impl AuditEvent {
    /// `event` chained after `prev_hash` as number `seq`: its hash, and the line stored for it. The line
    /// is the canonical JSON that was hashed with `hash` put first, so each event is serialized once.
    pub(crate) fn chained_line(event: NewEvent, seq: u64, prev_hash: &str) -> (String, Vec<u8>) {
        let at = event.at.to_rfc3339_opts(SecondsFormat::Micros, true);
        let canonical = serde_json::to_vec(&Unhashed {
            action: &event.action,
            actor: &event.actor,
            at: &at,
            ip: event.ip.as_deref(),
            outcome: &event.outcome,
            prev_hash,
            seq,
            target: event.target.as_ref(),
        })
        .expect("an event serializes");
        let hash = chain_hash(prev_hash, &canonical);
        let mut line = Vec::with_capacity(canonical.len() + 76);
        line.extend_from_slice(b"{\"hash\":\"");
        line.extend_from_slice(hash.as_bytes());
        line.extend_from_slice(b"\",");
        line.extend_from_slice(&canonical[1..]);
        (hash, line)
    }

    /// The hash this event should carry: SHA-256 over the bytes of `prevHash` then the canonical JSON.
    pub fn computed_hash(&self) -> String {
        let unhashed = Unhashed {
            action: &self.action,
            actor: &self.actor,
            at: &self.at,
            ip: self.ip.as_deref(),
            outcome: &self.outcome,
            prev_hash: &self.prev_hash,
            seq: self.seq,
            target: self.target.as_ref(),
        };
        chain_hash(
            &self.prev_hash,
            &serde_json::to_vec(&unhashed).expect("an event serializes"),
        )
    }
}

fn chain_hash(prev_hash: &str, canonical: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash.as_bytes());
    hasher.update(canonical);
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_sha256_of_the_previous_hash_and_the_sorted_compact_json() {
        let (hash, line) = AuditEvent::chained_line(
            NewEvent {
                at: "2026-11-23T14:00:00Z".parse().unwrap(),
                actor: Actor::operator("alice"),
                action: "request.read".into(),
                target: Some(Target::new("request", "r-1")),
                outcome: "ok".into(),
                ip: Some("127.0.0.1".into()),
            },
            1,
            GENESIS,
        );
        let canonical = format!(
            "{GENESIS}{}",
            r#"{"action":"request.read","actor":{"id":"alice","kind":"operator"},"at":"2026-11-23T14:00:00.000000Z","ip":"127.0.0.1","outcome":"ok","prevHash":"0000000000000000000000000000000000000000000000000000000000000000","seq":1,"target":{"id":"r-1","kind":"request"}}"#
        );
        assert_eq!(hash, hex::encode(Sha256::digest(canonical.as_bytes())));
        let stored: AuditEvent = serde_json::from_slice(&line).unwrap();
        assert_eq!(stored.hash, hash);
        assert_eq!(
            stored.computed_hash(),
            hash,
            "the stored line reads back to the same hash"
        );
    }
}
