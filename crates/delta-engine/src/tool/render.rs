//! The YAML printed by `delta tool expand`: the expanded (v1.1 full) form of every tool.

use serde::Serialize;

use super::agent::AgentTool;
use super::spec::ToolSpec;

#[derive(Serialize)]
struct Expanded<'a> {
    tools: &'a [ToolSpec],
}

#[derive(Serialize)]
struct Agents<'a> {
    agent_tools: &'a [AgentTool],
}

/// A YAML document with a top-level `tools:` list, one entry per tool in the seed 003 §4
/// form, e.g. `command: ["sh", "-c", "cat \"$1\" | wc -l", "--"]`.
pub fn render_expanded(tools: &[ToolSpec]) -> String {
    // Serializing plain strings, numbers and sequences into a String has no failure mode
    // serde-saphyr can hit; the fallback keeps this infallible without a panic path.
    // Indented lists, as the seeds print them (`parameters:` then `  - name: …`).
    let options = serde_saphyr::ser_options! { compact_list_indent: false };
    serde_saphyr::to_string_with_options(&Expanded { tools }, options)
        .unwrap_or_else(|e| format!("# could not render the expanded tools: {e}\n"))
}

/// The `agent_tools:` that `delta tool expand` prints after the tools (empty when there are
/// none): each sub-agent's directory, the task's template and the parameters.
pub fn render_agent_tools(agent_tools: &[AgentTool]) -> String {
    if agent_tools.is_empty() {
        return String::new();
    }
    let options = serde_saphyr::ser_options! { compact_list_indent: false };
    serde_saphyr::to_string_with_options(&Agents { agent_tools }, options)
        .unwrap_or_else(|e| format!("# could not render the agent tools: {e}\n"))
}
