//! Faithful local fakes of the outside platforms Switchboard talks to, started by the tests.

// Some scenarios and inspection helpers serve the server-level tests only.
#[allow(dead_code)]
pub mod vapi;
