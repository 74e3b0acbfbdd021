//! Retell's webhooks: the `x-retell-signature` check, and the event body.
//!
//! The signature is `v={timestamp},d={digest}`: the timestamp in milliseconds since the epoch and the
//! lowercase hex HMAC-SHA256, under the Retell API key, of the raw body followed by the timestamp's
//! decimal digits. Like the Retell SDK's `verify`, the header is searched for the first `v=<digits>,d=`,
//! and a timestamp more than five minutes away from now (either way) is stale. "Now" is the machine's wall
//! clock, never the manual test clock: the platform signs with real time.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

use super::client::RetellCall;

/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-retell-signature";

/// How far a signature's timestamp may be from now, in milliseconds.
pub const TOLERANCE_MS: i64 = 5 * 60 * 1000;

/// A webhook body: the event type and the call as Retell sees it.
#[derive(Clone, Debug, Deserialize)]
pub struct RetellEvent {
    /// `call_started`, `call_ended`, `call_analyzed`, `transcript_updated`, `transfer_*`.
    pub event: String,
    /// The call object.
    pub call: RetellCall,
}

/// The event types that say something about the end of a call; others are acknowledged and ignored.
pub const CALL_EVENTS: [&str; 3] = ["call_started", "call_ended", "call_analyzed"];

/// The signature header Retell would send for `body` at `timestamp_ms` (what the test fake sends).
pub fn sign(body: &[u8], api_key: &str, timestamp_ms: i64) -> String {
    format!(
        "v={timestamp_ms},d={}",
        hex::encode(digest(body, api_key, timestamp_ms))
    )
}

/// Whether `header` signs `body` under `api_key` with a timestamp within [`TOLERANCE_MS`] of `now`.
pub fn verify(body: &[u8], api_key: &str, header: &str, now: DateTime<Utc>) -> bool {
    let Some((timestamp, presented)) = parse(header) else {
        return false;
    };
    if (now.timestamp_millis() - timestamp).abs() > TOLERANCE_MS {
        return false;
    }
    // The SDK compares lowercase hex strings: anything but 64 lowercase hex digits cannot match.
    let lowercase_hex = presented.len() == 64
        && presented
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let Ok(presented) = hex::decode(presented) else {
        return false;
    };
    let mut mac =
        Hmac::<Sha256>::new_from_slice(api_key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.update(timestamp.to_string().as_bytes());
    // `verify_slice` compares in constant time.
    lowercase_hex && mac.verify_slice(&presented).is_ok()
}

fn digest(body: &[u8], api_key: &str, timestamp_ms: i64) -> Vec<u8> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(api_key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    mac.update(timestamp_ms.to_string().as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// The first `v=<digits>,d=<rest>` in `header`: the timestamp and the presented digest.
fn parse(header: &str) -> Option<(i64, &str)> {
    let mut from = 0;
    while let Some(found) = header[from..].find("v=") {
        let start = from + found + 2;
        let digits = header[start..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let rest = &header[start + digits..];
        if digits > 0 {
            if let Some(digest) = rest.strip_prefix(",d=") {
                let timestamp = header[start..start + digits].parse::<i64>().ok()?;
                return Some((timestamp, digest));
            }
        }
        from = start;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp_millis(1_764_000_000_000).unwrap()
    }

    #[test]
    fn a_signature_made_like_retell_verifies() {
        let body = br#"{"event":"call_ended","call":{"call_id":"c1"}}"#;
        let header = sign(body, "key_1", now().timestamp_millis() - 1_000);
        assert!(verify(body, "key_1", &header, now()));
        assert!(!verify(body, "key_2", &header, now()), "another key");
        assert!(!verify(b"{}", "key_1", &header, now()), "another body");
    }

    #[test]
    fn the_timestamp_is_signed_and_must_be_fresh() {
        let body = b"{}";
        let stamp = now().timestamp_millis();
        let stale = sign(body, "k", stamp - TOLERANCE_MS - 1);
        assert!(!verify(body, "k", &stale, now()), "older than five minutes");
        let future = sign(body, "k", stamp + TOLERANCE_MS + 1);
        assert!(
            !verify(body, "k", &future, now()),
            "more than five minutes ahead"
        );
        let edge = sign(body, "k", stamp - TOLERANCE_MS);
        assert!(
            verify(body, "k", &edge, now()),
            "exactly five minutes is accepted"
        );
        let good = sign(body, "k", stamp);
        let moved = good.replace(&format!("v={stamp}"), &format!("v={}", stamp + 1));
        assert!(
            !verify(body, "k", &moved, now()),
            "a changed timestamp breaks the digest"
        );
    }

    #[test]
    fn malformed_headers_are_refused() {
        for header in ["", "v=,d=00", "d=00,v=1", "v=12", "v=abc,d=00"] {
            assert!(!verify(b"{}", "k", header, now()), "{header:?}");
        }
    }
}
