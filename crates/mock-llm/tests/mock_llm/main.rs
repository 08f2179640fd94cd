//! Integration tests of mock-llm: script parsing, the HTTP server, the binary, the schema.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod binary;
mod prompt_cache;
mod schema;
mod script;
mod server;
mod strict;
mod strict_anthropic;
mod strict_responses;
mod support;
mod window;
