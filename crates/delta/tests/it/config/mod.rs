//! Agent configuration: loading agent directories, the errors users see (pinned with insta
//! snapshots), successful loads, and a fuzz test of the string-level parsers.

mod budget;
mod errors;
mod fuzz;
mod loads;
mod mcp;
mod support;
mod warnings;
