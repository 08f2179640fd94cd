//! The raw tool definition exactly as a user writes it in `agent.yaml` or an imported file.
//!
//! These types mirror the YAML and nothing more: every field that the user may omit is an
//! `Option`, so that the expander can tell "not written" from "written with the default
//! value" (seed 003 §3.7.1 forbids *explicitly* overriding `inject_as`, `position` or `:raw`).
//! Validation and expansion into the internal form live in the expander, not here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One entry of a `tools:` list.
///
/// Exactly one of `exec`, `shell` and `command` must be present, or `agent` for a tool
/// whose call starts a sub-agent run.
// The expander enforces that with seed 003's message rather than serde, so the user sees
// the spec's wording (seed 003 §3.1, seed 000 §2.2.6).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    /// Name offered to the model (function name). Unique within an agent after imports.
    pub name: String,
    /// What the tool does, as the model will read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Direct execution template: tokenized with POSIX shell-word rules, never run by a shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<String>,
    /// Shell script template: run as `sh -c SCRIPT -- ARGS…`, placeholders become `"$N"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Original (v1.1) form: a fixed argv prefix; parameters are injected after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Name of the one parameter passed on standard input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Explicit parameter definitions; with `exec:`/`shell:` they enrich inferred ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<ParamDef>>,
    /// Kill the tool's whole process group after this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// A sub-agent: the directory of the agent a call of this tool runs (relative to this
    /// agent's directory; `.` is this agent itself). The call's answer is the child run's
    /// final answer (docs/subagents.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The sub-agent's task, a template over the parameters (`Review ${file}`). Default:
    /// the value of a required parameter `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Where the sub-agent runs: a directory inside the calling run's workspace (relative,
    /// created when missing). Default: the calling run's workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// One entry of a tool's `parameters:` list.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamDef {
    /// Parameter name, as the model sends it and as `${name}` in a template.
    pub name: String,
    /// Only `string` is supported.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub param_type: Option<String>,
    /// Shown to the model in the function schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the model must supply it; defaults to true unless a `default` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// How the value reaches the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inject_as: Option<InjectAs>,
    /// The flag written before the value when `inject_as: option` (e.g. `--port`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_name: Option<String>,
    /// Value used when the model omits the parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Order among argument parameters (0-based); inferred for `exec:`/`shell:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
    /// Not settable here: write `${name:raw}` in a `shell:` template instead.
    // Accepted only so the expander can reject it with seed 003's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<bool>,
}

/// How a parameter value is handed to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InjectAs {
    /// A separate argv element.
    Argument,
    /// Written to the command's standard input (at most one per tool).
    Stdin,
    /// Two argv elements: `option_name` then the value.
    Option,
}

impl InjectAs {
    /// The spelling used in YAML and in error messages.
    pub fn as_str(self) -> &'static str {
        match self {
            InjectAs::Argument => "argument",
            InjectAs::Stdin => "stdin",
            InjectAs::Option => "option",
        }
    }
}
