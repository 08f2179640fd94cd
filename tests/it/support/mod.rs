//! What every area shares: [`harness`] runs the built `delta` in a throw-away directory and
//! checks the result; [`run`] starts mock-llm and lays out agents for runs against it.

pub mod harness;
pub mod run;
