//! Hooks in Claude Code's protocol, end to end: the scripts of `examples/claude-hooks/`
//! (written to Claude Code's hooks reference) in runs of the built `delta` against
//! mock-llm, unattended and continued; stacked rewriters; ask/defer approvals around
//! pauses, budgets and kill -9; every firing in the journal, the stream, the view, the
//! exports and replay; the runner's environment and timeout; docs/hooks.md's examples.

mod approval;
mod docs;
mod example;
mod runner;
mod scripts;
mod stacked;
mod support;
mod visibility;
