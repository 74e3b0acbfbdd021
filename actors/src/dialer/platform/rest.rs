//! One REST call to a voice platform and how its answer counts: the classification every adapter shares,
//! so Retell and Vapi retry and fail calls by the same rule.

use serde::de::DeserializeOwned;

use super::PlatformError;

/// Sends `request` (already carrying the platform's auth) and reads its JSON answer. A network failure, a
/// 429 or a 5xx is `Unavailable` (the driver looks for the call, then retries); any other non-2xx is
/// `Rejected` (the attempt fails). `platform` names the platform in the error text; the URL is left out,
/// since it can carry ids.
pub(crate) async fn send_json<T: DeserializeOwned>(
    platform: &str,
    request: reqwest::RequestBuilder,
) -> Result<T, PlatformError> {
    let response = request
        .send()
        .await
        .map_err(|e| PlatformError::Unavailable(e.without_url().to_string()))?;
    let status = response.status();
    if status.is_server_error() || status.as_u16() == 429 {
        return Err(PlatformError::Unavailable(format!(
            "{platform} answered {status}"
        )));
    }
    if !status.is_success() {
        return Err(PlatformError::Rejected(format!(
            "{platform} answered {status}"
        )));
    }
    response.json().await.map_err(|e| {
        let e = e.without_url();
        PlatformError::Unavailable(format!("unreadable {platform} answer: {e}"))
    })
}
