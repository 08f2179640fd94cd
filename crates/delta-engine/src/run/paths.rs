//! The layout of one run directory, `.delta/{run_id}/`, in one place.

use std::path::{Path, PathBuf};

use super::RunId;

/// Name of the engine's directory inside a workspace.
pub const DELTA_DIR: &str = ".delta";

/// Where every file of one run lives.
///
/// ```text
/// .delta/{run_id}/
/// ├── journal.jsonl  metadata.json  engine.log  run.lock
/// ├── io/invocations/{invocation_id}/{request.json,response.json,metadata.json}
/// ├── io/tool_executions/{action_id}/{command.txt,stdout.log,stderr.log,exit_code.txt,duration_ms.txt}
/// ├── io/hooks/{step:03}_{hook_name}/{input,output,execution_meta}/
/// ├── io/claude_hooks/{step:03}_{Event}/{input.json,command.txt,stdout.log,stderr.log,exit_code.txt,duration_ms.txt}
/// └── interaction/{request.json,response.txt}
/// ```
///
/// Paths are computed, never created, here: [`super::create_run`] creates the directory.
/// The `invocation_id`, `action_id` and hook names passed in come from the engine (UUIDs and
/// configured hook names), never from the model, so they are single path components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPaths {
    workspace: PathBuf,
    run_id: RunId,
    dir: PathBuf,
}

impl RunPaths {
    /// The paths of run `run_id` in `workspace` (the directory that contains `.delta/`).
    #[must_use]
    pub fn new(workspace: &Path, run_id: &RunId) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            run_id: run_id.clone(),
            dir: workspace.join(DELTA_DIR).join(run_id.as_str()),
        }
    }

    /// The run's id.
    #[must_use]
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    /// The workspace (CWD of the agent) the run belongs to.
    #[must_use]
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// `.delta/{run_id}/`.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `journal.jsonl`: the append-only event log, the run's single source of truth.
    #[must_use]
    pub fn journal(&self) -> PathBuf {
        self.dir.join("journal.jsonl")
    }

    /// `metadata.json`: status and summary, replaced atomically.
    #[must_use]
    pub fn metadata(&self) -> PathBuf {
        self.dir.join("metadata.json")
    }

    /// `engine.log`: the engine's own diagnostics.
    #[must_use]
    pub fn engine_log(&self) -> PathBuf {
        self.dir.join("engine.log")
    }

    /// `run.lock`: the advisory lock held by the one live process of the run.
    #[must_use]
    pub fn lock(&self) -> PathBuf {
        self.dir.join("run.lock")
    }

    /// `io/`: the audit records of every LLM call, tool execution and hook.
    #[must_use]
    pub fn io_dir(&self) -> PathBuf {
        self.dir.join("io")
    }

    /// `io/invocations/`.
    #[must_use]
    pub fn invocations_dir(&self) -> PathBuf {
        self.io_dir().join("invocations")
    }

    /// `io/invocations/{invocation_id}/`, the target of a THOUGHT's `llm_invocation_ref`.
    #[must_use]
    pub fn invocation_dir(&self, invocation_id: &str) -> PathBuf {
        self.invocations_dir().join(invocation_id)
    }

    /// `io/invocations/{invocation_id}/request.json`: the request body sent to the LLM.
    #[must_use]
    pub fn invocation_request(&self, invocation_id: &str) -> PathBuf {
        self.invocation_dir(invocation_id).join("request.json")
    }

    /// `io/invocations/{invocation_id}/response.json`: the response body received.
    #[must_use]
    pub fn invocation_response(&self, invocation_id: &str) -> PathBuf {
        self.invocation_dir(invocation_id).join("response.json")
    }

    /// `io/invocations/{invocation_id}/response.sse`: the server-sent events of a streamed
    /// call as received (`response.json` then holds the completion they add up to).
    pub fn invocation_stream(&self, invocation_id: &str) -> PathBuf {
        self.invocation_dir(invocation_id).join("response.sse")
    }

    /// `io/invocations/{invocation_id}/metadata.json`: model, timing, usage of the call.
    #[must_use]
    pub fn invocation_metadata(&self, invocation_id: &str) -> PathBuf {
        self.invocation_dir(invocation_id).join("metadata.json")
    }

    /// `io/tool_executions/`.
    #[must_use]
    pub fn tool_executions_dir(&self) -> PathBuf {
        self.io_dir().join("tool_executions")
    }

    /// `io/tool_executions/{action_id}/`, the target of an ACTION_RESULT's `execution_ref`.
    #[must_use]
    pub fn tool_execution_dir(&self, action_id: &str) -> PathBuf {
        self.tool_executions_dir().join(action_id)
    }

    /// `io/tool_executions/{action_id}/command.txt`: the argv that ran.
    #[must_use]
    pub fn tool_command(&self, action_id: &str) -> PathBuf {
        self.tool_execution_dir(action_id).join("command.txt")
    }

    /// `io/tool_executions/{action_id}/stdout.log`: the complete, untruncated stdout.
    #[must_use]
    pub fn tool_stdout(&self, action_id: &str) -> PathBuf {
        self.tool_execution_dir(action_id).join("stdout.log")
    }

    /// `io/tool_executions/{action_id}/stderr.log`: the complete, untruncated stderr.
    #[must_use]
    pub fn tool_stderr(&self, action_id: &str) -> PathBuf {
        self.tool_execution_dir(action_id).join("stderr.log")
    }

    /// `io/tool_executions/{action_id}/exit_code.txt`.
    #[must_use]
    pub fn tool_exit_code(&self, action_id: &str) -> PathBuf {
        self.tool_execution_dir(action_id).join("exit_code.txt")
    }

    /// `io/tool_executions/{action_id}/duration_ms.txt`.
    #[must_use]
    pub fn tool_duration_ms(&self, action_id: &str) -> PathBuf {
        self.tool_execution_dir(action_id).join("duration_ms.txt")
    }

    /// `io/hooks/`.
    #[must_use]
    pub fn hooks_dir(&self) -> PathBuf {
        self.io_dir().join("hooks")
    }

    /// `io/hooks/{step:03}_{hook_name}/`: one hook execution's `input/`, `output/` and
    /// `execution_meta/` (seed 001 §6.4), e.g. `io/hooks/005_pre_llm_request/`.
    #[must_use]
    pub fn hook_dir(&self, step: u32, hook_name: &str) -> PathBuf {
        self.hooks_dir().join(hook_dir_name(step, hook_name))
    }

    /// The `io_path_ref` of a HOOK_EXECUTION_AUDIT for [`Self::hook_dir`]: relative to the
    /// run directory, with a trailing slash, e.g. `io/hooks/005_pre_llm_request/`.
    #[must_use]
    pub fn hook_io_path_ref(step: u32, hook_name: &str) -> String {
        format!("io/hooks/{}/", hook_dir_name(step, hook_name))
    }

    /// `io/claude_hooks/`: one `{step:03}_{Event}/` per hook of Claude Code's protocol run.
    #[must_use]
    pub fn claude_hooks_dir(&self) -> PathBuf {
        self.io_dir().join("claude_hooks")
    }

    /// `interaction/`: present only while an asynchronous `ask_human` waits for an answer.
    #[must_use]
    pub fn interaction_dir(&self) -> PathBuf {
        self.dir.join("interaction")
    }

    /// `interaction/request.json`: the question (see [`super::InteractionRequest`]).
    #[must_use]
    pub fn interaction_request(&self) -> PathBuf {
        self.interaction_dir().join("request.json")
    }

    /// `interaction/response.txt`: the answer, written by the user.
    #[must_use]
    pub fn interaction_response(&self) -> PathBuf {
        self.interaction_dir().join("response.txt")
    }
}

fn hook_dir_name(step: u32, hook_name: &str) -> String {
    format!("{step:03}_{hook_name}")
}
