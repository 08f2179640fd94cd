//! The YAML printed by `delta tool expand`: the expanded (v1.1 full) form of every tool.

use serde::Serialize;

use super::spec::ToolSpec;

#[derive(Serialize)]
struct Expanded<'a> {
    tools: &'a [ToolSpec],
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
