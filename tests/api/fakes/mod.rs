//! Local fakes of outside platforms: real HTTP servers on random ports started by the tests, faithful to
//! each platform's documented request and response shapes, recording what they received.

pub mod retell;
pub mod stedi;
pub mod vapi;
