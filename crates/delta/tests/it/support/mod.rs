//! What every area shares: [`bounded`] runs `delta` under a hang guard and a memory limit;
//! [`cargo`] asks the cargo running the suite about the workspace;
//! [`harness`] runs the built `delta` in a throw-away directory and
//! checks the result; [`run`] starts mock-llm and lays out agents for runs against it;
//! [`snapshot`] holds the suite's one snapshot macro and its filters; [`component`] finds
//! the real programs some tests drive, or fails the test naming what is missing.

pub mod bounded;
pub mod cargo;
pub mod component;
pub mod harness;
pub mod run;
pub mod snapshot;
