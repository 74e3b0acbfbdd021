//! The bodies of the console's own endpoints (`/console/config.json`, `/console/api/*`). They serve the
//! console's pages only, so they are typed here and stay out of the client API's document.

use std::collections::BTreeMap;

use serde::Serialize;
use switchboard_storage::RequestBatchId;

use crate::wire::RequestOut;

/// `GET /console/config.json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigOut<'a> {
    pub product_word: &'a str,
    /// Names the `/v1/auth` headers the sign-in page sends.
    pub auth_header_word: &'a str,
    pub admin_enabled: bool,
}

/// `GET /console/api/session`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOut<'a> {
    pub account_id: &'a str,
    pub account_name: &'a str,
    pub environment: &'static str,
    pub sign_in: &'static str,
    /// The operator's name, or the API credential's id.
    pub signed_in_as: &'a str,
    /// The operator's role (`admin`, `support`); absent for an API token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    pub timezone: &'a str,
    pub daily_call_capacity: u32,
    pub features: Vec<&'static str>,
    pub schemas: &'a [String],
}

/// `GET /console/api/requests`: a page, the counts per state of the whole window, and how much was walked.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPageOut {
    pub requests: Vec<RequestOut>,
    pub counts_by_state: BTreeMap<&'static str, u64>,
    /// Whether the counts cover the whole window (the walk stayed within its limit).
    pub counts_complete: bool,
    pub scanned: usize,
    pub scan_limited: bool,
    pub window: WindowOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// The part of the index a page walked: a batch, or a creation-date window.
#[derive(Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub enum WindowOut {
    Batch { request_batch_id: RequestBatchId },
    Created { date_from: String, date_to: String },
}

/// `GET /console/api/schedule`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleOut<'a> {
    pub account_id: &'a str,
    pub environment: &'static str,
    pub timezone: &'a str,
    pub today: String,
    pub daily_call_capacity: u32,
    pub days: Vec<DayOut>,
    pub holidays: Vec<HolidayOut>,
    pub booked_total: u32,
}

/// One business day's bookings.
#[derive(Serialize)]
pub struct DayOut {
    pub date: String,
    pub weekday: String,
    pub booked: u32,
    pub free: u32,
}

/// A federal holiday the schedule skips.
#[derive(Serialize)]
pub struct HolidayOut {
    pub date: String,
    pub name: &'static str,
}

/// `GET /console/api/requests/{requestId}/voice`: the request's calls as the voice platform sees them.
#[derive(Serialize)]
pub struct VoiceOut<'a> {
    /// The platform calls go to, `null` for the simulator.
    pub platform: Option<&'static str>,
    pub calls: Vec<PlatformCallOut<'a>>,
    pub waiting: Vec<WaitingOut>,
    /// `null` without call limits.
    pub slots: Option<SlotsOut>,
}

/// A call placed through a voice platform.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlatformCallOut<'a> {
    /// The call's `seq` in the request.
    pub call: u32,
    pub platform: &'a str,
    pub platform_call_id: Option<&'a str>,
    pub requested_at: String,
    pub events: &'a [String],
    pub recording_kept: bool,
}

/// An attempt of the request waiting to be placed, and why.
#[derive(Serialize)]
pub struct WaitingOut {
    /// `calling_hours` or `slot`.
    pub reason: &'static str,
    pub since: String,
    /// The waiting call's `seq`, when the request's record has it yet.
    pub call: Option<u32>,
}

/// The server's call slots.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlotsOut {
    pub limit: usize,
    pub in_use: usize,
}
