//! The one timestamp format of the API.

use std::fmt::Write;

use chrono::{DateTime, Datelike, Timelike, Utc};

/// strftime form of [`format_timestamp`]: ISO 8601 with microseconds and an explicit `+00:00` offset.
const FORMAT: &str = "%Y-%m-%dT%H:%M:%S%.6f+00:00";

/// ISO 8601 with microseconds and an explicit `+00:00` offset, the one timestamp format of the API.
pub fn format_timestamp(instant: DateTime<Utc>) -> String {
    if !(0..=9999).contains(&instant.year()) {
        return instant.format(FORMAT).to_string();
    }
    // Written field by field: interpreting the strftime string was 3% of a request read, and a read
    // formats a dozen timestamps. A leap second's nanoseconds run past one second; it shows as second 60.
    let nanos = instant.nanosecond();
    let (second, nanos) = match nanos.checked_sub(1_000_000_000) {
        Some(within) => (instant.second() + 1, within),
        None => (instant.second(), nanos),
    };
    let mut out = String::with_capacity(32);
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}+00:00",
        instant.year(),
        instant.month(),
        instant.day(),
        instant.hour(),
        instant.minute(),
        second,
        nanos / 1000
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_have_microseconds_and_an_explicit_utc_offset() {
        let instant: DateTime<Utc> = "2026-11-23T14:00:00.5Z".parse().unwrap();
        assert_eq!(
            format_timestamp(instant),
            "2026-11-23T14:00:00.500000+00:00"
        );
    }

    #[test]
    fn the_fast_path_writes_what_the_strftime_form_writes() {
        let mut micros: i64 = 0;
        for step in 0..5_000i64 {
            // Spread over 1970 to about 2300, with sub-second parts of every width.
            micros = micros.wrapping_add(1_987_654_321_987 + step * 7_919);
            let instant = DateTime::from_timestamp_micros(micros % 10_000_000_000_000_000).unwrap();
            assert_eq!(
                format_timestamp(instant),
                instant.format(FORMAT).to_string()
            );
        }
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .unwrap()
            .and_hms_micro_opt(23, 59, 59, 1_250_000)
            .unwrap()
            .and_utc();
        assert_eq!(format_timestamp(leap), leap.format(FORMAT).to_string());
        let far = DateTime::from_timestamp(253_402_300_800, 0).unwrap();
        assert_eq!(format_timestamp(far), far.format(FORMAT).to_string());
    }
}
