//! The token budget (issue 20): `total_max_tokens` and per-source `max_tokens` in
//! context.yaml, `llm.context_window` in agent.yaml. Errors name the file, line, column
//! and the fix.

use super::support::{AGENT_YAML, AgentDir};

fn error_text(dir: &AgentDir) -> String {
    dir.error()
        .to_string()
        .replace(&dir.root().display().to_string(), "[TMP]")
}

#[test]
fn budgets_load_per_source_and_in_total() {
    let dir = AgentDir::new().file(
        "context.yaml",
        "total_max_tokens: 6000\nsources:\n  - type: file\n    path: guide.md\n    on_missing: skip\n    max_tokens: 500\n  - type: journal\n    max_tokens: 4000\n",
    );
    let context = dir.agent().context;
    assert_eq!(context.total_max_tokens, Some(6000));
    assert_eq!(context.source_max_tokens, [Some(500), Some(4000)]);
    assert_eq!(
        (context.max_tokens(0), context.max_tokens(7)),
        (Some(500), None)
    );
}

#[test]
fn zero_budgets_are_rejected_where_written() {
    let total = AgentDir::new().file(
        "context.yaml",
        "total_max_tokens: 0\nsources:\n  - type: journal\n",
    );
    assert_eq!(
        error_text(&total),
        "error: `total_max_tokens` must be at least 1\n  --> [TMP]/agent/context.yaml:1:19\n  \
         = help: give a positive number of tokens, or omit `total_max_tokens` for no limit"
    );
    let source = AgentDir::new().file(
        "context.yaml",
        "sources:\n  - type: journal\n    max_tokens: 0\n",
    );
    assert_eq!(
        error_text(&source),
        "error: `max_tokens` must be at least 1\n  --> [TMP]/agent/context.yaml:3:17\n  \
         = help: give a positive number of tokens, or omit `max_tokens` for no limit"
    );
}

#[test]
fn the_context_window_must_leave_room_for_the_prompt() {
    let dir = AgentDir::new().file(
        "agent.yaml",
        "name: a\nllm:\n  model: m\n  max_tokens: 8192\n  context_window: 8192\n",
    );
    assert_eq!(
        error_text(&dir),
        "error: `max_tokens` (8192) leaves no room for the prompt in `context_window` (8192)\n  \
         --> [TMP]/agent/agent.yaml:4:15\n  = help: lower `max_tokens` (the answer's room) \
         below `context_window`"
    );
    let zero = AgentDir::new().file("agent.yaml", &format!("{AGENT_YAML}  context_window: 0\n"));
    assert!(error_text(&zero).contains("`context_window` must be at least 1"));
    let fine = AgentDir::new().file(
        "agent.yaml",
        &format!("{AGENT_YAML}  context_window: 4096\n  max_tokens: 512\n"),
    );
    let llm = fine.agent().llm;
    assert_eq!(
        (llm.context_window, llm.max_tokens),
        (Some(4096), Some(512))
    );
    // Ours, never sent to the API.
    assert!(!llm.extra.contains_key("context_window"));
}
