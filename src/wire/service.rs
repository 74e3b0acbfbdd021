//! The probes' and `/v1/auth`'s answers.

use serde::Serialize;
use utoipa::ToSchema;

/// `GET /healthz`: `{"status": "ok"}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct HealthOut {
    /// Always `ok`.
    #[schema(pattern = "^ok$")]
    pub status: &'static str,
}

/// `GET /readyz` once ready: `{"status": "ready"}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReadyOut {
    /// `ready`; or `standby` from a node that stands by on a shared PostgreSQL database and forwards every
    /// call to the node that runs requests.
    #[schema(pattern = "^(ready|standby)$")]
    pub status: &'static str,
}

/// `GET /v1/auth`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenOut {
    /// Bearer token (a JWT, `header.payload.signature`), valid for 1 hour. There is no refresh flow: call
    /// `/v1/auth` again.
    pub token: String,
}
