use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};

use crate::wire::TokenErrorOut;

/// A bearer-token rejection: 401 `{code: 401, message}` with a `WWW-Authenticate` challenge
/// (service-interface 5.5, RFC 6750 section 3).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TokenError {
    /// Realm of the challenge: the product word.
    pub realm: String,
    /// RFC 6750 error code; `None` when the request carried no bearer credentials at all, where the RFC
    /// says the challenge should carry none.
    pub rfc_error: Option<&'static str>,
    /// What was wrong, for the client.
    pub message: String,
}

impl TokenError {
    /// The `WWW-Authenticate` header value.
    pub fn challenge(&self) -> String {
        match self.rfc_error {
            Some(code) => format!(
                "Bearer realm=\"{}\", error=\"{code}\", error_description=\"{}\"",
                self.realm,
                self.message.replace('"', "'")
            ),
            None => format!("Bearer realm=\"{}\"", self.realm),
        }
    }
}

impl ResponseError for TokenError {
    fn status_code(&self) -> StatusCode {
        StatusCode::UNAUTHORIZED
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::Unauthorized()
            .insert_header((header::WWW_AUTHENTICATE, self.challenge()))
            .json(TokenErrorOut {
                code: 401,
                message: self.message.clone(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_carries_the_rfc_code_only_when_there_is_one() {
        let missing = TokenError {
            realm: "Switchboard".into(),
            rfc_error: None,
            message: "missing".into(),
        };
        assert_eq!(missing.challenge(), "Bearer realm=\"Switchboard\"");
        let expired = TokenError {
            rfc_error: Some("invalid_token"),
            message: "The token has expired".into(),
            ..missing
        };
        assert_eq!(
            expired.challenge(),
            "Bearer realm=\"Switchboard\", error=\"invalid_token\", error_description=\"The token has expired\""
        );
    }
}
