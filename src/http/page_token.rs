//! Opaque, tamper-evident page tokens: a keyset cursor (creation time and id of the last request shown),
//! the date window of the listing, bound to the query it belongs to and signed with the server's key.

use chrono::{DateTime, NaiveDate, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use switchboard_storage::Cursor;

use crate::auth::constant_time_eq;

type HmacSha256 = Hmac<Sha256>;

/// A listing's date window: `[from, to)` days.
pub type Window = (NaiveDate, NaiveDate);

/// Encodes `cursor` (and the listing's `window`) for the query identified by `query`.
pub fn encode(key: &[u8], query: &str, cursor: &Cursor, window: Option<Window>) -> String {
    let (from, to) = window.map_or((String::new(), String::new()), |(f, t)| {
        (f.to_string(), t.to_string())
    });
    let payload = format!(
        "2:{}:{}:{from}:{to}:{}",
        cursor.created_at.timestamp_micros(),
        fingerprint(query),
        cursor.request_id,
    );
    let payload = hex::encode(payload);
    format!("{payload}.{}", sign(key, &payload))
}

/// Decodes a token; `None` if it was altered, forged, or issued for another query.
pub fn decode(key: &[u8], query: &str, token: &str) -> Option<(Cursor, Option<Window>)> {
    let (payload, signature) = token.split_once('.')?;
    if !constant_time_eq(sign(key, payload).as_bytes(), signature.as_bytes()) {
        return None;
    }
    let text = String::from_utf8(hex::decode(payload).ok()?).ok()?;
    let mut parts = text.splitn(6, ':');
    let (version, micros, print) = (parts.next()?, parts.next()?, parts.next()?);
    let (from, to, id) = (parts.next()?, parts.next()?, parts.next()?);
    if version != "2" || print != fingerprint(query) {
        return None;
    }
    let window = match (from, to) {
        ("", "") => None,
        (from, to) => Some((from.parse().ok()?, to.parse().ok()?)),
    };
    let cursor = Cursor {
        created_at: DateTime::<Utc>::from_timestamp_micros(micros.parse().ok()?)?,
        request_id: id.into(),
    };
    Some((cursor, window))
}

fn sign(key: &[u8], payload: &str) -> String {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(b"page-token:");
    mac.update(payload.as_bytes());
    hex::encode(&mac.finalize().into_bytes()[..16])
}

fn fingerprint(query: &str) -> String {
    hex::encode(&Sha256::digest(query.as_bytes())[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor() -> Cursor {
        Cursor {
            created_at: "2026-11-23T14:00:00.123456Z".parse().unwrap(),
            request_id: "0193a1b2-req:with:colons".into(),
        }
    }

    fn window() -> Option<Window> {
        Some(("2026-11-23".parse().unwrap(), "2026-11-24".parse().unwrap()))
    }

    #[test]
    fn a_token_round_trips_for_its_own_query_with_its_window() {
        let token = encode(b"key", "q1", &cursor(), window());
        assert_eq!(decode(b"key", "q1", &token), Some((cursor(), window())));
        let batch_token = encode(b"key", "q1", &cursor(), None);
        assert_eq!(decode(b"key", "q1", &batch_token), Some((cursor(), None)));
    }

    #[test]
    fn tampered_forged_or_misapplied_tokens_are_refused() {
        let token = encode(b"key", "q1", &cursor(), window());
        assert_eq!(decode(b"other-key", "q1", &token), None, "another key");
        assert_eq!(decode(b"key", "q2", &token), None, "another query");
        let mut altered = token.clone().into_bytes();
        altered[3] = if altered[3] == b'0' { b'1' } else { b'0' };
        assert_eq!(
            decode(b"key", "q1", &String::from_utf8(altered).unwrap()),
            None,
            "altered payload"
        );
        for garbage in ["", ".", "abc", "zz.zz", "not-a-token"] {
            assert_eq!(decode(b"key", "q1", garbage), None, "{garbage:?}");
        }
    }
}
