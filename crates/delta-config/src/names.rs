//! The vocabulary both layers of the configuration share: the names and defaults that
//! the YAML mirror (`raw`) parses into and the validated types (`hooks`, `context`) keep.

use schemars::JsonSchema;
use serde::Deserialize;

/// Timeout of a hook (and of a context generator) when none is configured.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The lifecycle points at which a hook can run (seed 000 §2.7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookName {
    /// Before each LLM call; may replace the request.
    PreLlmRequest,
    /// After each LLM response.
    PostLlmResponse,
    /// Before each tool call; may skip it.
    PreToolExecution,
    /// After each tool call.
    PostToolExecution,
    /// On any error.
    OnError,
    /// When the run ends, whatever its outcome.
    OnRunEnd,
    /// At the start of each Think-Act-Observe iteration.
    OnIterationStart,
    /// At the end of each Think-Act-Observe iteration.
    OnIterationEnd,
    /// When a sub-agent run one of the run's agent tools started ends its part, before
    /// the call's `post_tool_execution` (an extension: docs/subagents.md).
    OnSubagentEnd,
}

impl HookName {
    /// Every hook, in lifecycle order.
    pub const ALL: [HookName; 9] = [
        HookName::PreLlmRequest,
        HookName::PostLlmResponse,
        HookName::PreToolExecution,
        HookName::PostToolExecution,
        HookName::OnError,
        HookName::OnRunEnd,
        HookName::OnIterationStart,
        HookName::OnIterationEnd,
        HookName::OnSubagentEnd,
    ];

    /// The canonical name, as written in hooks.yaml and in `io/hooks/` directory names.
    pub fn as_str(self) -> &'static str {
        match self {
            HookName::PreLlmRequest => "pre_llm_request",
            HookName::PostLlmResponse => "post_llm_response",
            HookName::PreToolExecution => "pre_tool_execution",
            HookName::PostToolExecution => "post_tool_execution",
            HookName::OnError => "on_error",
            HookName::OnRunEnd => "on_run_end",
            HookName::OnIterationStart => "on_iteration_start",
            HookName::OnIterationEnd => "on_iteration_end",
            HookName::OnSubagentEnd => "on_subagent_end",
        }
    }

    /// The short name accepted for compatibility with earlier configurations.
    pub fn alias(self) -> Option<&'static str> {
        match self {
            HookName::PreLlmRequest => Some("pre_llm_req"),
            HookName::PostLlmResponse => Some("post_llm_resp"),
            HookName::PreToolExecution => Some("pre_tool_exec"),
            HookName::PostToolExecution => Some("post_tool_exec"),
            HookName::OnError
            | HookName::OnRunEnd
            | HookName::OnIterationStart
            | HookName::OnIterationEnd
            | HookName::OnSubagentEnd => None,
        }
    }

    /// The hook a name (canonical or alias) refers to.
    pub fn from_name(name: &str) -> Option<HookName> {
        HookName::ALL
            .into_iter()
            .find(|hook| hook.as_str() == name || hook.alias() == Some(name))
    }

    /// When the hook runs, for documentation and schemas.
    pub fn description(self) -> &'static str {
        match self {
            HookName::PreLlmRequest => {
                "Before each LLM call; output/payload_override.dat replaces the request."
            }
            HookName::PostLlmResponse => "After each LLM response.",
            HookName::PreToolExecution => {
                "Before each tool call; output/control.json may say {\"skip\": true}."
            }
            HookName::PostToolExecution => "After each tool call.",
            HookName::OnError => "On any error.",
            HookName::OnRunEnd => "When the run ends, whatever its outcome.",
            HookName::OnIterationStart => "At the start of each Think-Act-Observe iteration.",
            HookName::OnIterationEnd => "At the end of each Think-Act-Observe iteration.",
            HookName::OnSubagentEnd => {
                "When a sub-agent run started by one of the run's agent tools ends its part."
            }
        }
    }
}

/// The Claude Code hook events Delta fires (docs/hooks.md, "Claude Code hooks"), in the
/// order a run meets them. Their names are Claude Code's, as written in `hooks.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ClaudeEvent {
    /// A process starts driving the run (`source`: `startup` or `resume`).
    SessionStart,
    /// The task, and every instruction `delta continue -m` gives.
    UserPromptSubmit,
    /// A tool call is about to run; may allow, deny, ask, defer or rewrite it.
    PreToolUse,
    /// A tool call ran (failed ones too, with `error`).
    PostToolUse,
    /// A tool call ran and failed.
    PostToolUseFailure,
    /// The run pauses for a human.
    Notification,
    /// The context builder is about to leave iterations out of the request.
    PreCompact,
    /// The model gave its final answer; may send it back to work.
    Stop,
    /// A process stops driving the run.
    SessionEnd,
}

impl ClaudeEvent {
    /// Every event Delta fires.
    pub const ALL: [ClaudeEvent; 9] = [
        ClaudeEvent::SessionStart,
        ClaudeEvent::UserPromptSubmit,
        ClaudeEvent::PreToolUse,
        ClaudeEvent::PostToolUse,
        ClaudeEvent::PostToolUseFailure,
        ClaudeEvent::Notification,
        ClaudeEvent::PreCompact,
        ClaudeEvent::Stop,
        ClaudeEvent::SessionEnd,
    ];

    /// Claude Code's name of the event (`hook_event_name`, the key in `hooks.json`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClaudeEvent::SessionStart => "SessionStart",
            ClaudeEvent::UserPromptSubmit => "UserPromptSubmit",
            ClaudeEvent::PreToolUse => "PreToolUse",
            ClaudeEvent::PostToolUse => "PostToolUse",
            ClaudeEvent::PostToolUseFailure => "PostToolUseFailure",
            ClaudeEvent::Notification => "Notification",
            ClaudeEvent::PreCompact => "PreCompact",
            ClaudeEvent::Stop => "Stop",
            ClaudeEvent::SessionEnd => "SessionEnd",
        }
    }

    /// The event a name refers to (names are case-sensitive, as in Claude Code).
    pub fn from_name(name: &str) -> Option<ClaudeEvent> {
        ClaudeEvent::ALL
            .into_iter()
            .find(|event| event.as_str() == name)
    }

    /// Whether a group's `matcher` selects among the event's firings. Claude Code ignores
    /// the matcher of the other events, and so does Delta.
    pub fn has_matcher(self) -> bool {
        match self {
            ClaudeEvent::SessionStart
            | ClaudeEvent::PreToolUse
            | ClaudeEvent::PostToolUse
            | ClaudeEvent::PostToolUseFailure
            | ClaudeEvent::Notification
            | ClaudeEvent::PreCompact
            | ClaudeEvent::SessionEnd => true,
            ClaudeEvent::UserPromptSubmit | ClaudeEvent::Stop => false,
        }
    }

    /// When Delta fires the event, for documentation and schemas.
    pub fn description(self) -> &'static str {
        match self {
            ClaudeEvent::SessionStart => {
                "When a process starts driving the run: `source` startup (run, replay) or resume (continue, fork). Plain stdout and additionalContext reach the model."
            }
            ClaudeEvent::UserPromptSubmit => {
                "The task, and each instruction of `delta continue -m`. Exit 2 or decision block refuses it (the run fails, PromptBlocked); plain stdout and additionalContext reach the model."
            }
            ClaudeEvent::PreToolUse => {
                "Before each tool call. permissionDecision allow, deny, ask or defer; updatedInput rewrites the call; exit 2 denies it."
            }
            ClaudeEvent::PostToolUse => {
                "After each tool call that ran, failed ones included (with `error`). Exit 2 or decision block sends the reason to the model."
            }
            ClaudeEvent::PostToolUseFailure => "After each tool call that ran and failed.",
            ClaudeEvent::Notification => {
                "When the run pauses for a human (permission_prompt for a hook's ask or defer, idle_prompt for ask_human)."
            }
            ClaudeEvent::PreCompact => {
                "Before a request from which the context builder left out more iterations than before (trigger auto)."
            }
            ClaudeEvent::Stop => {
                "When the model gives its final answer. Exit 2 or decision block sends it back to work with the reason."
            }
            ClaudeEvent::SessionEnd => {
                "When a process stops driving the run, whatever the outcome (reason other, and Delta's status)."
            }
        }
    }
}

/// Claude Code events Delta accepts in a configuration but never fires, with why: a
/// published `hooks.json` that has them still loads (with a warning per event).
pub const CLAUDE_EVENTS_NEVER_FIRED: [(&str, &str); 22] = [
    (
        "PermissionRequest",
        "Delta has no permission dialog; a PreToolUse hook's ask or defer is its approval",
    ),
    ("PermissionDenied", "Delta has no permission rules"),
    ("SubagentStart", "Delta has no sub-agents yet"),
    ("SubagentStop", "Delta has no sub-agents yet"),
    (
        "PostCompact",
        "Delta never rewrites the conversation; PreCompact fires when iterations are left out",
    ),
    ("Setup", "Delta has no setup step"),
    ("InstructionsLoaded", "Delta has no instruction files"),
    ("UserPromptExpansion", "Delta has no prompt expansion"),
    ("MessageDisplay", "Delta has no chat display"),
    ("PostToolBatch", "Delta runs a turn's tool calls one by one"),
    ("TaskCreated", "Delta has no task list"),
    ("TaskCompleted", "Delta has no task list"),
    ("StopFailure", "a failed run ends with SessionEnd"),
    ("TeammateIdle", "Delta has no teams"),
    (
        "ConfigChange",
        "Delta reads the configuration once per process",
    ),
    ("CwdChanged", "a run's working directory is its workspace"),
    (
        "DirectoryAdded",
        "a run's working directory is its workspace",
    ),
    ("FileChanged", "Delta watches no files"),
    ("WorktreeCreate", "Delta makes no worktrees"),
    ("WorktreeRemove", "Delta makes no worktrees"),
    ("Elicitation", "Delta's MCP client asks no questions"),
    ("ElicitationResult", "Delta's MCP client asks no questions"),
];

/// What to do when a source's file does not exist.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnMissing {
    /// Fail (the default).
    #[default]
    Error,
    /// Leave the source out.
    Skip,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_round_trip() {
        for hook in HookName::ALL {
            assert_eq!(HookName::from_name(hook.as_str()), Some(hook));
            if let Some(alias) = hook.alias() {
                assert_eq!(HookName::from_name(alias), Some(hook));
            }
        }
        assert_eq!(
            HookName::from_name("pre_tool_exec"),
            Some(HookName::PreToolExecution)
        );
        assert_eq!(HookName::from_name("pre_tool"), None);
    }
}
