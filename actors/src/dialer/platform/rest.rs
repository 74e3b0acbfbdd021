//! One REST call to a voice platform and how its answer counts: the classification every adapter shares,
//! so Retell and Vapi retry and fail calls by the same rule.

use serde::de::DeserializeOwned;

use super::PlatformError;

/// Sends `request` (already carrying the platform's auth) and reads its JSON answer. A connection that
/// could not be made is `NotSent`; a network failure after that, a 429 or a 5xx is `Unavailable` (the
/// driver looks for the call, then retries either way); any other non-2xx is `Rejected` (the attempt
/// fails). `platform` names the platform in the error text; the URL is left out, since it can carry ids.
pub(crate) async fn send_json<T: DeserializeOwned>(
    platform: &str,
    request: reqwest::RequestBuilder,
) -> Result<T, PlatformError> {
    let response = request.send().await.map_err(|e| {
        // reqwest's connect errors come from the connector (resolving, TCP, TLS), before a byte of the
        // HTTP request is written.
        let connect = e.is_connect();
        let reason = causes(&e.without_url());
        if connect {
            PlatformError::NotSent(reason)
        } else {
            PlatformError::Unavailable(reason)
        }
    })?;
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

/// An error and its sources on one line: reqwest's own text ("error sending request") leaves the reason
/// (a refused connection, a name that does not resolve) to its sources.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        line.push_str(": ");
        line.push_str(&cause.to_string());
        source = cause.source();
    }
    line
}
