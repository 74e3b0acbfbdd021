//! The webhook body and its signature (service-interface 6.2, 6.3).

use hmac::{Hmac, Mac};
use sha2::Sha256;
use switchboard_storage::RequestRecord;

/// The body: `requestId`, `requestBatchId`, `state`, and `internalId` / `internalTag` only when supplied,
/// serialized with sorted keys (serde_json's map is ordered), no timestamps, no results.
pub fn payload(record: &RequestRecord) -> String {
    let mut body = serde_json::Map::new();
    body.insert("requestId".into(), record.id.as_str().into());
    body.insert("requestBatchId".into(), record.batch_id.as_str().into());
    body.insert("state".into(), record.state.as_str().into());
    if let Some(internal_id) = &record.internal_id {
        body.insert("internalId".into(), internal_id.clone().into());
    }
    if let Some(internal_tag) = &record.internal_tag {
        body.insert("internalTag".into(), internal_tag.clone().into());
    }
    serde_json::Value::Object(body).to_string()
}

/// `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the exact body bytes.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_known_hmac_sha256_of_the_bytes() {
        // RFC 4231 test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }
}
