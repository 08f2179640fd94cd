//! What one hook invocation did: its effect on the run, or why it failed, and the journal
//! events that record it.

use serde_json::Value;

use crate::config::HookName;
use crate::journal::{EventPayload, HookExecutionAudit, HookStatus, MessageLevel, SystemMessage};

/// The outcome of one hook invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct HookOutcome {
    /// Which hook ran.
    pub hook: HookName,
    /// Its step number (the `{step}` of `io/hooks/{step}_{hook}/`).
    pub step: u32,
    /// `io/hooks/{step}_{hook}/`, relative to the run directory.
    pub io_path_ref: String,
    /// What the engine must apply, or why nothing is applied.
    pub result: Result<HookEffect, HookFailure>,
}

/// What a successful hook asks the engine to do.
#[derive(Debug, Clone, PartialEq)]
pub enum HookEffect {
    /// Nothing: the hook only watched.
    None,
    /// `pre_llm_request`: send this request (a JSON object) instead of the one built.
    ReplaceRequest(Value),
    /// `pre_tool_execution`: do not run the tool; the model receives `observation`.
    SkipTool {
        /// The text the model sees as the tool's result.
        observation: String,
    },
}

/// Why a hook invocation changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookFailure {
    /// The invocation directory or its input files could not be written.
    #[error("could not prepare its I/O directory: {0}")]
    Prepare(String),
    /// The command could not be started.
    #[error("could not start: {0}")]
    Spawn(String),
    /// The command exited with a non-zero code.
    #[error("exited with code {0}")]
    ExitCode(i32),
    /// A signal ended the command (other than the engine's timeout kill).
    #[error("was killed by signal {0}")]
    Signal(i32),
    /// The timeout expired; the command's whole process group was killed.
    #[error("timed out after {timeout_ms} ms and was killed with its child processes")]
    TimedOut {
        /// The configured `timeout_ms`.
        timeout_ms: u64,
    },
    /// stdout or stderr passed the run's output limit; the command's whole process group
    /// was killed (`execution_meta/` keeps the output up to the limit).
    #[error(
        "wrote more than {limit_bytes} bytes to stdout or stderr and was killed with its child processes"
    )]
    OutputLimitExceeded {
        /// The limit per stream, in bytes.
        limit_bytes: u64,
    },
    /// The run was stopped by a signal while the hook ran; its process group was killed.
    #[error("was stopped because the run is being interrupted")]
    Interrupted,
    /// `output/payload_override.dat` (or `final_payload.json`) is not a usable request.
    #[error("wrote an invalid output/{file}: {reason}")]
    InvalidOverride {
        /// The file name inside `output/`.
        file: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// `output/control.json` does not parse as a control document.
    #[error("wrote an invalid output/control.json: {0}")]
    InvalidControl(String),
    /// The command ran, but its execution record could not be written.
    #[error("could not record its execution: {0}")]
    Record(String),
}

impl HookOutcome {
    /// SUCCESS when the hook's effect applies, FAILED otherwise.
    #[must_use]
    pub fn status(&self) -> HookStatus {
        match self.result {
            Ok(_) => HookStatus::Success,
            Err(_) => HookStatus::Failed,
        }
    }

    /// The effect to apply; `None` when the hook failed.
    #[must_use]
    pub fn effect(&self) -> Option<&HookEffect> {
        self.result.as_ref().ok()
    }

    /// The `HOOK_EXECUTION_AUDIT` payload every invocation is recorded with.
    #[must_use]
    pub fn audit(&self) -> HookExecutionAudit {
        HookExecutionAudit {
            hook_name: self.hook.as_str().to_owned(),
            status: self.status(),
            io_path_ref: self.io_path_ref.clone(),
        }
    }

    /// The `SYSTEM_MESSAGE` (level WARN) that tells the agent a hook failed; `None` on
    /// success.
    #[must_use]
    pub fn warning(&self) -> Option<SystemMessage> {
        let failure = self.result.as_ref().err()?;
        let hook = self.hook.as_str();
        let details = &self.io_path_ref;
        let content = match failure {
            // The run is stopping anyway: "it goes on" would be wrong.
            HookFailure::Interrupted => format!("{hook} hook {failure} (details in {details})"),
            HookFailure::Prepare(_)
            | HookFailure::Spawn(_)
            | HookFailure::ExitCode(_)
            | HookFailure::Signal(_)
            | HookFailure::TimedOut { .. }
            | HookFailure::OutputLimitExceeded { .. }
            | HookFailure::InvalidOverride { .. }
            | HookFailure::InvalidControl(_)
            | HookFailure::Record(_) => format!(
                "{hook} hook {failure}; {} (details in {details})",
                consequence(self.hook)
            ),
        };
        Some(SystemMessage {
            level: MessageLevel::Warn,
            content,
        })
    }

    /// The journal events recording this invocation, in order: the audit, then the
    /// warning when the hook failed.
    #[must_use]
    pub fn journal_events(&self) -> Vec<EventPayload> {
        let mut events = vec![EventPayload::HookExecutionAudit(self.audit())];
        events.extend(self.warning().map(EventPayload::SystemMessage));
        events
    }
}

/// What the run does without the failed hook's output.
fn consequence(hook: HookName) -> &'static str {
    match hook {
        HookName::PreLlmRequest => "proceeding with the request as built",
        HookName::PreToolExecution => "proceeding with the tool call",
        HookName::PostLlmResponse
        | HookName::PostToolExecution
        | HookName::OnError
        | HookName::OnRunEnd
        | HookName::OnIterationStart
        | HookName::OnIterationEnd
        | HookName::OnSubagentEnd => "the run goes on",
    }
}
