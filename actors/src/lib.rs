//! Switchboard's orchestration layer.
//!
//! This crate owns everything that happens over time: the injected [`Clock`] that all "now" readings come
//! from, and (as they land) the capacity scheduler, the supervised request, step and call actors, the dialers
//! and webhook delivery. It speaks to persistence only through `switchboard-storage` and knows nothing of
//! actix-web, HTTP status codes or the JSON wire format.
#![warn(missing_docs)]

pub mod calendar;
pub mod clock;
pub mod cost;
pub mod dialer;
pub mod electronic;
pub mod metrics;
pub mod orchestration;
pub mod panic_text;
pub mod scheduler;
pub mod supervision;
pub mod telemetry;
pub mod webhooks;
pub mod work_queue;

pub use clock::{Clock, ClockError};
pub use metrics::Metrics;
