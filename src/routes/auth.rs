use std::time::Instant;

use actix_web::{web, HttpRequest, HttpResponse};

use switchboard_storage::audit::{Actor, Target};

use crate::audit;
use crate::errors::{ApiError, AuthError};
use crate::state::AppState;
use crate::throttle::Denial;
use crate::wire::{AuthErrorOut, TokenOut};

/// Exchange API key and secret for a bearer token
///
/// Send the key and secret in the two credential headers (see the `apiKey` and `apiSecret` security
/// schemes); use the token as `Authorization: Bearer <token>` on every other `/v1` endpoint.
#[utoipa::path(get, path = "/v1/auth", operation_id = "getToken",
    responses(
        (status = 200, description = "A bearer token valid for 1 hour.", body = TokenOut),
        (status = 401, description = "Key or secret missing or wrong: `{error}` only.", body = AuthErrorOut,
            example = json!({ "error": "MISSING_API_KEY" })),
        (status = 429, description = "Too many failed exchanges for this key (10 in 60 s by default) or from this address (50): every exchange for it or from it is refused, a correct secret included, until the window ends.", body = AuthErrorOut,
            headers(("Retry-After" = u64, description = "Seconds until exchanges are taken again.")),
            example = json!({ "error": "TOO_MANY_REQUESTS" })),
    ))]
#[tracing::instrument(name = "auth", skip_all)]
pub async fn get_token(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> actix_web::Result<HttpResponse> {
    let word = state.auth_header_word();
    let header = |suffix: &str| {
        req.headers()
            .get(format!("{word}-API-{suffix}").to_ascii_lowercase().as_str())
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let ip = audit::peer(&req);
    let presented_key = header("Key");
    // A throttled key or address is refused before its credentials are looked at: a correct secret
    // must not be told apart from a wrong one. The refusal is audited with its window's count.
    if let Some(refusal) = state
        .throttle
        .auth_refused(presented_key, ip, Instant::now())
    {
        // Debug only: a flood would otherwise be a line per call; the metric and the audit event count it.
        tracing::debug!(kind = refusal.kind.as_str(), "token exchange throttled");
        return Err(AuthError::TooManyRequests {
            retry_after_secs: refusal.retry_after_secs(),
        }
        .into());
    }
    // Every exchange is audited, refused ones too (a refusal without a key names no one). Its target is
    // the account the key belongs to, `unknown` when it belongs to none. A refusal also counts towards
    // the key's and the address's throttles.
    let exchanged = |actor: Actor, account: &str, outcome: &'static str| {
        let target = Some(Target::new("account", account));
        if outcome != "ok" {
            let denial = Denial {
                actor: actor.clone(),
                action: "auth.token",
                target: target.clone(),
                ip,
            };
            state
                .throttle
                .auth_failed(presented_key, ip, denial, Instant::now());
        }
        let event = audit::event(&state, actor, "auth.token", target, outcome, ip);
        state.store.audit_read(event);
    };
    let Some(key) = presented_key else {
        exchanged(Actor::api_key("unknown"), "unknown", "denied");
        return Err(AuthError::MissingApiKey.into());
    };
    let account = state
        .store
        .account_by_key(key)
        .await
        .map_err(ApiError::from)?;
    let credential = account
        .as_ref()
        .and_then(|account| account.credentials.iter().find(|c| c.key == key));
    let known = account.as_ref().zip(credential);
    let Some(secret) = header("Secret") else {
        match known {
            Some((account, credential)) => {
                exchanged(Actor::api_key(&credential.id), &account.id, "denied")
            }
            None => exchanged(audit::unknown_key(key), "unknown", "denied"),
        }
        return Err(AuthError::MissingApiSecret.into());
    };
    let Some((account, credential)) = known else {
        exchanged(audit::unknown_key(key), "unknown", "denied");
        return Err(AuthError::InvalidApiKey.into());
    };
    let admitted = || match state.throttle.auth_refused(Some(key), ip, Instant::now()) {
        Some(refusal) => Err(AuthError::TooManyRequests {
            retry_after_secs: refusal.retry_after_secs(),
        }),
        None => Ok(()),
    };
    if !state
        .secret_checks
        .matches(credential, secret, admitted)
        .await?
    {
        exchanged(Actor::api_key(&credential.id), &account.id, "denied");
        return Err(AuthError::Unauthorized.into());
    }
    exchanged(Actor::api_key(&credential.id), &account.id, "ok");
    let token = state.tokens.issue(
        &account.id,
        credential.environment,
        &credential.id,
        state.clock.now(),
    );
    tracing::info!(account = %account.id, environment = credential.environment.as_str(), "token issued");
    Ok(HttpResponse::Ok().json(TokenOut { token }))
}
