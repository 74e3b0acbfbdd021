use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde_json::json;

use crate::wire::{AuthErrorCodeOut, AuthErrorOut};

/// A `/v1/auth` rejection: 401 with `{error}` only (service-interface 4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The key header is absent or empty.
    #[error("MISSING_API_KEY")]
    MissingApiKey,
    /// The secret header is absent or empty.
    #[error("MISSING_API_SECRET")]
    MissingApiSecret,
    /// No account issued this key.
    #[error("INVALID_API_KEY")]
    InvalidApiKey,
    /// The secret does not match the key.
    #[error("UNAUTHORIZED")]
    Unauthorized,
    /// Too many failed exchanges for the key or from the address: 429 with `Retry-After`.
    #[error("TOO_MANY_REQUESTS")]
    TooManyRequests {
        /// Seconds until the throttle's window ends.
        retry_after_secs: u64,
    },
}

impl ResponseError for AuthError {
    fn status_code(&self) -> StatusCode {
        match self {
            AuthError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            _ => StatusCode::UNAUTHORIZED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let error = match self {
            AuthError::MissingApiKey => AuthErrorCodeOut::MissingApiKey,
            AuthError::MissingApiSecret => AuthErrorCodeOut::MissingApiSecret,
            AuthError::InvalidApiKey => AuthErrorCodeOut::InvalidApiKey,
            AuthError::Unauthorized => AuthErrorCodeOut::Unauthorized,
            AuthError::TooManyRequests { .. } => AuthErrorCodeOut::TooManyRequests,
        };
        let mut response = HttpResponse::build(self.status_code());
        if let AuthError::TooManyRequests { retry_after_secs } = self {
            response.insert_header((actix_web::http::header::RETRY_AFTER, *retry_after_secs));
        }
        response.json(AuthErrorOut { error })
    }
}

/// 429 `TOO_MANY_REQUESTS` in the standard envelope, with `Retry-After`: an admin or console call from an
/// address throttled after failed sign-ins (operator contract section 12).
#[derive(Clone, Copy, Debug)]
pub struct SignInThrottled(pub crate::throttle::Refusal);

impl std::fmt::Display for SignInThrottled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("too many calls with an unknown token from this address")
    }
}

impl ResponseError for SignInThrottled {
    fn status_code(&self) -> StatusCode {
        StatusCode::TOO_MANY_REQUESTS
    }

    fn error_response(&self) -> HttpResponse {
        super::ApiError::too_many_requests(&self.0)
    }
}

/// An admin-API rejection: 401 `{"error":"UNAUTHORIZED"}` (operator contract section 3).
#[derive(Clone, Copy, Debug, thiserror::Error)]
#[error("UNAUTHORIZED")]
pub struct AdminUnauthorized;

/// 403 `{"error":"FORBIDDEN"}`: a known operator whose role may not make this call.
#[derive(Debug, Clone, Copy)]
pub struct AdminForbidden;

impl std::fmt::Display for AdminForbidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the operator's role may not make this call")
    }
}

impl ResponseError for AdminForbidden {
    fn status_code(&self) -> StatusCode {
        StatusCode::FORBIDDEN
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::Forbidden().json(json!({ "error": "FORBIDDEN" }))
    }
}

impl ResponseError for AdminUnauthorized {
    fn status_code(&self) -> StatusCode {
        StatusCode::UNAUTHORIZED
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::Unauthorized().json(json!({ "error": "UNAUTHORIZED" }))
    }
}
