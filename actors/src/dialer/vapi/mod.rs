//! The Vapi dialer (`[dialer] kind = "vapi"`): each attempt becomes one Vapi phone call placed with the
//! operator's assistant, carrying the request's inputs and the step's questions as template variables and
//! a per-call structured-data plan generated from the step's schema. Vapi reports back through server
//! messages at `POST /dialers/vapi/events`, authenticated by the `x-vapi-secret` header the call itself
//! asked for; `GET /call/{id}` is read when they are late.
//!
//! `types.rs` holds Vapi's wire shapes, `client.rs` the REST calls, `extraction.rs` the structured-data
//! schema and template variables, `events.rs` the server messages and the secret check, `mapping.rs` the
//! pure translation of an ended call into a [`crate::dialer::CallReport`].

pub mod client;
pub mod dialer;
pub mod events;
pub mod extraction;
pub mod mapping;
pub mod types;

#[cfg(test)]
mod tests;

pub use client::{VapiClient, VapiConfig, VapiError};
pub use dialer::{EventRefusal, EventVerdict, VapiDialer};
