//! The request endpoints (service-interface 4.6-4.8).

pub mod bodies;
pub mod create;
pub mod get;
pub mod list;
