use serde::{Deserialize, Serialize};

use crate::codec::Record;

/// One entry of the built-in payer directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PayerRecord {
    /// Canonical payer name; also the directory key.
    pub name: String,
    /// Other names and acronyms clients use for this payer.
    pub aliases: Vec<String>,
    /// Ten-digit number to dial; `None` when the directory knows the payer but has no number on file.
    pub phone: Option<String>,
    /// Extra input keys this payer demands under per-payer required inputs.
    pub required_inputs: Vec<String>,
    /// Reachable through the electronic channel.
    pub electronic: bool,
    /// The clearinghouse payer id (`tradingPartnerServiceId`).
    #[serde(default)]
    pub electronic_payer_id: Option<String>,
    /// Member-ID prefixes that steer a regional-plan family member to this plan.
    pub member_id_prefixes: Vec<String>,
    /// When this payer's phone lines take calls, overriding the default business hours.
    #[serde(default)]
    pub calling_hours: Option<CallingHoursRecord>,
    /// IANA zone in which this payer's calling hours are read; `None`: the calling account's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// A daily calling window on business days, in the payer's time zone (else the account's): `[start, end)` minutes after
/// local midnight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallingHoursRecord {
    /// First minute of the day calls may start.
    pub start_minute: u16,
    /// Minute of the day from which no call starts.
    pub end_minute: u16,
}

impl Record for PayerRecord {
    const KIND: &'static str = "payer";
    const VERSION: u8 = 1;
}
