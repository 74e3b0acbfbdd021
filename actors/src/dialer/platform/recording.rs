//! Keeping a platform's recording: downloaded into the store at the end of the call (a bounded number of
//! tries), so it outlives the platform's retention and its URL never leaves the server. The audio is PHI:
//! the store seals it before it touches a disk.

use std::time::Duration;

use switchboard_storage::{CallId, RequestId, Store};

/// Tries of one download before the call is reported without a recording.
const ATTEMPTS: u32 = 3;

/// Downloads `url` and keeps it in `store` for request `owner` as `{call_id}.{ext}`; answers that name,
/// or `None` after [`ATTEMPTS`] failures.
pub(super) async fn download(
    client: &reqwest::Client,
    url: &str,
    store: &Store,
    owner: &RequestId,
    call_id: &CallId,
) -> Option<String> {
    let name = format!("{call_id}.{}", extension(url));
    for attempt in 1..=ATTEMPTS {
        match fetch(client, url).await {
            Ok(audio) => match store.keep_recording(owner, &name, &audio).await {
                Ok(()) => return Some(name),
                Err(e) => tracing::warn!(%call_id, error = %e, "cannot store the recording"),
            },
            Err(reason) => {
                tracing::warn!(%call_id, attempt, reason = %reason, "recording download failed")
            }
        }
        tokio::time::sleep(Duration::from_millis(250 * u64::from(attempt))).await;
    }
    None
}

/// Why one download try failed; the text is what the warning shows.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    /// The platform could not be reached or the body was cut short.
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// The platform answered, but not with the recording.
    #[error("status {0}")]
    Status(reqwest::StatusCode),
}

/// reqwest's errors name the URL, and a platform's recording URL is a signed link to a patient's call: it
/// is stripped from both places an error can come from.
async fn fetch(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, FetchError> {
    let response = client
        .get(url)
        .send()
        .await
        .map_err(reqwest::Error::without_url)?;
    if !response.status().is_success() {
        return Err(FetchError::Status(response.status()));
    }
    let bytes = response
        .bytes()
        .await
        .map_err(reqwest::Error::without_url)?;
    Ok(bytes.to_vec())
}

/// The file extension a recording URL implies (`wav` unless the path says `mp3`, `ogg` or `m4a`).
fn extension(url: &str) -> &'static str {
    let path = url
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    ["mp3", "ogg", "m4a"]
        .into_iter()
        .find(|ext| path.ends_with(&format!(".{ext}")))
        .unwrap_or("wav")
}
