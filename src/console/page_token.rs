//! Page tokens of the console's request list: a keyset cursor plus the creation-date window of the first
//! page (so paging across midnight keeps that window), bound to the scope and filters it was issued for
//! and signed with the server's key. Opaque to the browser, which only hands them back.

use chrono::{DateTime, NaiveDate, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use switchboard_storage::Cursor;

use crate::auth::constant_time_eq;

type HmacSha256 = Hmac<Sha256>;

/// Where a listing continues, and the window it walks (`None` for a batch listing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resume {
    /// The last entry walked so far.
    pub cursor: Cursor,
    /// `[from, to)` creation days of a date listing.
    pub window: Option<(NaiveDate, NaiveDate)>,
}

/// Encodes `resume` for the listing identified by `query`.
pub fn encode(key: &[u8], query: &str, resume: &Resume) -> String {
    let window = resume
        .window
        .map(|(from, to)| format!("{from}~{to}"))
        .unwrap_or_default();
    let payload = format!(
        "c1:{}:{}:{}:{}",
        fingerprint(query),
        window,
        resume.cursor.created_at.timestamp_micros(),
        resume.cursor.request_id,
    );
    let payload = hex::encode(payload);
    format!("{payload}.{}", sign(key, &payload))
}

/// Decodes a token; `None` if it was altered, forged, or issued for another listing.
pub fn decode(key: &[u8], query: &str, token: &str) -> Option<Resume> {
    let (payload, signature) = token.split_once('.')?;
    if !constant_time_eq(sign(key, payload).as_bytes(), signature.as_bytes()) {
        return None;
    }
    let text = String::from_utf8(hex::decode(payload).ok()?).ok()?;
    let mut parts = text.splitn(5, ':');
    let (version, print, window, micros, id) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    if version != "c1" || print != fingerprint(query) {
        return None;
    }
    let window = match window.split_once('~') {
        None if window.is_empty() => None,
        None => return None,
        Some((from, to)) => Some((from.parse().ok()?, to.parse().ok()?)),
    };
    Some(Resume {
        cursor: Cursor {
            created_at: DateTime::<Utc>::from_timestamp_micros(micros.parse().ok()?)?,
            request_id: id.to_owned(),
        },
        window,
    })
}

fn sign(key: &[u8], payload: &str) -> String {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(b"console-page-token:");
    mac.update(payload.as_bytes());
    hex::encode(&mac.finalize().into_bytes()[..16])
}

fn fingerprint(query: &str) -> String {
    hex::encode(&Sha256::digest(query.as_bytes())[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resume(window: Option<(NaiveDate, NaiveDate)>) -> Resume {
        Resume {
            cursor: Cursor {
                created_at: "2026-11-23T14:00:00.123456Z".parse().unwrap(),
                request_id: "0193a1b2-req:with:colons".into(),
            },
            window,
        }
    }

    #[test]
    fn a_token_round_trips_with_or_without_a_window() {
        let days = Some(("2026-11-23".parse().unwrap(), "2026-11-24".parse().unwrap()));
        for value in [resume(days), resume(None)] {
            let token = encode(b"key", "q", &value);
            assert_eq!(decode(b"key", "q", &token), Some(value));
        }
    }

    #[test]
    fn tampered_forged_or_misapplied_tokens_are_refused() {
        let token = encode(b"key", "q1", &resume(None));
        assert_eq!(decode(b"other", "q1", &token), None, "another key");
        assert_eq!(decode(b"key", "q2", &token), None, "another listing");
        let mut altered = token.clone().into_bytes();
        altered[5] = if altered[5] == b'0' { b'1' } else { b'0' };
        let altered = String::from_utf8(altered).unwrap();
        assert_eq!(decode(b"key", "q1", &altered), None, "altered payload");
        for garbage in ["", ".", "abc", "zz.zz"] {
            assert_eq!(decode(b"key", "q1", garbage), None, "{garbage:?}");
        }
    }
}
