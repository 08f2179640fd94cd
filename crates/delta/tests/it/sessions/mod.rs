//! Integration tests for `delta-sessions`: every test drives the built binary in its own
//! temporary workspace, the way an agent's tool calls would.
mod support;

mod bash;
mod chosen_ids;
mod concurrency;
mod errors;
mod large_output;
mod lifecycle;
mod other_shells;
mod python;
mod schemas;
mod storage;
mod timeouts;
