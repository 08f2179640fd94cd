//! `delta continue`, the Janitor, `ask_human` and `delta list-runs`: the library's takeover
//! on hand-made run directories, and the `delta` binary end to end against mock-llm.
mod ask_human;
mod concurrency;
mod crash;
mod damaged_files;
mod fixture;
mod janitor;
mod list_runs;
mod orchestration;
mod state_table;
#[allow(dead_code)]
mod support;
mod takeover;
