use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use switchboard_storage::StorageError;

use crate::wire::{ErrorOut, InvalidInputsOut};

/// The machine codes of the standard envelope, each with its HTTP status. One table, so a code can never
/// be answered with two different statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// 400: malformed body, parameters or path.
    InvalidRequest,
    /// 400: input validation failed.
    InvalidInputs,
    /// 400: payer lookup found no payer.
    PayerNotFound,
    /// 401: a signed callback whose signature does not verify.
    Unauthorized,
    /// 403: required-payer-inputs without the feature.
    PayerRequiredInputsDisabled,
    /// 404: schema absent or retired.
    SchemaNotFound,
    /// 404: request absent.
    RequestNotFound,
    /// 404: the token's account is gone.
    AccountNotFound,
    /// 404: no such route.
    NotFound,
    /// 405: the route exists, the method does not.
    MethodNotAllowed,
    /// 409: the admin API's target exists already (an operator's name, a backup's path).
    Conflict,
    /// 410: a sunset endpoint.
    Gone,
    /// 413: body over the size limit.
    PayloadTooLarge,
    /// 415: body is not JSON.
    UnsupportedMediaType,
    /// 431: the request's header fields are over the size limit.
    RequestHeadersTooLarge,
    /// 429: too many failed sign-ins from the address (admin API, console).
    TooManyRequests,
    /// 500: unexpected failure.
    InternalError,
    /// 500: payer matched without a number, or lookup infrastructure failed.
    PayerLookupFailure,
    /// 503: start-up recovery has not finished.
    NotReady,
}

impl Code {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidRequest => "INVALID_REQUEST",
            Code::InvalidInputs => "INVALID_INPUTS",
            Code::PayerNotFound => "PAYER_NOT_FOUND",
            Code::Unauthorized => "UNAUTHORIZED",
            Code::PayerRequiredInputsDisabled => "PAYER_REQUIRED_INPUTS_DISABLED",
            Code::SchemaNotFound => "SCHEMA_NOT_FOUND",
            Code::RequestNotFound => "REQUEST_NOT_FOUND",
            Code::AccountNotFound => "ACCOUNT_NOT_FOUND",
            Code::NotFound => "NOT_FOUND",
            Code::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Code::Conflict => "CONFLICT",
            Code::Gone => "GONE",
            Code::PayloadTooLarge => "PAYLOAD_TOO_LARGE",
            Code::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            Code::RequestHeadersTooLarge => "REQUEST_HEADERS_TOO_LARGE",
            Code::TooManyRequests => "TOO_MANY_REQUESTS",
            Code::InternalError => "INTERNAL_ERROR",
            Code::PayerLookupFailure => "PAYER_LOOKUP_FAILURE",
            Code::NotReady => "NOT_READY",
        }
    }

    /// The HTTP status this code is always answered with.
    pub fn status(self) -> StatusCode {
        match self {
            Code::InvalidRequest | Code::InvalidInputs | Code::PayerNotFound => {
                StatusCode::BAD_REQUEST
            }
            Code::Unauthorized => StatusCode::UNAUTHORIZED,
            Code::PayerRequiredInputsDisabled => StatusCode::FORBIDDEN,
            Code::SchemaNotFound
            | Code::RequestNotFound
            | Code::AccountNotFound
            | Code::NotFound => StatusCode::NOT_FOUND,
            Code::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Code::Conflict => StatusCode::CONFLICT,
            Code::Gone => StatusCode::GONE,
            Code::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Code::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::RequestHeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Code::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            Code::InternalError | Code::PayerLookupFailure => StatusCode::INTERNAL_SERVER_ERROR,
            Code::NotReady => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code for a bare status, used when the framework produced an error without one of ours.
    pub fn for_status(status: StatusCode) -> Code {
        match status.as_u16() {
            404 => Code::NotFound,
            405 => Code::MethodNotAllowed,
            409 => Code::Conflict,
            410 => Code::Gone,
            413 => Code::PayloadTooLarge,
            415 => Code::UnsupportedMediaType,
            431 => Code::RequestHeadersTooLarge,
            429 => Code::TooManyRequests,
            503 => Code::NotReady,
            400..=499 => Code::InvalidRequest,
            _ => Code::InternalError,
        }
    }
}

/// An error answered with the standard envelope.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A client error with a code and a message for the client.
    #[error("{message}")]
    Client {
        /// Machine code.
        code: Code,
        /// Message for the client.
        message: String,
        /// Structured detail (only `INVALID_INPUTS` carries one).
        details: Option<InvalidInputsOut>,
    },
    /// An unexpected failure. The cause is logged, never sent.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    /// A client error without details.
    pub fn new(code: Code, message: impl Into<String>) -> ApiError {
        ApiError::Client {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// 400 `INVALID_REQUEST`.
    pub fn invalid_request(message: impl Into<String>) -> ApiError {
        ApiError::new(Code::InvalidRequest, message)
    }

    /// 404 `SCHEMA_NOT_FOUND`.
    pub fn schema_not_found(schema_id: &str) -> ApiError {
        ApiError::new(
            Code::SchemaNotFound,
            format!("Schema '{schema_id}' was not found"),
        )
    }

    /// 404 `ACCOUNT_NOT_FOUND`.
    pub fn account_not_found() -> ApiError {
        ApiError::new(
            Code::AccountNotFound,
            "The account for these credentials no longer exists",
        )
    }

    /// 503 `NOT_READY` with `Retry-After: 1`: the call was not taken up (a node starting, or one standing
    /// by with nowhere to forward it), so it may be sent again in a second.
    pub fn not_ready(message: impl Into<String>) -> HttpResponse {
        let mut response = ApiError::new(Code::NotReady, message).error_response();
        response.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            actix_web::http::header::HeaderValue::from_static("1"),
        );
        response
    }

    /// 429 `TOO_MANY_REQUESTS` with `Retry-After`: the address is throttled after failed sign-ins.
    pub fn too_many_requests(refusal: &crate::throttle::Refusal) -> HttpResponse {
        let seconds = refusal.retry_after_secs();
        let mut response = ApiError::new(
            Code::TooManyRequests,
            format!(
                "Too many calls with an unknown token from this address; retry after {seconds} seconds"
            ),
        )
        .error_response();
        response.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            actix_web::http::header::HeaderValue::from(seconds),
        );
        response
    }

    /// 500 `INTERNAL_ERROR` from any cause.
    pub fn internal(cause: impl Into<anyhow::Error>) -> ApiError {
        ApiError::Internal(cause.into())
    }

    /// The machine code.
    pub fn code(&self) -> Code {
        match self {
            ApiError::Client { code, .. } => *code,
            ApiError::Internal(_) => Code::InternalError,
        }
    }

    /// The envelope body.
    pub fn body(&self) -> ErrorOut {
        match self {
            ApiError::Client {
                code,
                message,
                details,
            } => ErrorOut {
                error: code.as_str().to_owned(),
                message: message.clone(),
                details: details.clone(),
            },
            ApiError::Internal(_) => ErrorOut {
                error: Code::InternalError.as_str().to_owned(),
                message: "An unexpected error occurred; please retry the request.".to_owned(),
                details: None,
            },
        }
    }
}

impl From<StorageError> for ApiError {
    fn from(e: StorageError) -> ApiError {
        ApiError::Internal(e.into())
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code().status()
    }

    fn error_response(&self) -> HttpResponse {
        if let ApiError::Internal(cause) = self {
            tracing::error!(error.message = %cause, error.cause_chain = %format_args!("{cause:#}"), "internal error");
        }
        HttpResponse::build(self.status_code()).json(self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_carries_code_and_message_and_details_only_when_given() {
        let plain = ApiError::invalid_request("bad");
        assert_eq!(
            serde_json::to_value(plain.body()).unwrap(),
            json!({"error": "INVALID_REQUEST", "message": "bad"})
        );
        let detailed = ApiError::Client {
            code: Code::InvalidInputs,
            message: "m".into(),
            details: Some(InvalidInputsOut {
                missing_inputs: vec!["memberId".into()],
                invalid_inputs: Default::default(),
            }),
        };
        assert_eq!(
            serde_json::to_value(detailed.body()).unwrap()["details"],
            json!({"missingInputs": ["memberId"], "invalidInputs": {}})
        );
    }

    #[test]
    fn internal_errors_never_leak_their_cause() {
        let err = ApiError::internal(anyhow::anyhow!("disk on fire at /var/secret"));
        assert_eq!(err.status_code(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!serde_json::to_string(&err.body()).unwrap().contains("disk"));
    }

    #[test]
    fn every_code_maps_back_from_its_own_status_where_unambiguous() {
        for code in [
            Code::NotFound,
            Code::MethodNotAllowed,
            Code::PayloadTooLarge,
            Code::UnsupportedMediaType,
            Code::TooManyRequests,
            Code::Gone,
        ] {
            assert_eq!(Code::for_status(code.status()), code);
        }
        assert_eq!(
            Code::for_status(StatusCode::BAD_REQUEST),
            Code::InvalidRequest
        );
        assert_eq!(
            Code::for_status(StatusCode::BAD_GATEWAY),
            Code::InternalError
        );
    }
}
