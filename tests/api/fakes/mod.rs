//! Local fakes of outside platforms: real HTTP servers on random ports, faithful to each platform's
//! documented request and response shapes, recording what they received.

pub mod stedi;
