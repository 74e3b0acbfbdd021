//! An audit event and its hash: SHA-256 over the previous event's hash and the event's canonical JSON
//! ([`super::canonical`]), and beside it, stored but never served, its MAC under a key only the master key
//! unlocks ([`crate::seal::binding`]). Fields are declared in sorted order, so serde writes a served event's keys in the
//! canonical order too (the workspace's serde_json keeps insertion order).

use std::borrow::Cow;
use std::net::IpAddr;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::canonical::{ip_text, Unhashed, IP_TEXT};
use crate::seal::binding::Binder;

/// Who acted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    /// What it is.
    pub id: String,
    /// `api_key`, `operator` or `system`.
    pub kind: Cow<'static, str>,
}

impl Actor {
    /// The server itself (retention).
    pub fn system() -> Actor {
        Actor {
            id: "system".into(),
            kind: Cow::Borrowed("system"),
        }
    }

    /// An operator, by name.
    pub fn operator(name: &str) -> Actor {
        Actor {
            id: name.into(),
            kind: Cow::Borrowed("operator"),
        }
    }

    /// An API credential, by its id.
    pub fn api_key(id: &str) -> Actor {
        Actor {
            id: id.into(),
            kind: Cow::Borrowed("api_key"),
        }
    }
}

/// What was acted on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// Its id.
    pub id: String,
    /// `request`, `recording`, `operator`, `account`, `schema`, `backup`, `audit`, `credential`.
    pub kind: Cow<'static, str>,
}

impl Target {
    /// A target of `kind` named `id`.
    pub fn new(kind: &'static str, id: impl Into<String>) -> Target {
        Target {
            id: id.into(),
            kind: Cow::Borrowed(kind),
        }
    }
}

/// An event before it joins the chain. The fixed words are borrowed and the address is formatted only
/// when the event is chained: a read builds one of these on the HTTP worker for every request it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// Who.
    pub actor: Actor,
    /// One of the fixed action names (`request.read`, ...).
    pub action: Cow<'static, str>,
    /// On what.
    pub target: Option<Target>,
    /// `ok`, `denied` or `error`.
    pub outcome: Cow<'static, str>,
    /// The client's address; `None` for the system.
    pub ip: Option<IpAddr>,
    /// How many times it happened, for an event that stands for many alike (the calls a throttle refused
    /// in one window); `None` for a single occurrence.
    pub count: Option<u64>,
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
    /// How many occurrences the event stands for, when more than one may.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub count: Option<u64>,
    /// SHA-256 of `prev_hash` and the canonical JSON of the event without this field.
    pub hash: String,
    /// HMAC-SHA256 of `seq` and `hash` under the store's audit chain key; absent from events chained
    /// before the chain was keyed. Kept in the store, left out of what is served: an outside checker
    /// recomputes `hash` from the served event without `hash`, and cannot check a MAC anyway.
    #[serde(default, skip_serializing)]
    pub(crate) mac: Option<String>,
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

/// The `prevHash` of the first event.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

impl AuditEvent {
    /// Appends `event`, chained after `prev_hash` as number `seq`, to `block` as one line, and answers
    /// its hash. The line is the canonical JSON that was hashed with `hash` put first, so each event is
    /// serialized once; `scratch` holds the canonical JSON meanwhile (reused: a busy reader's events
    /// are chained tens of thousands a second on the flusher's thread).
    pub(crate) fn append_line(
        event: &NewEvent,
        seq: u64,
        prev_hash: &str,
        binder: &Binder,
        scratch: &mut Vec<u8>,
        block: &mut Vec<u8>,
    ) -> Hash {
        let mut at = [0; RFC3339_MICROS];
        let at = rfc3339_micros(event.at, &mut at);
        let mut ip = [0; IP_TEXT];
        let ip = event.ip.map(|address| ip_text(address, &mut ip));
        scratch.clear();
        Unhashed {
            action: &event.action,
            actor: &event.actor,
            at: &at,
            count: event.count,
            ip,
            outcome: &event.outcome,
            prev_hash,
            seq,
            target: event.target.as_ref(),
        }
        .write(scratch);
        let hash = chain_hash(prev_hash, scratch);
        block.extend_from_slice(b"{\"hash\":\"");
        block.extend_from_slice(hash.as_str().as_bytes());
        block.extend_from_slice(b"\",\"mac\":\"");
        block.extend_from_slice(&binder.event_mac(seq, hash.as_str()));
        block.extend_from_slice(b"\",");
        block.extend_from_slice(&scratch[1..]);
        block.push(b'\n');
        hash
    }

    /// The hash this event should carry: SHA-256 over the bytes of `prevHash` then the canonical JSON.
    pub fn computed_hash(&self) -> String {
        let unhashed = Unhashed {
            action: &self.action,
            actor: &self.actor,
            at: &self.at,
            count: self.count,
            ip: self.ip.as_deref(),
            outcome: &self.outcome,
            prev_hash: &self.prev_hash,
            seq: self.seq,
            target: self.target.as_ref(),
        };
        let mut canonical = Vec::with_capacity(512);
        unhashed.write(&mut canonical);
        chain_hash(&self.prev_hash, &canonical).as_str().to_owned()
    }
}

/// An event's hash as lowercase hex, on the stack.
#[derive(Clone, Copy)]
pub(crate) struct Hash([u8; 64]);

impl Hash {
    pub(crate) fn as_str(&self) -> &str {
        // Only hex digits are ever written into it.
        std::str::from_utf8(&self.0).expect("hex is ASCII")
    }
}

fn chain_hash(prev_hash: &str, canonical: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(prev_hash.as_bytes());
    hasher.update(canonical);
    let mut hex = [0; 64];
    hex::encode_to_slice(hasher.finalize(), &mut hex).expect("32 bytes are 64 hex digits");
    Hash(hex)
}

/// Length of `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
const RFC3339_MICROS: usize = 27;

/// `at` as RFC 3339 in UTC with microseconds, as chrono's `to_rfc3339_opts(Micros, true)` writes it,
/// without its formatting machinery or an allocation for the years and instants that need neither.
fn rfc3339_micros(at: DateTime<Utc>, buf: &mut [u8; RFC3339_MICROS]) -> std::borrow::Cow<'_, str> {
    use chrono::{Datelike, Timelike};
    let year = at.year();
    // A leap second (nanoseconds past 10^9) or a year of other than four digits: chrono's own form.
    if !(0..=9999).contains(&year) || at.nanosecond() >= 1_000_000_000 {
        return at.to_rfc3339_opts(SecondsFormat::Micros, true).into();
    }
    let mut put = |from: usize, width: usize, mut value: u32| {
        for slot in buf[from..from + width].iter_mut().rev() {
            *slot = b'0' + (value % 10) as u8;
            value /= 10;
        }
    };
    put(0, 4, year as u32);
    put(5, 2, at.month());
    put(8, 2, at.day());
    put(11, 2, at.hour());
    put(14, 2, at.minute());
    put(17, 2, at.second());
    put(20, 6, at.nanosecond() / 1000);
    for (place, mark) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (26, b'Z'),
    ] {
        buf[place] = mark;
    }
    std::str::from_utf8(buf)
        .expect("digits and marks are ASCII")
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_sha256_of_the_previous_hash_and_the_sorted_compact_json() {
        let binder = Binder::new(&zeroize::Zeroizing::new([7; 32]));
        let mut line = Vec::new();
        let hash = AuditEvent::append_line(
            &NewEvent {
                at: "2026-11-23T14:00:00Z".parse().unwrap(),
                actor: Actor::operator("alice"),
                action: "request.read".into(),
                target: Some(Target::new("request", "r-1")),
                outcome: "ok".into(),
                ip: Some([127, 0, 0, 1].into()),
                count: None,
            },
            1,
            GENESIS,
            &binder,
            &mut Vec::new(),
            &mut line,
        );
        let hash = hash.as_str().to_owned();
        let canonical = format!(
            "{GENESIS}{}",
            r#"{"action":"request.read","actor":{"id":"alice","kind":"operator"},"at":"2026-11-23T14:00:00.000000Z","ip":"127.0.0.1","outcome":"ok","prevHash":"0000000000000000000000000000000000000000000000000000000000000000","seq":1,"target":{"id":"r-1","kind":"request"}}"#
        );
        assert_eq!(hash, hex::encode(Sha256::digest(canonical.as_bytes())));
        assert_eq!(line.last(), Some(&b'\n'), "one line per event");
        let stored: AuditEvent = serde_json::from_slice(&line).unwrap();
        assert_eq!(stored.hash, hash);
        assert_eq!(
            stored.computed_hash(),
            hash,
            "the stored line reads back to the same hash"
        );
        assert!(
            binder.event_mac_holds(1, &hash, stored.mac.as_deref().unwrap()),
            "the line carries the event's MAC"
        );
        assert!(
            serde_json::to_value(&stored).unwrap().get("mac").is_none(),
            "a served event carries no MAC"
        );
    }

    #[test]
    fn instants_are_written_as_chrono_writes_them_with_microseconds() {
        let mut buf = [0; RFC3339_MICROS];
        for text in [
            "2026-11-23T14:00:00Z",
            "2026-01-02T03:04:05.000006Z",
            "1999-12-31T23:59:59.999999999Z",
            "0001-01-01T00:00:00.123456Z",
            "+12026-01-01T00:00:00Z",
        ] {
            let at: DateTime<Utc> = text.parse().unwrap();
            assert_eq!(
                rfc3339_micros(at, &mut buf),
                at.to_rfc3339_opts(SecondsFormat::Micros, true),
                "{text}"
            );
        }
    }
}
