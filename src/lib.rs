//! Switchboard's HTTP face: configuration, telemetry, authentication, input parsing, the JSON wire format,
//! error envelopes and the routes. Orchestration lives in `switchboard-actors`, persistence in
//! `switchboard-storage`; this crate is the only one that knows HTTP or the wire format.

mod actor_threads;
pub mod audit;
pub mod auth;
pub mod backup;
pub mod cli;
pub mod client_ip;
pub mod configuration;
mod console;
pub mod domain;
pub mod electronic;
pub mod encryption;
pub mod errors;
pub mod healthcheck;
mod http;
mod http_metrics;
pub mod intake;
pub mod keys;
pub mod lease;
pub mod memo;
mod middleware;
pub mod migrate;
mod openapi;
mod panic_log;
pub mod payers;
pub mod provisioning;
pub mod purge;
pub mod recordings;
mod routes;
pub mod secret;
mod standby;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod throttle;
mod tls;
pub mod trace;
pub mod validation;
pub mod voice;
pub mod wire;
