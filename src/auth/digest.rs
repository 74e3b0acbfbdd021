//! Secret digests and constant-time comparison.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Lowercase hex SHA-256 of an API secret: what a provisioning fingerprint covers (the store keeps a salted,
/// slow hash of it, [`switchboard_storage::hash_api_secret`]).
pub fn secret_digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Compares two byte strings without leaking, through timing, where they first differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_stable_hex_and_comparison_is_exact() {
        let digest = secret_digest("s3cret");
        assert_eq!(digest.len(), 64);
        assert_eq!(digest, secret_digest("s3cret"));
        assert!(constant_time_eq(
            digest.as_bytes(),
            secret_digest("s3cret").as_bytes()
        ));
        assert!(!constant_time_eq(
            digest.as_bytes(),
            secret_digest("s3cres").as_bytes()
        ));
        assert!(!constant_time_eq(b"short", b"longer"));
    }
}
