//! What `delta tool expand` shows of a run's environment: the command that starts the
//! run's sandbox or container, and each tool's command wrapped as a call runs it. Nothing is
//! checked or started; a run's own parts are placeholders (`<RUN_ID>`, `<RUNTIME_DIR>`).

use std::path::Path;

use serde::Serialize;

use super::{Kind, Prepared, Setting};
use crate::quote::command_line;
use crate::tool::ToolSpec;

#[derive(Serialize)]
struct Shown {
    environment: ShownEnvironment,
}

#[derive(Serialize)]
struct ShownEnvironment {
    kind: Kind,
    /// Once per run.
    start: Option<String>,
    tools: Vec<ShownTool>,
}

#[derive(Serialize)]
struct ShownTool {
    name: String,
    runs_as: String,
}

/// A YAML document with a top-level `environment:`, or nothing on the host.
#[must_use]
pub fn render_wrapped(setting: &Setting<'_>, tools: &[ToolSpec]) -> String {
    if setting.config.kind == Kind::Host {
        return String::new();
    }
    let plan = Prepared::unchecked(setting).plan("<RUN_ID>", Path::new("<RUNTIME_DIR>"));
    let shown = Shown {
        environment: ShownEnvironment {
            kind: setting.config.kind,
            start: plan.start.as_deref().map(command_line),
            tools: tools
                .iter()
                .map(|tool| {
                    let argv: Vec<String> =
                        tool.command.iter().map(|part| part.rendered()).collect();
                    let placed = plan.placement.place(&argv, setting.workspace, &[]);
                    ShownTool {
                        name: tool.name.clone(),
                        runs_as: command_line(&placed.argv),
                    }
                })
                .collect(),
        },
    };
    let options = serde_saphyr::ser_options! { compact_list_indent: false };
    serde_saphyr::to_string_with_options(&shown, options)
        .unwrap_or_else(|e| format!("# could not render the environment: {e}\n"))
}
