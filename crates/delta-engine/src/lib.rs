//! Delta Engine: run AI agents the Unix way.
//!
//! An agent is a directory (`agent.yaml`, `system_prompt.md`, `context.yaml`, optional
//! `hooks.yaml`); every capability is an external command; every step of a run is appended
//! to `.delta/{run_id}/journal.jsonl` in the workspace, and the conversation is rebuilt from
//! that journal before every LLM call. The modules follow the specification's own nouns; the
//! `delta` binary only parses arguments and calls into them.

pub mod answer;
pub mod budget;
pub mod config;
pub mod context;
pub mod engine;
pub mod environment;
pub mod hooks;
pub mod http;
pub mod janitor;
pub mod journal;
pub mod launch;
pub mod llm;
pub mod mcp;
pub mod message;
pub mod output;
pub mod path_error;
pub mod process;
pub mod quote;
pub mod replay;
pub mod resume;
pub mod run;
pub mod schema;
pub mod secrets;
pub mod subagent;
pub mod tool;
pub mod trajectory;
pub mod workspace;
