//! Local fakes of outside platforms: real HTTP servers started by the tests, faithful to the platforms'
//! documented shapes.

pub mod retell;
pub mod vapi;
