//! Hooks in Claude Code's protocol (docs/hooks.md, "Claude Code hooks"), beside the seed
//! protocol: a command reads the event as JSON on stdin and answers with its exit code and
//! stdout, so that hook scripts published for Claude Code run unchanged.
//!
//! `event` builds what a hook reads, `runner` runs one hook and records it, `reply` reads
//! its answer, `ruling` folds the answers of a firing's hooks into what the engine applies
//! (the engine's side is `engine/claude.rs`).

mod approval;
mod event;
mod reply;
mod ruling;
mod runner;

pub use approval::{
    approval_prompt, approves, denied_observation, refused_observation, stopped_observation,
    unattended_observation,
};
pub use event::{ClaudeInput, NotificationType, Session, StartSource, ToolUse};
pub use reply::{CLAUDE_TEXT_LIMIT, Reply, parse};
pub use ruling::Ruling;
pub use runner::{ClaudeRunner, Firing};
