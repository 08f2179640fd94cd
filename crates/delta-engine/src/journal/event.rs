//! The journal's event types: the envelope of seed 001 §7.1 and one payload per event type.
//!
//! The published schema serves two purposes: it documents what this engine writes, and
//! `delta-conformance` holds any implementation's journals to it. So the envelope is
//! strict (no unknown keys, a known `type`), while a payload requires only the fields
//! DESIGN.md lists for its type (seed 001 §7.2 for RUN_START, seed 000 §2.5.4 for human
//! input) and admits any other field: another implementation may record more. Fields we
//! add (`tool_call_id`, THOUGHT's `tool_calls`, `request_id`, RUN_END's `error` and
//! `result`) are always written by this engine, documented and typed, but optional; a
//! journal without them still reads (see `read_journal`, which fills in the call ids).

use std::fmt;

use schemars::{JsonSchema, Schema};
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::llm::{CallUsage, Passback};
use crate::run::{ErrorInfo, FinalStatus, InputType, RunId, Timestamp};

/// One line of `journal.jsonl`: `{"seq", "timestamp", "type", "payload"}`.
///
/// `seq` starts at 1 and grows by exactly one per line; `type` names the payload's shape.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[schemars(
    title = "Delta Engine journal event (one line of .delta/{run_id}/journal.jsonl)",
    extend("unevaluatedProperties" = false)
)]
pub struct Event {
    /// Position in the journal: 1 for the first line, +1 per line, no gaps.
    #[schemars(range(min = 1))]
    pub seq: u64,
    /// When the event was written.
    pub timestamp: Timestamp,
    /// `type` and `payload`.
    #[serde(flatten)]
    pub payload: EventPayload,
}

/// The `type` of an event together with its `payload`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "payload", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventPayload {
    /// The run was created (always seq 1).
    RunStart(RunStart),
    /// A message from the user: the task of `delta continue -m` and follow-ups.
    UserMessage(UserMessage),
    /// The model's answer: its text and the tool calls it requested.
    Thought(Thought),
    /// The engine is about to run a tool call.
    ActionRequest(ActionRequest),
    /// A tool call's outcome, as the model will see it.
    ActionResult(ActionResult),
    /// `ask_human` asked a question.
    HumanInputRequest(HumanInputRequest),
    /// The human answered.
    HumanInputReceived(HumanInputReceived),
    /// An engine notice that becomes part of the agent's memory.
    SystemMessage(SystemMessage),
    /// A lifecycle hook ran (or was skipped).
    HookExecutionAudit(HookExecutionAudit),
    /// A hook of Claude Code's protocol ran.
    ClaudeHook(ClaudeHook),
    /// A process stopped working on the run. A continued run has several.
    RunEnd(RunEnd),
}

impl EventPayload {
    /// The event's `type` as written, e.g. `ACTION_RESULT`.
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        match self {
            EventPayload::RunStart(_) => "RUN_START",
            EventPayload::UserMessage(_) => "USER_MESSAGE",
            EventPayload::Thought(_) => "THOUGHT",
            EventPayload::ActionRequest(_) => "ACTION_REQUEST",
            EventPayload::ActionResult(_) => "ACTION_RESULT",
            EventPayload::HumanInputRequest(_) => "HUMAN_INPUT_REQUEST",
            EventPayload::HumanInputReceived(_) => "HUMAN_INPUT_RECEIVED",
            EventPayload::SystemMessage(_) => "SYSTEM_MESSAGE",
            EventPayload::HookExecutionAudit(_) => "HOOK_EXECUTION_AUDIT",
            EventPayload::ClaudeHook(_) => "CLAUDE_HOOK",
            EventPayload::RunEnd(_) => "RUN_END",
        }
    }

    /// The THOUGHT payload, if this is one.
    #[must_use]
    pub fn as_thought(&self) -> Option<&Thought> {
        if let EventPayload::Thought(thought) = self {
            Some(thought)
        } else {
            None
        }
    }

    /// The ACTION_REQUEST payload, if this is one.
    #[must_use]
    pub fn as_action_request(&self) -> Option<&ActionRequest> {
        if let EventPayload::ActionRequest(request) = self {
            Some(request)
        } else {
            None
        }
    }

    /// The ACTION_RESULT payload, if this is one.
    #[must_use]
    pub fn as_action_result(&self) -> Option<&ActionResult> {
        if let EventPayload::ActionResult(result) = self {
            Some(result)
        } else {
            None
        }
    }
}

// Deserialization is written out because the derived `#[serde(flatten)]` path buffers
// every event into an intermediate tree before decoding it, which doubles the cost of
// rereading the journal (done before every LLM call). Here the payload is decoded straight
// into its struct when `type` comes first, as it does in every line we write; other key
// orders still work through a buffered `serde_json::Value`.
impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum EnvelopeField {
    Seq,
    Timestamp,
    Type,
    Payload,
}

/// The `type` names, to pick the payload struct before decoding the payload.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum EventType {
    RunStart,
    UserMessage,
    Thought,
    ActionRequest,
    ActionResult,
    HumanInputRequest,
    HumanInputReceived,
    SystemMessage,
    HookExecutionAudit,
    ClaudeHook,
    RunEnd,
}

struct PayloadSeed(EventType);

impl<'de> DeserializeSeed<'de> for PayloadSeed {
    type Value = EventPayload;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<EventPayload, D::Error> {
        Ok(match self.0 {
            EventType::RunStart => EventPayload::RunStart(RunStart::deserialize(d)?),
            EventType::UserMessage => EventPayload::UserMessage(UserMessage::deserialize(d)?),
            EventType::Thought => EventPayload::Thought(Thought::deserialize(d)?),
            EventType::ActionRequest => EventPayload::ActionRequest(ActionRequest::deserialize(d)?),
            EventType::ActionResult => EventPayload::ActionResult(ActionResult::deserialize(d)?),
            EventType::HumanInputRequest => {
                EventPayload::HumanInputRequest(HumanInputRequest::deserialize(d)?)
            }
            EventType::HumanInputReceived => {
                EventPayload::HumanInputReceived(HumanInputReceived::deserialize(d)?)
            }
            EventType::SystemMessage => EventPayload::SystemMessage(SystemMessage::deserialize(d)?),
            EventType::HookExecutionAudit => {
                EventPayload::HookExecutionAudit(HookExecutionAudit::deserialize(d)?)
            }
            EventType::ClaudeHook => EventPayload::ClaudeHook(ClaudeHook::deserialize(d)?),
            EventType::RunEnd => EventPayload::RunEnd(RunEnd::deserialize(d)?),
        })
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a journal event object with seq, timestamp, type and payload")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut seq = None;
        let mut timestamp = None;
        let mut event_type = None;
        let mut payload = None;
        let mut buffered: Option<serde_json::Value> = None;
        while let Some(field) = map.next_key::<EnvelopeField>()? {
            match field {
                EnvelopeField::Seq if seq.is_some() => {
                    return Err(de::Error::duplicate_field("seq"));
                }
                EnvelopeField::Seq => seq = Some(map.next_value()?),
                EnvelopeField::Timestamp if timestamp.is_some() => {
                    return Err(de::Error::duplicate_field("timestamp"));
                }
                EnvelopeField::Timestamp => timestamp = Some(map.next_value()?),
                EnvelopeField::Type if event_type.is_some() => {
                    return Err(de::Error::duplicate_field("type"));
                }
                EnvelopeField::Type => event_type = Some(map.next_value::<EventType>()?),
                EnvelopeField::Payload if payload.is_some() || buffered.is_some() => {
                    return Err(de::Error::duplicate_field("payload"));
                }
                EnvelopeField::Payload => match event_type {
                    Some(kind) => payload = Some(map.next_value_seed(PayloadSeed(kind))?),
                    None => buffered = Some(map.next_value()?),
                },
            }
        }
        let seq = seq.ok_or_else(|| de::Error::missing_field("seq"))?;
        let timestamp = timestamp.ok_or_else(|| de::Error::missing_field("timestamp"))?;
        let kind = event_type.ok_or_else(|| de::Error::missing_field("type"))?;
        let payload = match (payload, buffered) {
            (Some(payload), _) => payload,
            (None, Some(value)) => PayloadSeed(kind)
                .deserialize(value)
                .map_err(de::Error::custom)?,
            (None, None) => return Err(de::Error::missing_field("payload")),
        };
        Ok(Event {
            seq,
            timestamp,
            payload,
        })
    }
}

/// A schema transform making `fields` optional in the generated schema: this engine
/// always writes them, so the serialization contract would require them, but the spec does
/// not ask other implementations for them. (The matching struct fields carry
/// `#[serde(default)]` so that reading tolerates their absence too.)
fn not_required(fields: &'static [&'static str]) -> impl FnMut(&mut Schema) {
    move |schema: &mut Schema| {
        if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
            required.retain(|name| !name.as_str().is_some_and(|name| fields.contains(&name)));
        }
        // The default an absent field reads as is an implementation detail (ids are filled
        // in on read), not something for other implementations to write.
        if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
            for field in fields {
                if let Some(serde_json::Value::Object(property)) = properties.get_mut(*field) {
                    property.remove("default");
                }
            }
        }
    }
}

/// Payload of `RUN_START`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunStart {
    /// The run's id.
    pub run_id: RunId,
    /// The task the run was started with (`-m`).
    pub task: String,
    /// Absolute path of the agent directory.
    pub agent_ref: String,
    /// Where the run's tools execute and what that enforces (docs/environments.md);
    /// absent when they run on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::EnvironmentReport>,
}

/// Payload of `USER_MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UserMessage {
    /// The message text.
    pub content: String,
}

/// One tool call as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// The model's id for the call; the ACTION_REQUEST and ACTION_RESULT answering it carry
    /// it as `tool_call_id`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments exactly as the model sent them: a JSON text that may be invalid, kept
    /// verbatim so the conversation can be replayed faithfully.
    pub arguments: String,
}

/// The call the model sent, as journaled.
impl From<&crate::llm::ToolCall> for ToolCall {
    fn from(call: &crate::llm::ToolCall) -> Self {
        let crate::llm::ToolCall {
            id,
            name,
            arguments,
        } = call.clone();
        ToolCall {
            id,
            name,
            arguments,
        }
    }
}

/// The journaled call as the conversation sends it back to the model.
impl From<&ToolCall> for crate::llm::ToolCall {
    fn from(call: &ToolCall) -> Self {
        let ToolCall {
            id,
            name,
            arguments,
        } = call.clone();
        crate::llm::ToolCall {
            id,
            name,
            arguments,
        }
    }
}

/// Payload of `THOUGHT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = not_required(&["tool_calls", "reasoning", "passback", "usage"]))]
pub struct Thought {
    /// The model's text (empty when it sent only tool calls).
    pub content: String,
    /// Id of the `io/invocations/{id}/` directory holding the exact request and response.
    pub llm_invocation_ref: String,
    /// The tool calls requested, in order (empty when the model answered without any,
    /// which ends the run). Always written by this engine; optional for others: when a
    /// THOUGHT has none, the reader takes its calls from the ACTION_REQUESTs that follow
    /// it, with the `action_id` as call id.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// The model's reasoning, when the server sends it apart from the answer
    /// (`reasoning_content` or `reasoning`, Anthropic's thinking, the summaries of
    /// Responses reasoning items). Kept for the record and shown with `-v`; sent back only
    /// to a chat server that needs it (`llm.reasoning_passback: [reasoning_content]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// What the answer must carry back to the model on later requests, exactly as it came
    /// (Anthropic's thinking blocks with their signatures, Responses reasoning items with
    /// their encrypted content): the conversation is rebuilt from the journal before every
    /// call, so they live here. Written by this engine when the answer had any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passback: Option<Passback>,
    /// The call's token counts as the API reported them. Written by this engine when the
    /// answer had usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<CallUsage>,
}

/// Payload of `ACTION_REQUEST`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = not_required(&["tool_call_id"]))]
pub struct ActionRequest {
    /// Engine-assigned id of this execution; names `io/tool_executions/{action_id}/`.
    pub action_id: String,
    /// The `id` of the THOUGHT's tool call this executes. Always written by this engine;
    /// optional for others: the reader then takes the id of the THOUGHT's tool call at this
    /// request's position, or the `action_id` when the THOUGHT lists no calls.
    #[serde(default)]
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The parsed arguments.
    pub tool_args: serde_json::Map<String, serde_json::Value>,
    /// The command line that runs, quoted for display (null for built-in tools that run no
    /// external command, such as `ask_human`).
    pub resolved_command: Option<String>,
    /// The environment that runs the call (kind; container and image ids); absent when it
    /// runs on the host or runs nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::CallEnvironment>,
    /// The sub-agent run this call starts (agent tools only): named before the run exists,
    /// so that a run continued after a crash finds its child instead of starting another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentRef>,
}

/// The sub-agent run of an agent tool's call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentRef {
    /// The child run's id.
    pub run_id: RunId,
    /// Its workspace, when it is not the calling run's (a tool's `workspace:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<std::path::PathBuf>,
}

/// Outcome of a tool execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ActionStatus {
    /// The command exited 0.
    Success,
    /// The command ran and exited non-zero.
    Failed,
    /// The command could not run, timed out, was blocked by a hook, or was interrupted.
    Error,
}

impl ActionStatus {
    /// `SUCCESS`, `FAILED` or `ERROR`, as journaled.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Success => "SUCCESS",
            ActionStatus::Failed => "FAILED",
            ActionStatus::Error => "ERROR",
        }
    }
}

/// Payload of `ACTION_RESULT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = not_required(&["tool_call_id"]))]
pub struct ActionResult {
    /// The `action_id` of the ACTION_REQUEST this answers.
    pub action_id: String,
    /// The `id` of the THOUGHT's tool call this answers (the conversation's `tool_call_id`).
    /// Always written by this engine; optional for others: the reader then takes the call
    /// id of the ACTION_REQUEST with the same `action_id`.
    #[serde(default)]
    pub tool_call_id: String,
    /// Outcome.
    pub status: ActionStatus,
    /// Exactly what the model sees (possibly shortened); the full output is in
    /// `io/tool_executions/{execution_ref}/`.
    pub observation_content: String,
    /// The command's exit code (null when it did not exit normally or did not run).
    pub exit_code: Option<i32>,
    /// Names `io/tool_executions/{execution_ref}/` (the action id); the directory may be
    /// missing when no command ran.
    pub execution_ref: String,
    /// The sub-agent run whose end this result is (agent tools only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentRef>,
}

/// Payload of `HUMAN_INPUT_REQUEST`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = not_required(&["request_id"]))]
pub struct HumanInputRequest {
    /// Id shared with `interaction/request.json` and HUMAN_INPUT_RECEIVED (this engine uses
    /// the `ask_human` call's `action_id`). Always written by this engine; optional for
    /// others: the reader then takes the `action_id` of the `ask_human` request before it.
    #[serde(default)]
    pub request_id: String,
    /// The question.
    pub prompt: String,
    /// How the answer is collected.
    pub input_type: InputType,
    /// Whether the answer is secret.
    pub sensitive: bool,
}

/// Payload of `HUMAN_INPUT_RECEIVED`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = not_required(&["request_id"]))]
pub struct HumanInputReceived {
    /// The `request_id` of the HUMAN_INPUT_REQUEST answered. Always written by this
    /// engine; optional for others: the reader then takes the last question's.
    #[serde(default)]
    pub request_id: String,
    /// The answer.
    pub response: String,
}

/// Severity of a SYSTEM_MESSAGE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MessageLevel {
    /// Information.
    Info,
    /// Something degraded but the run goes on (a failed hook, a repaired journal).
    Warn,
    /// Something failed.
    Error,
}

impl fmt::Display for MessageLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MessageLevel::Info => "INFO",
            MessageLevel::Warn => "WARN",
            MessageLevel::Error => "ERROR",
        })
    }
}

/// Payload of `SYSTEM_MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SystemMessage {
    /// Severity.
    pub level: MessageLevel,
    /// The message.
    pub content: String,
}

/// Outcome of a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HookStatus {
    /// The hook exited 0 and its output was applied.
    Success,
    /// The hook failed or timed out; the run went on without its output.
    Failed,
    /// The hook was not run.
    Skipped,
}

/// Payload of `HOOK_EXECUTION_AUDIT`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HookExecutionAudit {
    /// Canonical hook name, e.g. `pre_llm_request`.
    pub hook_name: String,
    /// Outcome.
    pub status: HookStatus,
    /// The hook's I/O directory relative to the run directory, e.g.
    /// `io/hooks/005_pre_llm_request/`.
    pub io_path_ref: String,
}

/// What a hook of Claude Code's protocol decided (its stdout JSON or its exit code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClaudeDecision {
    /// PreToolUse: the call may run.
    Allow,
    /// PreToolUse: a human must approve the call first.
    Ask,
    /// PreToolUse: the call waits for a human, as `ask` does.
    Defer,
    /// PreToolUse: the call is refused (a JSON deny, or exit 2).
    Deny,
    /// PostToolUse, UserPromptSubmit, Stop: `decision: "block"`, or exit 2.
    Block,
    /// `continue: false`: the run stops.
    Stop,
}

impl ClaudeDecision {
    /// The name as journaled.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ClaudeDecision::Allow => "allow",
            ClaudeDecision::Ask => "ask",
            ClaudeDecision::Defer => "defer",
            ClaudeDecision::Deny => "deny",
            ClaudeDecision::Block => "block",
            ClaudeDecision::Stop => "stop",
        }
    }
}

/// Payload of `CLAUDE_HOOK`: one hook of Claude Code's protocol ran (docs/hooks.md,
/// "Claude Code hooks"). One event per hook, journaled as the hook ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = not_required(&[
    "source", "matcher", "exit_code", "ended", "decision", "reason", "duration_ms",
    "tool_use_id", "updated_input", "system_message", "error",
]))]
pub struct ClaudeHook {
    /// The event, e.g. `PreToolUse`.
    pub event: String,
    /// The hook's command as configured.
    pub command: String,
    /// `hooks.json` or `hooks.yaml`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The matcher of its group, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// SUCCESS when its answer was read (a block is a success), FAILED when it could not
    /// be (a non-blocking error: another exit code, a timeout, output that does not parse).
    pub status: HookStatus,
    /// The exit code, when the command exited.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// How it ended, in the words of `exit_code.txt`: the code, `timeout`, `signal N`,
    /// `not started`, `interrupted`.
    #[serde(default)]
    pub ended: String,
    /// What it decided, when it decided something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ClaudeDecision>,
    /// The reason it gave (a deny's or block's reason, or the stopReason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long it ran.
    #[serde(default)]
    pub duration_ms: u64,
    /// The tool call it was about (the model's call id), for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The tool input it replaced the call's with (PreToolUse `updatedInput`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<serde_json::Map<String, serde_json::Value>>,
    /// Its `systemMessage`, shown to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Why its answer could not be used, when FAILED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its record relative to the run directory, e.g. `io/claude_hooks/003_PreToolUse/`.
    pub io_path_ref: String,
}

/// Payload of `RUN_END`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunEnd {
    /// How the process stopped.
    pub status: FinalStatus,
    /// Why, when FAILED or INTERRUPTED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// The final answer, when COMPLETED (the same value as metadata's `result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
}
