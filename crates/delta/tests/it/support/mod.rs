//! What every area shares: [`bounded`] runs `delta` under a hang guard and a memory limit;
//! [`cargo`] asks the cargo running the suite about the workspace;
//! [`harness`] runs the built `delta` in a throw-away directory and
//! checks the result; [`run`] starts mock-llm and lays out agents for runs against it;
//! [`snapshot`] holds the suite's one snapshot macro and its filters.

pub mod bounded;
pub mod cargo;
pub mod harness;
pub mod run;
pub mod snapshot;
