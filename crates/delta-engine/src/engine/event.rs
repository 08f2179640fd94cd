//! What the loop reports while it runs: [`EngineEvent`]s handed to an [`Observer`].
//!
//! The library never prints. The CLI's renderer turns these into the live stderr stream;
//! `engine.log` is one more observer ([`super::EngineLog`]), which every run has; tests
//! and benchmarks pass [`NoObserver`] or collect them. Everything an event says is also on
//! disk (journal, `io/`, `engine.log`).

use std::path::PathBuf;
use std::time::Duration;

use crate::journal::ActionStatus;
use crate::llm::TokenUsage;
use crate::run::{ErrorInfo, RunStatus};

/// One thing that happened in a run, in the order it happened.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineEvent {
    /// The run directory exists, is locked, and RUN_START is journaled.
    RunStarted {
        /// The run's id.
        run_id: String,
        /// `name` from agent.yaml.
        agent_name: String,
        /// The workspace (the tools' working directory).
        workspace: PathBuf,
        /// `.delta/{run_id}/`.
        run_dir: PathBuf,
        /// The model named in agent.yaml.
        model: String,
        /// The iteration budget.
        max_iterations: u32,
        /// Where tools run and what that enforces, in a line (`None`: on the host).
        environment: Option<String>,
    },
    /// A Think-Act-Observe iteration begins (1-based, counted over the run's life).
    IterationStarted {
        /// This iteration's number.
        iteration: u32,
        /// The iteration budget.
        max_iterations: u32,
    },
    /// The request's messages were rebuilt from context.yaml and the journal.
    ContextBuilt {
        /// Number of messages.
        messages: usize,
        /// Journal events read from disk.
        journal_events: usize,
        /// Time to read the journal and build the messages (generators included).
        elapsed: Duration,
    },
    /// The token budget left part of the journal out of this request, or cut sources
    /// to their `max_tokens` (the journal itself is untouched).
    ContextTrimmed {
        /// Complete iterations left out (the oldest).
        left_out_iterations: usize,
        /// Journal messages left out with them.
        left_out_messages: usize,
        /// Sources cut to their `max_tokens`, one line each.
        cut_sources: Vec<String>,
        /// Estimated tokens of the messages sent.
        estimated_tokens: u64,
        /// The messages' budget in estimated tokens.
        budget_tokens: Option<u64>,
    },
    /// The server answered that the request does not fit the model's context window; the
    /// engine leaves out more of the journal and sends again.
    ContextWindowExceeded {
        /// The rejected invocation.
        invocation_id: String,
        /// The window the server stated.
        window: Option<u64>,
        /// The prompt's size as the server counted it.
        prompt_tokens: Option<u64>,
    },
    /// Something degraded without stopping the run (a skipped context source, a config
    /// warning surfaced mid-run).
    Warning {
        /// One line for the user.
        message: String,
    },
    /// The request is written to `io/invocations/{invocation_id}/request.json` and is
    /// being sent. Followed by [`EngineEvent::LlmText`]s and [`EngineEvent::LlmRetry`]s and
    /// then exactly one of [`EngineEvent::LlmResponded`] or the run ending.
    LlmRequestStarted {
        /// Names `io/invocations/{invocation_id}/`.
        invocation_id: String,
        /// The model asked for.
        model: String,
        /// Where the request goes (no credentials in it).
        endpoint: String,
        /// Size of the request body.
        request_bytes: usize,
    },
    /// An attempt failed and will be retried after a wait.
    LlmRetry {
        /// The invocation being retried.
        invocation_id: String,
        /// The llm client's line, e.g. `retry 1/4 in 1.2 s after HTTP 500: overloaded`.
        detail: String,
    },
    /// A piece of the model's text as a streamed answer (`llm.stream: true`) delivers it.
    /// The THOUGHT that follows carries the whole text; a failed attempt's pieces are
    /// followed by an [`EngineEvent::LlmRetry`].
    LlmText {
        /// The invocation.
        invocation_id: String,
        /// The piece, as it arrived.
        text: String,
    },
    /// The model answered.
    LlmResponded {
        /// The invocation.
        invocation_id: String,
        /// Wall time of the call, retries included.
        elapsed: Duration,
        /// Token counts, when the server reported them.
        usage: Option<TokenUsage>,
        /// Failed attempts before the answer.
        retries: usize,
        /// How many tool calls the answer asks for.
        tool_calls: usize,
    },
    /// The model's text (may be empty when it only called tools).
    Thought {
        /// The text.
        content: String,
        /// The model's reasoning, when the server sent it apart from the text.
        reasoning: Option<String>,
        /// How many tool calls it requested.
        tool_calls: usize,
    },
    /// A tool call is about to run (its ACTION_REQUEST is journaled).
    ToolStarted {
        /// Names `io/tool_executions/{action_id}/`.
        action_id: String,
        /// The tool's name as the model called it.
        tool_name: String,
        /// The arguments exactly as the model sent them (JSON text, possibly invalid).
        arguments: String,
        /// The command line that runs, when one does.
        command: Option<String>,
    },
    /// The tool call's ACTION_RESULT is journaled.
    ToolFinished {
        /// The action.
        action_id: String,
        /// The tool's name.
        tool_name: String,
        /// SUCCESS, FAILED or ERROR.
        status: ActionStatus,
        /// The exit code, when the command exited.
        exit_code: Option<i32>,
        /// Wall time of the command (zero when none ran).
        elapsed: Duration,
        /// The observation the model will read (already capped).
        observation: String,
    },
    /// Engine detail with no event of its own (what a hook did, a call cancelled or
    /// failed, a question waiting): `engine.log` records it; the live stream need not.
    Detail {
        /// How serious.
        level: Level,
        /// One line.
        message: String,
    },
    /// An event of a sub-agent run this run started (or of one of its descendants), as
    /// that run reported it; its own `engine.log` has it too.
    Subagent {
        /// The sub-agent run that reported it.
        run_id: String,
        /// Its depth: 1 for a child, 2 for a grandchild…
        depth: u32,
        /// What happened there.
        event: Box<EngineEvent>,
    },
    /// The run stopped; RUN_END and the final metadata are on disk.
    RunFinished {
        /// The final status.
        status: RunStatus,
        /// Iterations done, over the run's life.
        iterations: u32,
        /// Why it failed or was interrupted.
        error: Option<ErrorInfo>,
    },
}

/// Receives the events of a run as they happen.
///
/// Called on the engine's task between awaits: an observer must return quickly (render,
/// buffer, send on a channel) and must not block on the run itself.
pub trait Observer {
    /// One event.
    fn on_event(&mut self, event: &EngineEvent);

    /// An [`EngineEvent::Detail`].
    fn detail(&mut self, level: Level, message: String) {
        self.on_event(&EngineEvent::Detail { level, message });
    }
}

/// Severity of an [`EngineEvent::Detail`] (and of an `engine.log` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Normal progress.
    Info,
    /// Something degraded (a retry, a skipped source).
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    /// `INFO`, `WARN`, `ERROR`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// Two observers fed the same events, in order.
pub(super) struct Both<'a> {
    pub first: &'a mut dyn Observer,
    pub second: &'a mut dyn Observer,
}

impl Observer for Both<'_> {
    fn on_event(&mut self, event: &EngineEvent) {
        self.first.on_event(event);
        self.second.on_event(event);
    }
}

/// Ignores every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl Observer for NoObserver {
    fn on_event(&mut self, _event: &EngineEvent) {}
}

impl Observer for Vec<EngineEvent> {
    fn on_event(&mut self, event: &EngineEvent) {
        self.push(event.clone());
    }
}
