//! The three error bodies (service-interface 7.1): the standard envelope, the bearer-token 401 and the
//! `/v1/auth` 401.

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

/// The standard error envelope: the body of every non-2xx answer except the bearer-token 401
/// (`TokenErrorOut`) and the `/v1/auth` 401 (`AuthErrorOut`). Dispatch on `error`; `message` is for humans
/// and its wording can change. `details` appears only on `INVALID_INPUTS`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ErrorOut {
    /// Machine code. The set is open-ended; codes are never renamed.
    #[schema(examples(
        "INVALID_REQUEST",
        "INVALID_INPUTS",
        "SCHEMA_NOT_FOUND",
        "REQUEST_NOT_FOUND"
    ))]
    pub error: String,
    /// Human-readable reason.
    pub message: String,
    /// The two buckets of an `INVALID_INPUTS` answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub details: Option<InvalidInputsOut>,
}

/// `details` of an `INVALID_INPUTS` envelope (7.4). Both buckets can be populated at once; both are empty
/// when the field at fault is not an input (an `internalId` or `internalTag` over its limit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvalidInputsOut {
    /// Required input keys that are absent, `null`, empty or whitespace-only; sorted.
    pub missing_inputs: Vec<String>,
    /// Supplied input key to the reason its value was rejected, e.g. `memberId is invalid`.
    pub invalid_inputs: BTreeMap<String, String>,
}

/// 401 for a missing, malformed, invalid, revoked or expired bearer token (5.5, 7.1), sent with a
/// `WWW-Authenticate: Bearer realm="<product word>"` challenge, which carries `error="invalid_token"`
/// (RFC 6750) when a token was presented.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenErrorOut {
    /// Always 401.
    #[schema(minimum = 401, maximum = 401)]
    pub code: u16,
    /// What was wrong with the token.
    #[schema(examples("Authorization token is missing", "Authorization token has expired"))]
    pub message: String,
}

/// The `/v1/auth` rejection: `{error}` only, no message (4.1); the 401s and the 429 of a throttled key or
/// address.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthErrorOut {
    /// Why the key and secret were refused.
    pub error: AuthErrorCodeOut,
}

/// `MISSING_API_KEY` / `MISSING_API_SECRET`: header absent or empty; `INVALID_API_KEY`: key not recognized;
/// `UNAUTHORIZED`: secret does not match the key; `TOO_MANY_REQUESTS` (429): too many failed exchanges for
/// the key or from the address, retry after `Retry-After` seconds.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AuthErrorCodeOut {
    /// The key header is absent or empty.
    MissingApiKey,
    /// The secret header is absent or empty.
    MissingApiSecret,
    /// No account has this key.
    InvalidApiKey,
    /// The secret does not match the key.
    Unauthorized,
    /// Throttled after failed exchanges (429).
    TooManyRequests,
}
