//! Agent configuration: loading agent directories, the errors users see (pinned with insta
//! snapshots), successful loads, and a fuzz test of the string-level parsers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod errors;
mod fuzz;
mod loads;
mod support;
mod warnings;
