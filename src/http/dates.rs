//! Day-valued query parameters (`dateFrom`, `dateTo`).

use chrono::NaiveDate;

use crate::errors::ApiError;

/// A strict `YYYY-MM-DD` day; absent or blank is `None`; anything else is 400 `INVALID_REQUEST` naming the
/// parameter.
pub(crate) fn parse_day(name: &str, raw: Option<&str>) -> Result<Option<NaiveDate>, ApiError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty()) else {
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
