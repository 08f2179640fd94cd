//! The events of Claude Code's protocol as Delta fires them, and the JSON a hook reads on
//! stdin: the common fields Claude Code sends with every event, then the event's own.
//!
//! Adding an event (issue 29's SubagentStop) is a variant here with its fields, its name
//! in [`ClaudeEvent`] and one call of the engine's dispatcher where the run meets it.

use serde_json::{Map, Value, json};

use crate::config::ClaudeEvent;
use crate::run::RunStatus;

/// The fields every event carries, the same for a whole process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// `session_id`: the run id (a continued run keeps it, as a resumed Claude session does).
    pub session_id: String,
    /// `transcript_path`: the run's journal.jsonl (Delta's format, not Claude Code's).
    pub transcript_path: String,
    /// `cwd`: the workspace.
    pub cwd: String,
    /// `permission_mode`: `default`, or `dontAsk` when nobody can be asked
    /// (`--no-ask-human`).
    pub permission_mode: &'static str,
}

/// A tool call as the tool events describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// `tool_name`: the tool's name; an MCP tool's is `mcp__<server>__<tool>`.
    pub tool_name: String,
    /// `tool_input`: the call's arguments.
    pub tool_input: Map<String, Value>,
    /// `tool_use_id`: the model's id for the call.
    pub tool_use_id: String,
}

/// Why a process started driving the run (`SessionStart`'s `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSource {
    /// `delta run`, `delta replay`.
    Startup,
    /// `delta continue` (a fork's first continue too).
    Resume,
}

/// Why a human is needed (`Notification`'s `notification_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationType {
    /// A PreToolUse hook asked for (or deferred to) a human's approval.
    PermissionPrompt,
    /// The model asked the human a question (`ask_human`).
    IdlePrompt,
}

/// One firing's event, with the data its hooks receive.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaudeInput {
    /// A process starts driving the run.
    SessionStart {
        /// `startup` or `resume`.
        source: StartSource,
        /// The agent's model.
        model: String,
    },
    /// The task, or an instruction of `delta continue -m`.
    UserPromptSubmit {
        /// The text.
        prompt: String,
    },
    /// A tool call is about to run.
    PreToolUse(ToolUse),
    /// A tool call ran (successfully or not).
    PostToolUse {
        /// The call, with the input that ran.
        tool: ToolUse,
        /// `tool_response`.
        response: Value,
        /// How long it ran.
        duration_ms: u64,
        /// What went wrong, when it failed.
        error: Option<String>,
    },
    /// A tool call ran and failed.
    PostToolUseFailure {
        /// The call, with the input that ran.
        tool: ToolUse,
        /// What went wrong.
        error: String,
        /// Whether it was stopped (timeout, signal, budget) rather than failing by itself.
        interrupted: bool,
        /// How long it ran.
        duration_ms: u64,
    },
    /// The run waits for a human.
    Notification {
        /// What the human is asked.
        message: String,
        /// Why.
        kind: NotificationType,
    },
    /// The context builder left out more iterations than before.
    PreCompact,
    /// The model gave its final answer.
    Stop {
        /// The last answer was already sent back by a Stop hook.
        stop_hook_active: bool,
        /// The answer.
        last_assistant_message: String,
    },
    /// A process stops driving the run.
    SessionEnd {
        /// How this process leaves it.
        status: RunStatus,
    },
}

impl ClaudeInput {
    /// The event this is a firing of.
    #[must_use]
    pub fn event(&self) -> ClaudeEvent {
        match self {
            ClaudeInput::SessionStart { .. } => ClaudeEvent::SessionStart,
            ClaudeInput::UserPromptSubmit { .. } => ClaudeEvent::UserPromptSubmit,
            ClaudeInput::PreToolUse(_) => ClaudeEvent::PreToolUse,
            ClaudeInput::PostToolUse { .. } => ClaudeEvent::PostToolUse,
            ClaudeInput::PostToolUseFailure { .. } => ClaudeEvent::PostToolUseFailure,
            ClaudeInput::Notification { .. } => ClaudeEvent::Notification,
            ClaudeInput::PreCompact => ClaudeEvent::PreCompact,
            ClaudeInput::Stop { .. } => ClaudeEvent::Stop,
            ClaudeInput::SessionEnd { .. } => ClaudeEvent::SessionEnd,
        }
    }

    /// The tool call of a tool event.
    #[must_use]
    pub fn tool(&self) -> Option<&ToolUse> {
        match self {
            ClaudeInput::PreToolUse(tool)
            | ClaudeInput::PostToolUse { tool, .. }
            | ClaudeInput::PostToolUseFailure { tool, .. } => Some(tool),
            ClaudeInput::SessionStart { .. }
            | ClaudeInput::UserPromptSubmit { .. }
            | ClaudeInput::Notification { .. }
            | ClaudeInput::PreCompact
            | ClaudeInput::Stop { .. }
            | ClaudeInput::SessionEnd { .. } => None,
        }
    }

    /// What the groups' matchers are tested against (`None`: the event has no matcher).
    #[must_use]
    pub fn matched(&self) -> Option<&str> {
        match self {
            ClaudeInput::SessionStart { source, .. } => Some(source.as_str()),
            ClaudeInput::PreToolUse(tool)
            | ClaudeInput::PostToolUse { tool, .. }
            | ClaudeInput::PostToolUseFailure { tool, .. } => Some(&tool.tool_name),
            ClaudeInput::Notification { kind, .. } => Some(kind.as_str()),
            ClaudeInput::PreCompact => Some(COMPACT_TRIGGER),
            ClaudeInput::SessionEnd { .. } => Some(END_REASON),
            ClaudeInput::UserPromptSubmit { .. } | ClaudeInput::Stop { .. } => None,
        }
    }

    /// The stdin of one hook: the common fields, then the event's. `tool_input`, when
    /// given, replaces the call's input (what the PreToolUse hooks before this one made
    /// of it).
    #[must_use]
    pub fn stdin(&self, session: &Session, tool_input: Option<&Map<String, Value>>) -> Value {
        let mut fields = Map::new();
        fields.insert("session_id".into(), json!(session.session_id));
        fields.insert("transcript_path".into(), json!(session.transcript_path));
        fields.insert("cwd".into(), json!(session.cwd));
        fields.insert("permission_mode".into(), json!(session.permission_mode));
        fields.insert("hook_event_name".into(), json!(self.event().as_str()));
        if let Some(tool) = self.tool() {
            fields.insert("tool_name".into(), json!(tool.tool_name));
            let input = tool_input.unwrap_or(&tool.tool_input);
            fields.insert("tool_input".into(), Value::Object(input.clone()));
            fields.insert("tool_use_id".into(), json!(tool.tool_use_id));
        }
        let own = match self {
            ClaudeInput::SessionStart { source, model } => {
                json!({"source": source.as_str(), "model": model})
            }
            ClaudeInput::UserPromptSubmit { prompt } => json!({"prompt": prompt}),
            ClaudeInput::PreToolUse(_) => json!({}),
            ClaudeInput::PostToolUse {
                response,
                duration_ms,
                error,
                ..
            } => {
                let mut own = json!({"tool_response": response, "duration_ms": duration_ms});
                if let (Some(error), Some(object)) = (error, own.as_object_mut()) {
                    object.insert("error".into(), json!(error));
                }
                own
            }
            ClaudeInput::PostToolUseFailure {
                error,
                interrupted,
                duration_ms,
                ..
            } => json!({"error": error, "is_interrupt": interrupted, "duration_ms": duration_ms}),
            ClaudeInput::Notification { message, kind } => json!({
                "message": message,
                "title": "Delta",
                "notification_type": kind.as_str(),
            }),
            ClaudeInput::PreCompact => {
                json!({"trigger": COMPACT_TRIGGER, "custom_instructions": ""})
            }
            ClaudeInput::Stop {
                stop_hook_active,
                last_assistant_message,
            } => json!({
                "stop_hook_active": stop_hook_active,
                "last_assistant_message": last_assistant_message,
            }),
            ClaudeInput::SessionEnd { status } => {
                json!({"reason": END_REASON, "status": status.as_str()})
            }
        };
        if let Value::Object(own) = own {
            fields.extend(own);
        }
        Value::Object(fields)
    }
}

/// PreCompact's `trigger`: Delta leaves iterations out on its own, never on request.
const COMPACT_TRIGGER: &str = "auto";

/// SessionEnd's `reason`: none of Claude Code's (`clear`, `logout`, …) is a run's ending;
/// Delta's own status is in `status`.
const END_REASON: &str = "other";

impl StartSource {
    /// `startup` or `resume`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            StartSource::Startup => "startup",
            StartSource::Resume => "resume",
        }
    }
}

impl NotificationType {
    /// `permission_prompt` or `idle_prompt`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            NotificationType::PermissionPrompt => "permission_prompt",
            NotificationType::IdlePrompt => "idle_prompt",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session {
            session_id: "run-1".to_owned(),
            transcript_path: "/ws/.delta/run-1/journal.jsonl".to_owned(),
            cwd: "/ws".to_owned(),
            permission_mode: "default",
        }
    }

    fn bash(command: &str) -> ToolUse {
        ToolUse {
            tool_name: "Bash".to_owned(),
            tool_input: json!({"command": command})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            tool_use_id: "call_1".to_owned(),
        }
    }

    #[test]
    fn pre_tool_use_carries_claude_codes_fields_and_the_input_so_far() {
        let input = ClaudeInput::PreToolUse(bash("ls"));
        let rewritten = json!({"command": "ls -a"});
        assert_eq!(
            input.stdin(&session(), rewritten.as_object()),
            json!({
                "session_id": "run-1",
                "transcript_path": "/ws/.delta/run-1/journal.jsonl",
                "cwd": "/ws",
                "permission_mode": "default",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "ls -a"},
                "tool_use_id": "call_1",
            })
        );
        assert_eq!(input.matched(), Some("Bash"));
    }

    #[test]
    fn each_event_adds_its_own_fields() {
        let cases = [
            (
                ClaudeInput::SessionStart {
                    source: StartSource::Resume,
                    model: "m".to_owned(),
                },
                json!({"source": "resume", "model": "m"}),
            ),
            (
                ClaudeInput::UserPromptSubmit {
                    prompt: "go".to_owned(),
                },
                json!({"prompt": "go"}),
            ),
            (
                ClaudeInput::PostToolUse {
                    tool: bash("false"),
                    response: json!({"stdout": ""}),
                    duration_ms: 3,
                    error: Some("Exit code 1".to_owned()),
                },
                json!({"tool_response": {"stdout": ""}, "duration_ms": 3, "error": "Exit code 1"}),
            ),
            (
                ClaudeInput::Notification {
                    message: "approve?".to_owned(),
                    kind: NotificationType::PermissionPrompt,
                },
                json!({"message": "approve?", "title": "Delta", "notification_type": "permission_prompt"}),
            ),
            (
                ClaudeInput::PreCompact,
                json!({"trigger": "auto", "custom_instructions": ""}),
            ),
            (
                ClaudeInput::Stop {
                    stop_hook_active: true,
                    last_assistant_message: "done".to_owned(),
                },
                json!({"stop_hook_active": true, "last_assistant_message": "done"}),
            ),
            (
                ClaudeInput::SessionEnd {
                    status: RunStatus::WaitingForInput,
                },
                json!({"reason": "other", "status": "WAITING_FOR_INPUT"}),
            ),
        ];
        for (input, own) in cases {
            let stdin = input.stdin(&session(), None);
            for (key, value) in own.as_object().into_iter().flatten() {
                assert_eq!(stdin.get(key), Some(value), "{key} of {:?}", input.event());
            }
            assert_eq!(stdin["hook_event_name"], input.event().as_str());
        }
    }
}
