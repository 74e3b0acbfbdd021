//! The series of one route's answers, resolved once and kept by the caller: finding them by their labels
//! hashes three strings (and formats the status) on every request.

use std::time::Duration;

use prometheus::{Histogram, IntCounter};

use super::Metrics;

/// The counter and the latency histogram of one method, route and status.
#[derive(Clone)]
pub struct HttpSeries {
    count: IntCounter,
    duration: Histogram,
}

impl HttpSeries {
    /// One answer, after `elapsed`.
    pub fn observe(&self, elapsed: Duration) {
        self.count.inc();
        self.duration.observe(elapsed.as_secs_f64());
    }
}

impl Metrics {
    /// The series an answer of `method` on `route` with `status` counts in, for a caller that keeps it
    /// ([`Metrics::http_request`] finds them by their labels every time).
    pub fn http_series(&self, method: &str, route: &str, status: u16) -> HttpSeries {
        HttpSeries {
            count: self
                .http_requests
                .with_label_values(&[method, route, &status.to_string()]),
            duration: self.http_duration.with_label_values(&[method, route]),
        }
    }
}
