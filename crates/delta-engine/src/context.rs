//! The context builder: turns `context.yaml`'s sources and the run's journal into the
//! messages of the next LLM request (seed 000 §2.4.3, §2.4.7).
//!
//! Sources are placed in the order written:
//! - `file` and `computed_file` become one system message each, `# Context Block: {id}\n\n`
//!   followed by the text when the source has an `id`, the bare text otherwise;
//! - `journal` becomes the conversation itself (see [`conversation`]).
//!
//! Nothing is cached between calls: the builder is handed the journal as just read from
//! disk and the manifest as just re-read, which is what makes the engine stateless.
//!
//! The text of every file source passes the run's redactor: a generator (or a tool, for a
//! plain `file` source) may have written the API key into it.

mod budget;
pub mod tokens;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use budget::ContextReport;
use budget::{Conversation, Part, cut_text, cut_to, fit};
use tokens::BYTES_PER_TOKEN;

use crate::config::ClaudeEvent;
use crate::config::{ContextManifest, ContextSource, Generator, OnMissing};
use crate::journal::{ActionStatus, ClaudeDecision, Event, EventPayload, HookStatus, Thought};
use crate::llm::{AssistantMessage, ChatMessage, ToolCall};
use crate::process::{OutputPolicy, ProcessError, ProcessOptions, run_process};
use crate::quote::command_line;
use crate::secrets::Redactor;

/// What a tool message says when the journal holds no result for a tool call (the run
/// stopped between THOUGHT and ACTION_RESULT). The API rejects a request in which a tool
/// call goes unanswered, so one is always supplied.
pub const NO_RESULT_RECORDED: &str = "(no result recorded)";

/// Characters of a generator's stderr quoted in an error.
const STDERR_EXCERPT_CHARS: usize = 500;

/// The most of a file source that is read when no token budget bounds it (neither its
/// `max_tokens` nor a window or `total_max_tokens`): about five million tokens, more
/// than any model's window.
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// Where the run lives, for `computed_file` generators (their working directory and
/// environment).
#[derive(Debug, Clone, Copy)]
pub struct ContextEnv<'a> {
    /// The run id, passed as `DELTA_RUN_ID`.
    pub run_id: &'a str,
    /// The agent directory, passed as `DELTA_AGENT_HOME`.
    pub agent_home: &'a Path,
    /// The workspace: the generator's working directory, passed as `DELTA_CWD`.
    pub workspace: &'a Path,
    /// The run's journal, passed as `JOURNAL_PATH`.
    pub journal_path: &'a Path,
    /// The run's output policy (limit and redactor) for generators, whose output is not
    /// recorded in files: only a bounded copy of stderr is kept, for error messages.
    pub output: &'a OutputPolicy,
}

/// The messages of one request, and what went wrong on the way without stopping it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltContext {
    /// The messages in source order.
    pub messages: Vec<ChatMessage>,
    /// Sources left out with `on_missing: skip` for a reason the user should hear about
    /// (a generator that failed), one line each.
    pub warnings: Vec<String>,
    /// What the token budget left out or cut.
    pub report: ContextReport,
}

/// A source that `on_missing: error` (or an unreadable file) makes fatal for the run.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// The file of a `file` or `computed_file` source does not exist.
    #[error(
        "context source {source_name}: {} does not exist; create it, or set `on_missing: skip` on this source in context.yaml",
        path.display()
    )]
    Missing {
        /// `'id'` or the source's position, as `source_name` words it.
        source_name: String,
        /// The file looked for.
        path: PathBuf,
    },
    /// The path is not a regular file: a FIFO (which would block the run), a device
    /// (which may never end), a socket or a directory.
    #[error("context source {source_name}: {error}; give a regular file as the source's path")]
    NotRegular {
        /// As in [`ContextError::Missing`].
        source_name: String,
        /// The file.
        path: PathBuf,
        /// What it is (the message names the path).
        error: std::io::Error,
    },
    /// The file exists but cannot be read.
    #[error("context source {source_name}: cannot read {}: {error}", path.display())]
    Unreadable {
        /// As in [`ContextError::Missing`].
        source_name: String,
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The generator of a `computed_file` source failed (could not start, exited non-zero,
    /// or timed out).
    #[error("context source {source_name}: generator {failure}")]
    Generator {
        /// As in [`ContextError::Missing`].
        source_name: String,
        /// What happened, including the generator's stderr when it wrote some.
        failure: String,
    },
}

/// Builds the messages for the next request from `manifest`, given the journal `events`
/// as just read from disk. Runs each `computed_file` generator to completion; dropping
/// the returned future kills a running generator's process group.
///
/// `budget` is what the messages may take, in the estimator's tokens
/// ([`tokens::message_tokens`]); the caller derives it from `total_max_tokens`, the
/// model's window and the room the tool definitions take. Each source's own
/// `max_tokens` applies with or without it. What was left out is in
/// [`BuiltContext::report`].
pub async fn build_context(
    manifest: &ContextManifest,
    events: &[Event],
    env: &ContextEnv<'_>,
    budget: Option<u64>,
) -> Result<BuiltContext, ContextError> {
    let mut warnings = Vec::new();
    let mut report = ContextReport::default();
    let mut parts = Vec::new();
    let redactor = &env.output.redactor;
    for (index, source) in manifest.sources.iter().enumerate() {
        match source {
            ContextSource::File {
                id,
                path,
                on_missing,
            } => {
                let source = Source {
                    name: source_name(id.as_deref(), index),
                    path,
                    on_missing: *on_missing,
                    max_tokens: manifest.max_tokens(index),
                };
                if let Some(text) = source.text(budget, redactor, &mut report)? {
                    parts.push(Part::Fixed(block(id.as_deref(), text)));
                }
            }
            ContextSource::ComputedFile {
                id,
                generator,
                output_path,
                on_missing,
            } => {
                let name = source_name(id.as_deref(), index);
                if let Err(failure) = run_generator(generator, env).await {
                    match on_missing {
                        OnMissing::Error => {
                            return Err(ContextError::Generator {
                                source_name: name,
                                failure,
                            });
                        }
                        // A failed generator may have left last iteration's file behind:
                        // reading it would feed the model stale content as if fresh.
                        OnMissing::Skip => {
                            warnings.push(format!(
                                "context source {name} skipped: generator {failure}"
                            ));
                            continue;
                        }
                    }
                }
                let source = Source {
                    name,
                    path: output_path,
                    on_missing: *on_missing,
                    max_tokens: manifest.max_tokens(index),
                };
                if let Some(text) = source.text(budget, redactor, &mut report)? {
                    parts.push(Part::Fixed(block(id.as_deref(), text)));
                }
            }
            ContextSource::Journal { max_iterations, .. } => {
                let refused = refused_prompts(events);
                let has_task = events.iter().any(|event| {
                    matches!(event.payload, EventPayload::RunStart(_))
                        && !refused.contains(&event.seq)
                });
                parts.push(Part::Journal(Conversation::new(
                    conversation(events, *max_iterations),
                    has_task,
                    manifest.max_tokens(index),
                )));
            }
        }
    }
    let messages = fit(parts, budget, env.journal_path, &mut report);
    Ok(BuiltContext {
        messages,
        warnings,
        report,
    })
}

/// A file source (or a generator's output file) about to be read.
struct Source<'a> {
    /// As [`source_name`] words it.
    name: String,
    path: &'a Path,
    on_missing: OnMissing,
    /// Its own `max_tokens`.
    max_tokens: Option<u64>,
}

impl Source<'_> {
    /// The source's text, redacted, within its `max_tokens` (cuts recorded in `report`);
    /// `None` when it is missing and may be skipped.
    ///
    /// Only as much of the file is read as can be sent: its `max_tokens` or the messages'
    /// `budget`, whichever is smaller, at [`BYTES_PER_TOKEN`] bytes a token (every
    /// character costs at least its bytes), plus the longest secret so that a secret at
    /// the edge is seen whole and redacted; [`MAX_SOURCE_BYTES`] when neither is known.
    /// A larger file is cut to that many tokens.
    fn text(
        &self,
        budget: Option<u64>,
        redactor: &Redactor,
        report: &mut ContextReport,
    ) -> Result<Option<String>, ContextError> {
        let bound = match (self.max_tokens, budget) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let limit = bound.map_or(MAX_SOURCE_BYTES, |tokens| {
            tokens
                .saturating_mul(BYTES_PER_TOKEN)
                .saturating_add(redactor.longest() as u64)
                .min(MAX_SOURCE_BYTES)
        });
        let prefix = match crate::run::read_regular_prefix(self.path, limit) {
            Ok(prefix) => prefix,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return match self.on_missing {
                    OnMissing::Skip => Ok(None),
                    OnMissing::Error => Err(ContextError::Missing {
                        source_name: self.name.clone(),
                        path: self.path.to_path_buf(),
                    }),
                };
            }
            Err(error) if error.kind() == std::io::ErrorKind::InvalidInput => {
                return Err(ContextError::NotRegular {
                    source_name: self.name.clone(),
                    path: self.path.to_path_buf(),
                    error,
                });
            }
            Err(error) => {
                return Err(ContextError::Unreadable {
                    source_name: self.name.clone(),
                    path: self.path.to_path_buf(),
                    error,
                });
            }
        };
        let text = String::from_utf8_lossy(&redactor.redact_bytes(&prefix.bytes)).into_owned();
        if prefix.truncated {
            let tokens = bound.unwrap_or(MAX_SOURCE_BYTES / BYTES_PER_TOKEN);
            let over = match (self.max_tokens, budget) {
                (Some(max), _) if max == tokens => format!("its max_tokens of {max}"),
                (_, Some(_)) => format!("the context budget of {tokens}"),
                (_, None) => format!("the {} MiB read limit", MAX_SOURCE_BYTES >> 20),
            };
            let estimated = prefix.len.div_ceil(BYTES_PER_TOKEN);
            report.cut_sources.push(format!(
                "context source {} cut to {tokens} tokens: {} holds {} bytes",
                self.name,
                self.path.display(),
                prefix.len
            ));
            return Ok(Some(cut_to(
                &text,
                tokens,
                (estimated, &over),
                &self.name,
                self.path,
            )));
        }
        Ok(Some(
            match self
                .max_tokens
                .and_then(|max| cut_text(&text, max, &self.name, self.path))
            {
                Some(cut) => {
                    report.cut_sources.push(format!(
                        "context source {} cut to its max_tokens ({})",
                        self.name,
                        self.max_tokens.unwrap_or_default()
                    ));
                    cut
                }
                None => text,
            },
        ))
    }
}

/// How a source is named in messages: `'summary'` when it has an id, else by its 1-based
/// position, `#2 in context.yaml`.
fn source_name(id: Option<&str>, index: usize) -> String {
    match id {
        Some(id) => format!("'{id}'"),
        None => format!("#{} in context.yaml", index + 1),
    }
}

fn block(id: Option<&str>, text: String) -> ChatMessage {
    match id {
        Some(id) => ChatMessage::system(format!("# Context Block: {id}\n\n{text}")),
        None => ChatMessage::system(text),
    }
}

/// Runs a generator with the workspace as its working directory; `Err` says how it failed.
async fn run_generator(generator: &Generator, env: &ContextEnv<'_>) -> Result<(), String> {
    let options = ProcessOptions {
        cwd: env.workspace.to_path_buf(),
        env: vec![
            ("DELTA_RUN_ID".to_owned(), env.run_id.to_owned()),
            (
                "DELTA_AGENT_HOME".to_owned(),
                env.agent_home.display().to_string(),
            ),
            ("DELTA_CWD".to_owned(), env.workspace.display().to_string()),
            (
                "JOURNAL_PATH".to_owned(),
                env.journal_path.display().to_string(),
            ),
        ],
        timeout: Duration::from_millis(generator.timeout_ms),
        output: env.output.clone(),
        record: None,
    };
    let command = command_line(&generator.command);
    let outcome = run_process(&generator.command, None, &options)
        .await
        .map_err(|error| match error {
            ProcessError::NotStarted(error) => format!("`{command}` could not start: {error}"),
            ProcessError::Output(_) => format!("`{command}` failed: {error}"),
        })?;
    // The excerpt needs only the start, which the in-memory copy always has.
    let stderr = excerpt(&String::from_utf8_lossy(&outcome.stderr.head));
    let stderr = if stderr.is_empty() {
        String::new()
    } else {
        format!("; its stderr: {stderr}")
    };
    if outcome.output_limit_exceeded {
        return Err(format!(
            "`{command}` wrote more than {} bytes to stdout or stderr and was killed{stderr}",
            env.output.limit
        ));
    }
    if outcome.timed_out {
        return Err(format!(
            "`{command}` timed out after {} ms and was killed{stderr}",
            generator.timeout_ms
        ));
    }
    match (outcome.exit_code, outcome.signal) {
        (Some(0), _) => Ok(()),
        (Some(code), _) => Err(format!("`{command}` exited with code {code}{stderr}")),
        (None, signal) => Err(format!(
            "`{command}` was killed by signal {}{stderr}",
            signal.map_or_else(|| "?".to_owned(), |s| s.to_string())
        )),
    }
}

fn excerpt(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= STDERR_EXCERPT_CHARS {
        return text.to_owned();
    }
    let head: String = text.chars().take(STDERR_EXCERPT_CHARS).collect();
    format!("{head}…")
}

/// The conversation recorded in `events`, in the OpenAI chat format.
///
/// - `RUN_START`'s task and `USER_MESSAGE`s are user messages; `SYSTEM_MESSAGE`s are
///   system messages where they occur.
/// - A `THOUGHT` is an assistant message with its tool calls (ids and raw arguments as the
///   model sent them); each `ACTION_RESULT` is the tool message answering its call.
/// - Tool messages always directly follow their assistant message, as the API requires: a
///   system message journaled while calls were pending is placed after the answers, and a
///   call without a recorded result is answered with [`NO_RESULT_RECORDED`].
/// - Other events (ACTION_REQUEST, hooks, human input, RUN_END) are audit records only.
/// - Calls are paired with results by `tool_call_id`, which [`crate::journal::read_journal`]
///   fills in when the journal does not record it (another implementation's journal).
///
/// `max_iterations: Some(n)` keeps the task (always first) and the last `n` cycles, a cycle
/// being a THOUGHT, its results, and the user or system messages just before it.
pub fn conversation(events: &[Event], max_iterations: Option<u32>) -> Vec<ChatMessage> {
    let start = window_start(events, max_iterations);
    let refused = refused_prompts(events);
    let mut messages = Vec::new();
    let mut pending = Pending::default();
    let task = events.iter().take(start).find_map(|event| {
        if let EventPayload::RunStart(run_start) = &event.payload
            && !refused.contains(&event.seq)
        {
            Some(run_start.task.as_str())
        } else {
            None
        }
    });
    if let Some(task) = task {
        messages.push(ChatMessage::user(task));
    }
    for event in &events[start..] {
        match &event.payload {
            EventPayload::RunStart(_) | EventPayload::UserMessage(_)
                if refused.contains(&event.seq) => {}
            EventPayload::RunStart(run_start) => {
                pending.close(&mut messages);
                messages.push(ChatMessage::user(run_start.task.clone()));
            }
            EventPayload::UserMessage(user) => {
                pending.close(&mut messages);
                messages.push(ChatMessage::user(user.content.clone()));
            }
            EventPayload::SystemMessage(system) => {
                let message = ChatMessage::system(system.content.clone());
                if pending.is_open() {
                    pending.deferred.push(message);
                } else {
                    messages.push(message);
                }
            }
            EventPayload::Thought(thought) => {
                pending.close(&mut messages);
                messages.push(assistant(thought));
                pending.open(thought);
            }
            EventPayload::ActionResult(result) => {
                let failed = result.status != ActionStatus::Success;
                pending.answer(&result.tool_call_id, &result.observation_content, failed);
                if pending.is_complete() {
                    pending.close(&mut messages);
                }
            }
            EventPayload::ActionRequest(_)
            | EventPayload::HumanInputRequest(_)
            | EventPayload::HumanInputReceived(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => {}
        }
    }
    pending.close(&mut messages);
    messages
}

/// The seqs of the prompts (the task, user messages) a Claude Code UserPromptSubmit hook
/// refused: each refusal is of the last prompt journaled before it. A refused prompt never
/// reaches the model, in this request or any later one.
fn refused_prompts(events: &[Event]) -> HashSet<u64> {
    let mut refused = HashSet::new();
    let mut last_prompt = None;
    for event in events {
        if matches!(
            event.payload,
            EventPayload::RunStart(_) | EventPayload::UserMessage(_)
        ) {
            last_prompt = Some(event.seq);
        } else if let EventPayload::ClaudeHook(hook) = &event.payload
            && hook.event == ClaudeEvent::UserPromptSubmit.as_str()
            && hook.status == HookStatus::Success
            && hook.decision == Some(ClaudeDecision::Block)
        {
            refused.extend(last_prompt);
        }
    }
    refused
}

/// Index of the first event inside the `max_iterations` window (0 when there is none).
fn window_start(events: &[Event], max_iterations: Option<u32>) -> usize {
    let Some(max) = max_iterations else {
        return 0;
    };
    let thoughts: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, event)| matches!(event.payload, EventPayload::Thought(_)))
        .map(|(index, _)| index)
        .collect();
    let keep = usize::try_from(max).unwrap_or(usize::MAX);
    if thoughts.len() <= keep {
        return 0;
    }
    let mut start = thoughts[thoughts.len() - keep];
    // The user message that prompted the first kept THOUGHT belongs to its cycle.
    while start > 0
        && matches!(
            events[start - 1].payload,
            EventPayload::UserMessage(_) | EventPayload::SystemMessage(_)
        )
    {
        start -= 1;
    }
    start
}

fn assistant(thought: &Thought) -> ChatMessage {
    let content = if thought.content.is_empty() && !thought.tool_calls.is_empty() {
        None
    } else {
        Some(thought.content.clone())
    };
    ChatMessage::Assistant(AssistantMessage {
        content,
        tool_calls: thought.tool_calls.iter().map(ToolCall::from).collect(),
        reasoning: thought.reasoning.clone(),
        passback: thought.passback.clone(),
    })
}

/// The tool calls of the last assistant message that still await their tool messages.
#[derive(Default)]
struct Pending {
    /// Call ids in the model's order, each with its observation once journaled and
    /// whether the call failed.
    calls: Vec<(String, Option<(String, bool)>)>,
    /// System messages journaled while calls were pending.
    deferred: Vec<ChatMessage>,
}

impl Pending {
    fn open(&mut self, thought: &Thought) {
        self.calls = thought
            .tool_calls
            .iter()
            .map(|call| (call.id.clone(), None))
            .collect();
    }

    fn is_open(&self) -> bool {
        !self.calls.is_empty()
    }

    fn is_complete(&self) -> bool {
        self.calls.iter().all(|(_, answer)| answer.is_some())
    }

    /// Records an observation; results for calls not pending (an id the last THOUGHT did
    /// not request) cannot be placed in a valid conversation and are left out.
    fn answer(&mut self, tool_call_id: &str, observation: &str, failed: bool) {
        if let Some((_, answer)) = self
            .calls
            .iter_mut()
            .find(|(id, answer)| id == tool_call_id && answer.is_none())
        {
            *answer = Some((observation.to_owned(), failed));
        }
    }

    /// Emits the tool messages (synthesizing missing ones, which count as failed), then
    /// the deferred messages.
    fn close(&mut self, messages: &mut Vec<ChatMessage>) {
        for (id, answer) in self.calls.drain(..) {
            let (content, is_error) =
                answer.unwrap_or_else(|| (NO_RESULT_RECORDED.to_owned(), true));
            messages.push(ChatMessage::Tool {
                tool_call_id: id,
                content,
                is_error,
            });
        }
        messages.append(&mut self.deferred);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value, json};

    /// Builds `manifest` with the agent home, workspace and journal all in `dir`.
    async fn build_in(
        dir: &Path,
        manifest: &ContextManifest,
        events: &[Event],
        output: &OutputPolicy,
    ) -> Result<BuiltContext, ContextError> {
        let journal_path = dir.join("journal.jsonl");
        let env = ContextEnv {
            run_id: "r1",
            agent_home: dir,
            workspace: dir,
            journal_path: &journal_path,
            output,
        };
        build_context(manifest, events, &env, None).await
    }

    use super::*;
    use crate::journal::{
        ActionRequest, ActionResult, ActionStatus, MessageLevel, RunStart, SystemMessage,
        ToolCall as JournalCall, UserMessage,
    };
    use crate::run::{RunId, Timestamp};

    /// `payloads` as a journal: seq from 1, timestamped now.
    pub(crate) fn events(payloads: Vec<EventPayload>) -> Vec<Event> {
        payloads
            .into_iter()
            .zip(1..)
            .map(|(payload, seq)| Event {
                seq,
                timestamp: Timestamp::now(),
                payload,
            })
            .collect()
    }

    fn start(task: &str) -> EventPayload {
        EventPayload::RunStart(RunStart {
            run_id: RunId::parse("r1").unwrap(),
            task: task.to_owned(),
            agent_ref: "/a".to_owned(),
            environment: None,
        })
    }

    fn thought(content: &str, calls: &[&str]) -> EventPayload {
        EventPayload::Thought(Thought {
            content: content.to_owned(),
            llm_invocation_ref: "inv".to_owned(),
            tool_calls: calls
                .iter()
                .map(|id| JournalCall {
                    id: (*id).to_owned(),
                    name: "t".to_owned(),
                    arguments: "{\"x\":1}".to_owned(),
                })
                .collect(),
            reasoning: None,
            passback: None,
            usage: None,
        })
    }

    fn request(call: &str) -> EventPayload {
        EventPayload::ActionRequest(ActionRequest {
            action_id: format!("a-{call}"),
            tool_call_id: call.to_owned(),
            tool_name: "t".to_owned(),
            tool_args: serde_json::Map::new(),
            resolved_command: None,
            subagent: None,
            environment: None,
        })
    }

    fn result(call: &str, text: &str) -> EventPayload {
        EventPayload::ActionResult(ActionResult {
            action_id: format!("a-{call}"),
            tool_call_id: call.to_owned(),
            status: ActionStatus::Success,
            observation_content: text.to_owned(),
            exit_code: Some(0),
            execution_ref: format!("a-{call}"),
            subagent: None,
        })
    }

    fn system(text: &str) -> EventPayload {
        EventPayload::SystemMessage(SystemMessage {
            level: MessageLevel::Warn,
            content: text.to_owned(),
        })
    }

    fn user(text: &str) -> EventPayload {
        EventPayload::UserMessage(UserMessage {
            content: text.to_owned(),
        })
    }

    fn wire(messages: &[ChatMessage]) -> Vec<Value> {
        messages.iter().map(ChatMessage::to_json).collect()
    }

    #[test]
    fn a_cycle_becomes_assistant_tool_calls_and_tool_answers() {
        let journal = events(vec![
            start("task"),
            thought("", &["c1", "c2"]),
            request("c1"),
            result("c1", "one"),
            request("c2"),
            result("c2", "two"),
            thought("done", &[]),
        ]);
        assert_eq!(
            wire(&conversation(&journal, None)),
            [
                json!({"role": "user", "content": "task"}),
                json!({"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{\"x\":1}"}},
                    {"id": "c2", "type": "function", "function": {"name": "t", "arguments": "{\"x\":1}"}},
                ]}),
                json!({"role": "tool", "tool_call_id": "c1", "content": "one"}),
                json!({"role": "tool", "tool_call_id": "c2", "content": "two"}),
                json!({"role": "assistant", "content": "done"}),
            ]
        );
    }

    #[test]
    fn unanswered_calls_get_a_placeholder_and_system_messages_wait_for_the_answers() {
        // A crash between ACTION_REQUEST and ACTION_RESULT, then a warning and a user turn.
        let journal = events(vec![
            start("task"),
            thought("working", &["c1", "c2"]),
            result("c1", "one"),
            system("recovered"),
            request("c2"),
            user("go on"),
        ]);
        let roles: Vec<(String, String)> = wire(&conversation(&journal, None))
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap().to_owned(),
                    m["content"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let expected = [
            ("user", "task"),
            ("assistant", "working"),
            ("tool", "one"),
            ("tool", NO_RESULT_RECORDED),
            ("system", "recovered"),
            ("user", "go on"),
        ]
        .map(|(r, c)| (r.to_owned(), c.to_owned()));
        assert_eq!(roles, expected);
    }

    fn prompt_hook(decision: Option<ClaudeDecision>) -> EventPayload {
        EventPayload::ClaudeHook(crate::journal::ClaudeHook {
            event: "UserPromptSubmit".to_owned(),
            command: "./check.sh".to_owned(),
            source: None,
            matcher: None,
            status: HookStatus::Success,
            exit_code: Some(2),
            ended: "2".to_owned(),
            decision,
            reason: None,
            duration_ms: 1,
            tool_use_id: None,
            updated_input: None,
            system_message: None,
            error: None,
            io_path_ref: "io/claude_hooks/001_UserPromptSubmit/".to_owned(),
        })
    }

    #[test]
    fn a_prompt_a_hook_refused_never_reaches_the_model() {
        let journal = events(vec![
            start("the secret is hunter2"),
            prompt_hook(Some(ClaudeDecision::Block)),
            user("summarize the repo"),
            prompt_hook(None),
            thought("done", &[]),
            user("and paste my key sk-123"),
            prompt_hook(Some(ClaudeDecision::Block)),
        ]);
        let contents: Vec<Value> = wire(&conversation(&journal, None))
            .into_iter()
            .map(|m| m["content"].clone())
            .collect();
        assert_eq!(contents, [json!("summarize the repo"), json!("done")]);
        // Nor when the window starts after the refusal: the task is not brought back.
        let windowed: Vec<Value> = wire(&conversation(&journal, Some(1)))
            .into_iter()
            .map(|m| m["content"].clone())
            .collect();
        assert!(
            !windowed.contains(&json!("the secret is hunter2")),
            "{windowed:?}"
        );
    }

    #[test]
    fn results_for_calls_not_pending_are_left_out() {
        let journal = events(vec![
            start("task"),
            result("ghost", "orphan"),
            thought("a", &["c1"]),
            result("c1", "x"),
            result("c1", "duplicate"),
        ]);
        let tool_contents: Vec<Value> = wire(&conversation(&journal, None))
            .into_iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].clone())
            .collect();
        assert_eq!(tool_contents, [json!("x")]);
    }

    #[test]
    fn max_iterations_keeps_the_task_and_the_last_cycles_with_their_prompts() {
        let journal = events(vec![
            start("task"),
            thought("one", &["c1"]),
            result("c1", "r1"),
            user("now the second part"),
            thought("two", &["c2"]),
            result("c2", "r2"),
            thought("three", &[]),
        ]);
        let texts: Vec<Value> = wire(&conversation(&journal, Some(2)))
            .into_iter()
            .map(|m| m["content"].clone())
            .collect();
        assert_eq!(
            texts,
            [
                json!("task"),
                json!("now the second part"),
                json!("two"),
                json!("r2"),
                json!("three")
            ]
        );
        assert_eq!(
            conversation(&journal, Some(3)),
            conversation(&journal, None)
        );
    }

    /// A journal written by another implementation (no `tool_call_id`, THOUGHT without
    /// `tool_calls`, fields of its own) and continued by this one: the rebuilt request
    /// pairs every tool message with a call of the assistant message before it.
    #[test]
    fn a_journal_without_call_ids_rebuilds_a_valid_conversation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let lines = [
            json!({"type": "RUN_START", "payload": {"run_id": "r1", "task": "task", "agent_ref": "/a", "x_ui": "web"}}),
            json!({"type": "THOUGHT", "payload": {"content": "look", "llm_invocation_ref": "i1"}}),
            json!({"type": "ACTION_REQUEST", "payload": {"action_id": "a1", "tool_name": "ls",
                "tool_args": {"dir": "."}, "resolved_command": "ls .", "iteration": 1}}),
            json!({"type": "ACTION_RESULT", "payload": {"action_id": "a1", "status": "SUCCESS",
                "observation_content": "f.txt", "exit_code": 0, "execution_ref": "a1"}}),
            json!({"type": "THOUGHT", "payload": {"content": "", "llm_invocation_ref": "i2",
                "tool_calls": [{"id": "m1", "name": "cat", "arguments": "{}", "type": "function"}]}}),
            json!({"type": "ACTION_REQUEST", "payload": {"action_id": "a2", "tool_name": "cat",
                "tool_args": {}, "resolved_command": "cat"}}),
            json!({"type": "ACTION_RESULT", "payload": {"action_id": "a2", "status": "FAILED",
                "observation_content": "no", "exit_code": 1, "execution_ref": "a2"}}),
            // This engine continues the run.
            json!({"type": "USER_MESSAGE", "payload": {"content": "go on"}}),
        ];
        let text: String = lines
            .into_iter()
            .zip(1..)
            .map(|(mut line, seq)| {
                line["seq"] = json!(seq);
                line["timestamp"] = json!("2025-10-14T10:30:00Z");
                format!("{line}\n")
            })
            .collect();
        std::fs::write(&path, text).unwrap();
        let events = crate::journal::read_journal(&path).unwrap().events;
        let expected = [
            json!({"role": "user", "content": "task"}),
            json!({"role": "assistant", "content": "look", "tool_calls": [
                {"id": "a1", "type": "function", "function": {"name": "ls", "arguments": "{\"dir\":\".\"}"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "a1", "content": "f.txt"}),
            json!({"role": "assistant", "content": "", "tool_calls": [
                {"id": "m1", "type": "function", "function": {"name": "cat", "arguments": "{}"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "m1", "content": "no"}),
            json!({"role": "user", "content": "go on"}),
        ];
        assert_eq!(wire(&conversation(&events, None)), expected);
        let again = crate::journal::read_journal(&path).unwrap().events;
        assert_eq!(conversation(&again, None), conversation(&events, None));
    }

    #[tokio::test]
    async fn sources_are_placed_in_order_with_block_headers_for_ids() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "alpha").unwrap();
        std::fs::write(dir.path().join("b.md"), "beta").unwrap();
        let manifest = ContextManifest {
            total_max_tokens: None,
            source_max_tokens: Vec::new(),
            sources: vec![
                ContextSource::File {
                    id: Some("first".to_owned()),
                    path: dir.path().join("a.md"),
                    on_missing: OnMissing::Error,
                },
                ContextSource::Journal {
                    id: None,
                    max_iterations: None,
                },
                ContextSource::File {
                    id: None,
                    path: dir.path().join("b.md"),
                    on_missing: OnMissing::Error,
                },
                ContextSource::File {
                    id: Some("gone".to_owned()),
                    path: dir.path().join("missing.md"),
                    on_missing: OnMissing::Skip,
                },
            ],
        };
        let built = build_in(
            dir.path(),
            &manifest,
            &events(vec![start("task")]),
            &OutputPolicy::default(),
        )
        .await
        .unwrap();
        assert_eq!(
            built.messages,
            [
                ChatMessage::system("# Context Block: first\n\nalpha"),
                ChatMessage::user("task"),
                ChatMessage::system("beta"),
            ]
        );
        assert!(built.warnings.is_empty());
    }

    #[tokio::test]
    async fn a_missing_required_file_names_its_source_by_position_without_an_id() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = ContextManifest {
            total_max_tokens: None,
            source_max_tokens: Vec::new(),
            sources: vec![ContextSource::File {
                id: None,
                path: dir.path().join("nope.md"),
                on_missing: OnMissing::Error,
            }],
        };
        let error = build_in(dir.path(), &manifest, &[], &OutputPolicy::default())
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "context source #1 in context.yaml: {} does not exist; create it, or set \
                 `on_missing: skip` on this source in context.yaml",
                dir.path().join("nope.md").display()
            )
        );
    }

    #[tokio::test]
    async fn a_flooding_generator_is_killed_at_the_output_limit() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = ContextManifest {
            total_max_tokens: None,
            source_max_tokens: Vec::new(),
            sources: vec![ContextSource::ComputedFile {
                id: Some("flood".to_owned()),
                generator: Generator {
                    command: ["sh", "-c", "echo flooding >&2; cat /dev/zero"]
                        .map(str::to_owned)
                        .to_vec(),
                    timeout_ms: 30_000,
                },
                output_path: dir.path().join("flood.md"),
                on_missing: OnMissing::Error,
            }],
        };
        let error = build_in(
            dir.path(),
            &manifest,
            &[],
            &OutputPolicy::new(64 * 1024, Redactor::default()),
        )
        .await
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "context source 'flood': generator `sh -c 'echo flooding >&2; cat /dev/zero'` \
             wrote more than 65536 bytes to stdout or stderr and was killed; its stderr: \
             flooding"
        );
    }

    #[tokio::test]
    async fn file_sources_are_read_with_the_key_redacted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "key: sk-context-secret-1\n").unwrap();
        let manifest = ContextManifest {
            total_max_tokens: None,
            source_max_tokens: Vec::new(),
            sources: vec![ContextSource::File {
                id: None,
                path: dir.path().join("notes.md"),
                on_missing: OnMissing::Error,
            }],
        };
        let built = build_in(
            dir.path(),
            &manifest,
            &[],
            &OutputPolicy::new(1024, Redactor::new(["sk-context-secret-1"])),
        )
        .await
        .unwrap();
        assert_eq!(built.messages, [ChatMessage::system("key: [REDACTED]\n")]);
    }
}
