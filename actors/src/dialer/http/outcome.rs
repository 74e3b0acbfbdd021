//! The agent's signed outcome callback, checked before anything of it is believed.
//!
//! The signature is the one the jobs carry: `X-Switchboard-Signature`, the lowercase hex HMAC-SHA256 of the
//! exact body bytes under `[dialer] secret`. A signature over the outcome alone could be replayed: the
//! same signed body, posted to another call's path, would report that call too. So the signed body also
//! names its call (`callId`, which must be the call of the path) and the time it was signed (`timestamp`,
//! seconds since the epoch, at most [`TOLERANCE_SECS`] from now either way). "Now" is the machine's wall
//! clock, never the manual test clock: the agent signs with real time.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use switchboard_storage::CallId;

use super::AgentOutcome;

/// How far an outcome's `timestamp` may be from now, in seconds.
pub const TOLERANCE_SECS: i64 = 5 * 60;

/// Why a posted outcome is refused.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum OutcomeRefusal {
    /// The signature does not match the body under the dialer secret.
    #[error("The outcome is not signed with the dialer secret")]
    BadSignature,
    /// Signed, but not an outcome: not JSON, `callId` or `timestamp` missing, or a field wrong.
    #[error("The outcome body is not valid: {0}")]
    Malformed(String),
    /// Signed for another call than the one it was posted for.
    #[error("The outcome was signed for another call")]
    OtherCall,
    /// Signed more than [`TOLERANCE_SECS`] away from now.
    #[error("The outcome's timestamp is more than {TOLERANCE_SECS} seconds away from now")]
    Stale,
}

/// The outcome `body` reports for `call_id`, once its signature, its call and its time hold.
pub fn accept(
    secret: &str,
    call_id: &CallId,
    body: &[u8],
    signature_hex: &str,
    now: DateTime<Utc>,
) -> Result<AgentOutcome, OutcomeRefusal> {
    let presented = hex::decode(signature_hex).map_err(|_| OutcomeRefusal::BadSignature)?;
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    // `verify_slice` compares in constant time.
    mac.verify_slice(&presented)
        .map_err(|_| OutcomeRefusal::BadSignature)?;
    let malformed = |why: &str| OutcomeRefusal::Malformed(why.to_owned());
    let mut fields: Map<String, Value> =
        serde_json::from_slice(body).map_err(|e| OutcomeRefusal::Malformed(e.to_string()))?;
    let signed_for = match fields.remove("callId") {
        Some(Value::String(id)) => id,
        _ => {
            return Err(malformed(
                "callId: the call the outcome reports, as a string",
            ))
        }
    };
    let signed_at = match fields.remove("timestamp") {
        Some(Value::Number(n)) => n.as_i64(),
        _ => None,
    }
    .ok_or_else(|| malformed("timestamp: the time of signing, in whole seconds since the epoch"))?;
    if signed_for != call_id.as_str() {
        return Err(OutcomeRefusal::OtherCall);
    }
    if (now.timestamp() - signed_at).abs() > TOLERANCE_SECS {
        return Err(OutcomeRefusal::Stale);
    }
    serde_json::from_value(Value::Object(fields))
        .map_err(|e| OutcomeRefusal::Malformed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use switchboard_storage::Disposition;

    use super::*;
    use crate::webhooks::signature as sign;

    const SECRET: &str = "agent-secret";

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_764_000_000, 0).unwrap()
    }

    fn call(id: &str) -> CallId {
        CallId::from(id)
    }

    fn signed(body: &Value) -> (Vec<u8>, String) {
        let bytes = body.to_string().into_bytes();
        let signature = sign(SECRET, &bytes);
        (bytes, signature)
    }

    fn outcome(call_id: &str, timestamp: i64) -> Value {
        json!({
            "callId": call_id, "timestamp": timestamp,
            "disposition": "voicemail", "durationSeconds": 95,
        })
    }

    #[test]
    fn an_outcome_signed_for_its_call_within_five_minutes_is_accepted() {
        for skew in [0, -TOLERANCE_SECS, TOLERANCE_SECS] {
            let (body, signature) = signed(&outcome("call-1", now().timestamp() + skew));
            let accepted = accept(SECRET, &call("call-1"), &body, &signature, now()).unwrap();
            assert_eq!(accepted.disposition, Disposition::Voicemail, "skew {skew}");
            assert_eq!(accepted.duration_seconds, 95);
        }
    }

    #[test]
    fn an_outcome_signed_for_another_call_is_refused() {
        let (body, signature) = signed(&outcome("call-1", now().timestamp()));
        assert_eq!(
            accept(SECRET, &call("call-2"), &body, &signature, now()),
            Err(OutcomeRefusal::OtherCall)
        );
    }

    #[test]
    fn a_stale_or_future_outcome_is_refused() {
        for skew in [-TOLERANCE_SECS - 1, TOLERANCE_SECS + 1, -86_400] {
            let (body, signature) = signed(&outcome("call-1", now().timestamp() + skew));
            assert_eq!(
                accept(SECRET, &call("call-1"), &body, &signature, now()),
                Err(OutcomeRefusal::Stale),
                "skew {skew}"
            );
        }
    }

    #[test]
    fn a_bad_signature_is_refused_before_the_body_is_read() {
        let (body, _) = signed(&outcome("call-1", now().timestamp()));
        for signature in ["", "zz", &"00".repeat(32), &sign("another-secret", &body)] {
            assert_eq!(
                accept(SECRET, &call("call-1"), &body, signature, now()),
                Err(OutcomeRefusal::BadSignature),
                "{signature:?}"
            );
        }
        let (_, other_signature) = signed(&outcome("call-1", now().timestamp() - 1));
        assert_eq!(
            accept(SECRET, &call("call-1"), &body, &other_signature, now()),
            Err(OutcomeRefusal::BadSignature),
            "a signature of another body"
        );
    }

    #[test]
    fn an_outcome_without_its_call_or_time_is_malformed() {
        let mut cases = Vec::new();
        for missing in ["callId", "timestamp"] {
            let mut body = outcome("call-1", now().timestamp());
            body.as_object_mut().unwrap().remove(missing);
            cases.push((missing.to_owned(), body));
        }
        cases.push((
            "a timestamp as text".into(),
            json!({ "callId": "call-1", "timestamp": "1764000000", "disposition": "voicemail", "durationSeconds": 1 }),
        ));
        cases.push((
            "an unknown key".into(),
            json!({ "callId": "call-1", "timestamp": now().timestamp(), "disposition": "voicemail", "durationSeconds": 1, "extra": 1 }),
        ));
        for (case, body) in cases {
            let (body, signature) = signed(&body);
            assert!(
                matches!(
                    accept(SECRET, &call("call-1"), &body, &signature, now()),
                    Err(OutcomeRefusal::Malformed(_))
                ),
                "{case}"
            );
        }
    }
}
