//! Black-box tests: each starts a real Switchboard (random port, temporary data directory) and talks HTTP.

mod admin;
mod agent;
mod auth;
mod binary;
mod console;
mod dispatch;
mod envelopes;
mod health;
mod helpers;
mod metrics;
mod openapi;
mod orchestration;
mod payer_lookup;
mod receiver;
mod requests_create;
mod requests_read;
mod scheduling;
mod schemas;
mod shutdown;
mod supervision;
mod trace_cli;
mod webhooks;
