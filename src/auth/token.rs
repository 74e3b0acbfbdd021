//! Bearer tokens: HS256 JWTs carrying account, environment and credential id.
//!
//! Expiry is checked against the injected clock, not by jsonwebtoken (which reads the system time and
//! allows 60 s of leeway by default), so the manual clock governs tokens like everything else.

use std::sync::Arc;

use crate::memo::Memo;
use chrono::{DateTime, Duration, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use switchboard_storage::Environment;

/// How long a token is valid (service-interface section 8).
pub const TOKEN_LIFETIME: Duration = Duration::hours(1);

/// What a token says about its bearer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Account id.
    pub sub: String,
    /// Environment of the credential.
    pub env: Environment,
    /// Credential id: removing the credential revokes the token.
    pub cid: String,
    /// Issued at, seconds since the epoch.
    pub iat: i64,
    /// Expires at, seconds since the epoch.
    pub exp: i64,
    /// Unique token id.
    pub jti: String,
}

/// Why a presented token is not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenProblem {
    /// Not three dot-separated base64url parts.
    Malformed,
    /// Bad signature, wrong algorithm or unreadable claims.
    Invalid,
    /// Past its expiry.
    Expired,
}

/// Issues and verifies bearer tokens with one HS256 key.
pub struct TokenIssuer {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// Claims of tokens whose signature already checked out. The key never changes while the process
    /// runs, so a token that verified once verifies again; expiry is still checked on every use. A client
    /// reuses its token for an hour, so the memo's few thousand answers cover every active client.
    verified: Memo<String, Arc<Claims>>,
}

impl TokenIssuer {
    /// An issuer signing with `secret`.
    pub fn new(secret: &[u8]) -> TokenIssuer {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.algorithms = vec![Algorithm::HS256];
        validation.leeway = 0;
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.set_required_spec_claims(&["exp", "sub"]);
        TokenIssuer {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            validation,
            verified: Memo::new(),
        }
    }

    /// A token for `credential_id` of `account_id`, valid for [`TOKEN_LIFETIME`] from `now`.
    pub fn issue(
        &self,
        account_id: &str,
        environment: Environment,
        credential_id: &str,
        now: DateTime<Utc>,
    ) -> String {
        let claims = Claims {
            sub: account_id.to_owned(),
            env: environment,
            cid: credential_id.to_owned(),
            iat: now.timestamp(),
            exp: (now + TOKEN_LIFETIME).timestamp(),
            jti: uuid::Uuid::new_v4().simple().to_string(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing cannot fail")
    }

    /// Checks signature, algorithm and expiry (against `now`).
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Arc<Claims>, TokenProblem> {
        // A remembered token was well-formed and verified when first seen: only its expiry is checked again.
        let claims = match self.verified.get(token) {
            Some(claims) => claims,
            None => {
                let base64url = |p: &str| {
                    !p.is_empty()
                        && p.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                };
                if token.split('.').count() != 3 || !token.split('.').all(base64url) {
                    return Err(TokenProblem::Malformed);
                }
                let claims = Arc::new(
                    jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
                        .map_err(|_| TokenProblem::Invalid)?
                        .claims,
                );
                self.verified
                    .remember(token.to_owned(), Arc::clone(&claims));
                claims
            }
        };
        if claims.exp <= now.timestamp() {
            return Err(TokenProblem::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-23T14:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_fresh_token_verifies_and_carries_its_claims() {
        let issuer = TokenIssuer::new(b"0123456789abcdef0123456789abcdef");
        let token = issuer.issue("acme", Environment::Sandbox, "cred-1", now());
        let claims = issuer.verify(&token, now()).unwrap();
        assert_eq!(
            (claims.sub.as_str(), claims.env, claims.cid.as_str()),
            ("acme", Environment::Sandbox, "cred-1")
        );
        assert_eq!(claims.exp - claims.iat, 3600);
    }

    #[test]
    fn a_token_expires_exactly_at_one_hour_with_no_leeway() {
        let issuer = TokenIssuer::new(b"k");
        let token = issuer.issue("acme", Environment::Production, "c", now());
        assert!(issuer
            .verify(&token, now() + Duration::seconds(3599))
            .is_ok());
        assert_eq!(
            issuer.verify(&token, now() + Duration::seconds(3600)),
            Err(TokenProblem::Expired)
        );
    }

    #[test]
    fn tampering_or_another_key_invalidates_a_token() {
        let issuer = TokenIssuer::new(b"key-one");
        let token = issuer.issue("acme", Environment::Production, "c", now());
        // Verified once, so a tampered copy cannot ride on the remembered verification.
        assert!(issuer.verify(&token, now()).is_ok());
        assert_eq!(
            TokenIssuer::new(b"key-two").verify(&token, now()),
            Err(TokenProblem::Invalid)
        );
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        parts[1] = parts[1].chars().rev().collect();
        assert_eq!(
            issuer.verify(&parts.join("."), now()),
            Err(TokenProblem::Invalid)
        );
    }

    #[test]
    fn only_three_part_tokens_are_well_formed() {
        let issuer = TokenIssuer::new(b"k");
        for bad in ["", "abc", "a.b", "a.b.c.d", "a..c", "a.b c.d", "a.b.c!"] {
            assert_eq!(
                issuer.verify(bad, now()),
                Err(TokenProblem::Malformed),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_none_algorithm_is_refused() {
        let issuer = TokenIssuer::new(b"k");
        let header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"; // {"alg":"none","typ":"JWT"}
        let token = issuer.issue("acme", Environment::Production, "c", now());
        let payload = token.split('.').nth(1).unwrap();
        assert_eq!(
            issuer.verify(&format!("{header}.{payload}.sig"), now()),
            Err(TokenProblem::Invalid)
        );
    }
}
