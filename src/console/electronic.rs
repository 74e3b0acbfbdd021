//! The electronic transaction behind a request, for the console's results table: which channel answered,
//! the clearinghouse's transaction id, when, how it went and which element of the answer fed each field.
//! Console-only; the client API keeps `resultSources` for phone calls.

use std::collections::BTreeMap;

use serde::Serialize;
use switchboard_storage::RequestRecord;

use crate::wire::format_timestamp;

/// The `electronic` part of the console's request detail.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ElectronicTraceOut<'a> {
    /// `stedi`, `simulated`, `sandbox`.
    pub channel: Option<&'a str>,
    pub transaction_id: Option<&'a str>,
    pub at: String,
    pub outcome: Option<&'a str>,
    /// Field name to the element of the answer behind its value.
    pub fields: &'a BTreeMap<String, String>,
}

/// The request's electronic attempt, or `None` (`null`) when none was made.
pub fn electronic_trace(record: &RequestRecord) -> Option<ElectronicTraceOut<'_>> {
    let electronic = record.run.as_ref()?.electronic.as_ref()?;
    Some(ElectronicTraceOut {
        channel: electronic.channel.as_deref(),
        transaction_id: electronic.transaction_id.as_deref(),
        at: format_timestamp(electronic.at),
        outcome: electronic.outcome.as_deref(),
        fields: &electronic.sources,
    })
}
