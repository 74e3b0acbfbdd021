//! The one timestamp format of the API.

use chrono::{DateTime, Utc};

/// ISO 8601 with microseconds and an explicit `+00:00` offset, the one timestamp format of the API.
pub fn format_timestamp(instant: DateTime<Utc>) -> String {
    instant.format("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string()
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
}
