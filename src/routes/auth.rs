use actix_web::{web, HttpRequest, HttpResponse};
use serde_json::json;

use crate::auth::{constant_time_eq, secret_digest};
use crate::errors::{ApiError, AuthError};
use crate::state::AppState;

/// `GET /v1/auth`: exchanges the key/secret headers for a one-hour bearer token.
#[tracing::instrument(name = "auth", skip_all)]
pub async fn get_token(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> actix_web::Result<HttpResponse> {
    let word = state.product_word();
    let header = |suffix: &str| {
        req.headers()
            .get(format!("{word}-API-{suffix}").to_ascii_lowercase().as_str())
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let key = header("Key").ok_or(AuthError::MissingApiKey)?;
    let secret = header("Secret").ok_or(AuthError::MissingApiSecret)?;
    let account = state
        .store
        .account_by_key(key)
        .map_err(ApiError::from)?
        .ok_or(AuthError::InvalidApiKey)?;
    let credential = account
        .credentials
        .iter()
        .find(|c| c.key == key)
        .ok_or(AuthError::InvalidApiKey)?;
    if !constant_time_eq(
        secret_digest(secret).as_bytes(),
        credential.secret_sha256.as_bytes(),
    ) {
        return Err(AuthError::Unauthorized.into());
    }
    let token = state.tokens.issue(
        &account.id,
        credential.environment,
        &credential.id,
        state.clock.now(),
    );
    tracing::info!(account = %account.id, environment = credential.environment.as_str(), "token issued");
    Ok(HttpResponse::Ok().json(json!({ "token": token })))
}
