//! The flusher's histograms: how many writes a group carried, and how long its flush took.

use prometheus::{Histogram, HistogramOpts};

/// Upper bounds, in seconds, of the flush-latency histogram's buckets: an fsync takes from well under a
/// millisecond on a fast disk to seconds on a congested one.
const FLUSH_BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Upper bounds of the group-size histogram's buckets, up to [`super::MAX_GROUP`].
const GROUP_BUCKETS: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

pub(super) fn group_size_histogram() -> Histogram {
    histogram(
        "switchboard_store_group_writes",
        "Writes applied together in one grouped transaction before a flush",
        &GROUP_BUCKETS,
    )
}

pub(super) fn flush_histogram() -> Histogram {
    histogram(
        "switchboard_store_flush_duration_seconds",
        "Duration of the store's group-commit flushes (one fsync covers every writer waiting on it)",
        &FLUSH_BUCKETS,
    )
}

fn histogram(name: &str, help: &str, buckets: &[f64]) -> Histogram {
    Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets.to_vec()))
        .expect("the store's histogram names and buckets are valid")
}
