//! End-to-end tests of `delta run` (and of the commands built on it: fork, replay): the built binary against mock-llm on 127.0.0.1, in
//! throw-away directories. What is checked is what a user or orchestrator can see: exit
//! codes, stdout, stderr, and the files under `.delta/`.

mod apis;
mod concurrency;
mod context_window;
mod credentials_on_disk;
mod demo;
mod docs_commands;
mod faults;
mod fork;
mod formats;
mod hello_world;
mod hostile_context;
mod live_stream;
mod mcp;
mod mcp_edges;
pub(crate) mod real_llm;
mod replay;
mod result_line;
mod run_files;
mod secrets;
mod servers;
mod sessions_examples;
mod signals;
mod stateless;
mod tool_output;
mod unattended;
mod workspaces;
