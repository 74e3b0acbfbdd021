//! Error types of the HTTP layer and the one mapping from each to a status and body.
//!
//! Three body shapes exist (service-interface 7.1): the standard envelope `{error, message, details?}`
//! ([`ApiError`]), the bearer-token 401 `{code: 401, message}` ([`TokenError`]), and the `/v1/auth` 401
//! `{error}` ([`AuthError`]). Each is its own type so no handler can mix them up.

mod api;
mod auth;
mod extractors;
mod token;

pub use api::{ApiError, Code};
pub use auth::{AdminForbidden, AdminUnauthorized, AuthError, SignInThrottled};
pub use extractors::{json_config, path_config, query_config, MAX_BODY_BYTES, MAX_HEADER_BYTES};
pub use token::TokenError;
