//! The electronic transaction behind a request, for the console's results table: which channel answered,
//! the clearinghouse's transaction id, when, how it went and which element of the answer fed each field.
//! Console-only; the client API keeps `resultSources` for phone calls.

use serde_json::{json, Value};
use switchboard_storage::RequestRecord;

use crate::wire::format_timestamp;

/// The request's electronic attempt, or `null` when none was made.
pub fn electronic_trace(record: &RequestRecord) -> Value {
    let Some(electronic) = record.run.as_ref().and_then(|run| run.electronic.as_ref()) else {
        return Value::Null;
    };
    json!({
        "channel": electronic.channel,
        "transactionId": electronic.transaction_id,
        "at": format_timestamp(electronic.at),
        "outcome": electronic.outcome,
        "fields": electronic.sources,
    })
}
