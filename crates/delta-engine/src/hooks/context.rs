//! The documents exchanged with a hook: `input/context.json` (engine → hook) and
//! `output/control.json` (hook → engine). Both have published schemas.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::journal::ActionStatus;
use crate::run::{ErrorInfo, FinalStatus, Timestamp};

/// `input/context.json`: what triggered a hook, where the run lives, and the hook's own
/// fields (selected by `hook_name`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    title = "Delta Engine hook context (.delta/{run_id}/io/hooks/{step}_{hook}/input/context.json)"
)]
pub struct HookContext {
    /// The run's id (also `$DELTA_RUN_ID`).
    pub run_id: String,
    /// The Think-Act-Observe iteration the hook belongs to, counted from 1 over the whole
    /// run (also `$ITERATION_COUNT`); 0 when no iteration has started yet.
    pub iteration: u32,
    /// Position of this invocation among all hook invocations of the run, from 1; the
    /// `{step}` of the directory name.
    #[schemars(range(min = 1))]
    pub step: u32,
    /// When the engine prepared the invocation.
    pub timestamp: Timestamp,
    /// Absolute path of the workspace: the hook's working directory.
    pub workspace: String,
    /// Absolute path of `.delta/{run_id}/` (also `$RUN_DIR`).
    pub run_dir: String,
    /// Absolute path of `journal.jsonl` (also `$JOURNAL_PATH`).
    pub journal_path: String,
    /// Absolute path of this invocation's directory, with a trailing `/` (also
    /// `$DELTA_HOOK_IO_PATH`).
    pub io_path: String,
    /// `hook_name` and the fields that belong to it.
    #[serde(flatten)]
    pub details: HookDetails,
}

/// The hook's name and its own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "hook_name", rename_all = "snake_case")]
pub enum HookDetails {
    /// Before each LLM call. `input/payload.dat` holds the request about to be sent.
    PreLlmRequest,
    /// After each successful LLM call. `input/payload.dat` holds the response body as
    /// received.
    PostLlmResponse,
    /// Before a tool call runs. `input/payload.dat` holds the call.
    PreToolExecution {
        /// Engine id of the execution (`io/tool_executions/{action_id}/`).
        action_id: String,
        /// The model's id for the call.
        tool_call_id: String,
        /// The tool's name (also `$TOOL_NAME`).
        tool_name: String,
        /// The arguments the model gave.
        tool_args: Map<String, Value>,
        /// The command line that will run, quoted for display; null for built-in tools and
        /// for calls whose arguments do not fit the tool.
        resolved_command: Option<String>,
    },
    /// After a tool call ran (or was blocked). `input/payload.dat` holds the call and its
    /// result.
    PostToolExecution {
        /// Engine id of the execution.
        action_id: String,
        /// The model's id for the call.
        tool_call_id: String,
        /// The tool's name (also `$TOOL_NAME`).
        tool_name: String,
        /// The arguments the model gave.
        tool_args: Map<String, Value>,
        /// Outcome of the call.
        status: ActionStatus,
        /// The command's exit code; null when it did not exit normally or did not run.
        exit_code: Option<i32>,
    },
    /// An error reached the journal. `input/payload.dat` holds it as JSON.
    OnError {
        /// The error (its `message` is also `$ERROR_MESSAGE`).
        error: ErrorInfo,
    },
    /// The process is leaving the run. `input/payload.dat` holds status, error and result.
    OnRunEnd {
        /// How the run ends (also `$RUN_STATUS`).
        status: FinalStatus,
        /// Why, when FAILED or INTERRUPTED.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorInfo>,
    },
    /// A Think-Act-Observe iteration starts.
    OnIterationStart,
    /// A Think-Act-Observe iteration ended.
    OnIterationEnd,
    /// A sub-agent run this run's agent tool started ended its part (completed, failed,
    /// stopped, or paused for a human's answer). `input/payload.dat` holds its status,
    /// error and result.
    OnSubagentEnd {
        /// The agent call that started it.
        action_id: String,
        /// The agent tool called.
        tool_name: String,
        /// The sub-agent run (also `$SUBAGENT_RUN_ID`).
        subagent_run_id: String,
        /// How it ended (also `$SUBAGENT_STATUS`).
        status: FinalStatus,
        /// Why, when FAILED or INTERRUPTED.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorInfo>,
    },
}

/// `output/control.json` of `pre_tool_execution`: `{"skip": true, "observation": "why"}`
/// blocks the tool call, and the model receives the observation instead of its output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Delta Engine hook control (.delta/{run_id}/io/hooks/{step}_pre_tool_execution/output/control.json)"
)]
pub struct HookControl {
    /// Block the tool call.
    #[serde(default)]
    pub skip: bool,
    /// What the model is told instead of the tool's output, when `skip` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
}

impl HookControl {
    /// Parses the bytes of a `control.json`: a JSON object with at most `skip` and
    /// `observation`. The error says what is wrong, for the hook's warning.
    ///
    /// # Errors
    /// The JSON syntax error, or why the document is not a control object.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        const EXPECTED: &str = "expected {\"skip\": true, \"observation\": \"why\"}";
        // Through a Value first: serde would also read a struct from a JSON array.
        let value: Value = serde_json::from_slice(bytes).map_err(|e| format!("{e}; {EXPECTED}"))?;
        if !value.is_object() {
            return Err(format!("not a JSON object; {EXPECTED}"));
        }
        serde_json::from_value(value).map_err(|e| format!("{e}; {EXPECTED}"))
    }
}
