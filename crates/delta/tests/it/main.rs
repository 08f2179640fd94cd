//! The one integration-test binary: a module per area, and one support module with the
//! builder that runs the built binaries and the helpers that start mock-llm. One binary
//! links the crate once, and the areas share their harness without `#[path]` includes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod batch;
mod cli;
mod config;
mod e2e;
mod environment;
mod eval;
mod export;
mod hooks;
mod llm;
mod resume;
mod runstate;
mod schemas;
mod sessions;
mod subagents;
mod tool;
