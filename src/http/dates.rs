//! Day-valued query parameters (`dateFrom`, `dateTo`).

use chrono::NaiveDate;

use crate::errors::ApiError;

/// A strict `YYYY-MM-DD` day; absent is `None`; anything else is 400 `INVALID_REQUEST` naming the
/// parameter. Only an absent parameter takes the default: `dateFrom=` (empty or blank) is a date the
/// client wrote and got wrong, so it answers 400 like any other invalid date.
pub(crate) fn parse_day(name: &str, raw: Option<&str>) -> Result<Option<NaiveDate>, ApiError> {
    let Some(raw) = raw.map(str::trim) else {
        return Ok(None);
    };
    let strict = raw.len() == 10 && raw.as_bytes()[4] == b'-' && raw.as_bytes()[7] == b'-';
    match NaiveDate::parse_from_str(raw, "%Y-%m-%d") {
        Ok(day) if strict => Ok(Some(day)),
        _ => Err(ApiError::invalid_request(format!(
            "{name} must be a valid YYYY-MM-DD date, got {raw:?}"
        ))),
    }
}
