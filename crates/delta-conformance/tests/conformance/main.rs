//! Integration tests of `delta-conformance`: the committed scenario schema, `validate` on
//! hand-broken files, and whole suite runs against the workspace's `delta` (which must
//! pass every scenario, twice with the same results) and against deliberately broken
//! wrappers of it (which must fail exactly the scenarios guarding what they break).
//!
//! The binaries come from the same build: `delta-conformance` through
//! `CARGO_BIN_EXE_delta-conformance`, `delta` and `mock-llm` next to it in the target
//! directory. `cargo test --workspace` builds all three before running any test (cargo
//! builds a package's binaries for its integration tests, and every package here has
//! some); see `support::sibling`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod broken;
mod citations;
mod cli;
mod schema;
mod sessions;
mod suite;
mod support;
mod validate;
