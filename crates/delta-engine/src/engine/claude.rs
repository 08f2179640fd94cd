//! The loop's side of Claude Code hooks: one dispatcher that runs a firing's hooks in
//! their configured order (each PreToolUse hook seeing the input the ones before it
//! produced), journals every hook as it ends (CLAUDE_HOOK), reports failures and
//! `systemMessage`s, and hands back the [`Ruling`]; then one method per point of the run
//! that applies it. A new event (issue 29's SubagentStop) is one more call of
//! [`ActiveRun::claude`] with its [`ClaudeInput`].
//!
//! As for the seed hooks, no hook starts once a stop signal has arrived, and a running one
//! is killed, except SessionEnd's, which always run to their end or timeout.

use serde_json::{Map, Value};

use super::{ActiveRun, EngineError, EngineEvent, Level, Observer, Shutdown, Stop};
use crate::config::{ClaudeEvent, ClaudeHandler};
use crate::hooks::claude::{ClaudeInput, Firing, NotificationType, Ruling, ToolUse};
use crate::hooks::{ToolCallInfo, ToolResultInfo};
use crate::journal::{
    ActionStatus, ClaudeDecision, EventPayload, HookStatus, MessageLevel, SystemMessage,
};
use crate::run::{ErrorInfo, ErrorType, RunStatus};

impl ActiveRun {
    /// Fires `input`: its matching hooks, in order. What they decided together.
    pub(super) async fn claude(
        &mut self,
        input: &ClaudeInput,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Ruling, EngineError> {
        let ending = input.event() == ClaudeEvent::SessionEnd;
        let mut ruling = Ruling::default();
        for handler in self.claude.handlers(input) {
            if !ending && shutdown.requested().is_some() {
                break;
            }
            let tool_input = ruling.tool_input.clone();
            let cancel = async {
                if ending {
                    std::future::pending::<()>().await;
                } else {
                    shutdown.wait().await;
                }
            };
            let firing = self
                .claude
                .fire(&handler, input, tool_input.as_ref(), cancel)
                .await;
            self.journal
                .append(EventPayload::ClaudeHook(firing.record.clone()))?;
            report(&handler, &firing, observer);
            if let Ok(reply) = firing.reply {
                ruling.absorb(reply);
            }
        }
        for message in &ruling.system_messages {
            observer.on_event(&EngineEvent::Warning {
                message: format!("{} hook: {message}", input.event().as_str()),
            });
        }
        Ok(ruling)
    }

    /// Journals each text a firing gave the model, as a system message where it stands
    /// (one given while tool calls await their results reaches the model after them).
    pub(super) fn claude_context(&mut self, texts: &[String]) -> Result<(), EngineError> {
        for text in texts {
            self.journal
                .append(EventPayload::SystemMessage(SystemMessage {
                    level: MessageLevel::Info,
                    content: text.clone(),
                }))?;
        }
        Ok(())
    }

    /// SessionStart, then UserPromptSubmit for the task or the continuing instruction:
    /// what the hooks add reaches the model; a refused prompt fails the run before the
    /// model sees it.
    pub(super) async fn claude_start(
        &mut self,
        model: &str,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<Stop>, EngineError> {
        let start = ClaudeInput::SessionStart {
            source: self.source,
            model: model.to_owned(),
        };
        let ruling = self.claude(&start, observer, shutdown).await?;
        self.claude_context(&ruling.context)?;
        if let Some(reason) = ruling.stop {
            return Ok(Some(self.hook_stopped(ClaudeEvent::SessionStart, &reason)));
        }
        let Some(prompt) = self.prompt.take() else {
            return Ok(None);
        };
        let submit = ClaudeInput::UserPromptSubmit { prompt };
        let ruling = self.claude(&submit, observer, shutdown).await?;
        if let Some(reason) = ruling.stop {
            return Ok(Some(
                self.hook_stopped(ClaudeEvent::UserPromptSubmit, &reason),
            ));
        }
        if ruling.decision == Some(ClaudeDecision::Block) {
            let error = ErrorInfo::new(
                ErrorType::PromptBlocked,
                format!(
                    "a UserPromptSubmit hook refused the prompt: {}",
                    ruling.reason()
                ),
            )
            .with_details(format!(
                "the prompt never reached the model and is left out of its context; give \
                 another one: delta continue --run-id {} -w {} -m \"...\"",
                self.metadata.run_id.as_str(),
                crate::quote::quote_path(self.paths.workspace())
            ));
            return Ok(Some(Stop::Failed(error)));
        }
        self.claude_context(&ruling.context)?;
        Ok(None)
    }

    /// PreToolUse for a call about to run: what the hooks decided, their context already
    /// journaled (the model reads it after the call's result).
    pub(super) async fn claude_pre_tool(
        &mut self,
        tool: ToolUse,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Ruling, EngineError> {
        let ruling = self
            .claude(&ClaudeInput::PreToolUse(tool), observer, shutdown)
            .await?;
        self.claude_context(&ruling.context)?;
        Ok(ruling)
    }

    /// After a call's ACTION_RESULT: the seed `post_tool_execution` hook (and `on_error`),
    /// then, for a call that ran, PostToolUse (and PostToolUseFailure when it failed),
    /// whose feedback and context reach the model. `Some` when a hook stopped the run.
    pub(super) async fn after_tool(
        &mut self,
        call: ToolCallInfo<'_>,
        result: ToolResultInfo<'_>,
        blocked: bool,
        ran: Option<Ran>,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<ErrorInfo>, EngineError> {
        self.post_tool_execution(call, result, blocked, observer, shutdown)
            .await?;
        let Some(ran) = ran else {
            return Ok(None);
        };
        let (stdout, stderr) = ran
            .streams
            .clone()
            .unwrap_or_else(|| (result.observation.to_owned(), String::new()));
        let tool = tool_use(call.tool_name, ran.mcp, call.tool_args, call.tool_call_id);
        let error = match (result.status, result.exit_code) {
            (ActionStatus::Success, _) => None,
            (ActionStatus::Failed | ActionStatus::Error, Some(code)) => {
                Some(format!("Exit code {code}\n{}", result.observation))
            }
            (ActionStatus::Failed | ActionStatus::Error, None) => {
                Some(result.observation.to_owned())
            }
        };
        let duration_ms = u64::try_from(ran.duration.as_millis()).unwrap_or(u64::MAX);
        let response = tool_response(
            &stdout,
            &stderr,
            ran.interrupted,
            result.exit_code,
            result.status,
            result.observation,
        );
        let mut inputs = vec![ClaudeInput::PostToolUse {
            tool: tool.clone(),
            response,
            duration_ms,
            error: error.clone(),
        }];
        if let Some(error) = error {
            inputs.push(ClaudeInput::PostToolUseFailure {
                tool,
                error,
                interrupted: ran.interrupted,
                duration_ms,
            });
        }
        let mut stopped = None;
        for input in inputs {
            let event = input.event();
            let ruling = self.claude(&input, observer, shutdown).await?;
            if ruling.decision == Some(ClaudeDecision::Block) {
                let feedback = format!("{} hook feedback: {}", event.as_str(), ruling.reason());
                self.claude_context(&[feedback])?;
            }
            self.claude_context(&ruling.context)?;
            if let (None, Some(reason)) = (&stopped, ruling.stop) {
                stopped = Some(self.stop_error(event, &reason));
            }
        }
        Ok(stopped)
    }

    /// Notification: the run waits for a human. Side effects only.
    pub(super) async fn claude_notify(
        &mut self,
        kind: NotificationType,
        message: &str,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<(), EngineError> {
        let input = ClaudeInput::Notification {
            message: message.to_owned(),
            kind,
        };
        self.claude(&input, observer, shutdown).await?;
        Ok(())
    }

    /// PreCompact, when the request about to be sent leaves out more iterations than the
    /// last one this process fired it for. `Some` when a hook stopped the run.
    pub(super) async fn claude_pre_compact(
        &mut self,
        left_out_iterations: usize,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<Stop>, EngineError> {
        if left_out_iterations <= self.compacted {
            return Ok(None);
        }
        self.compacted = left_out_iterations;
        let ruling = self
            .claude(&ClaudeInput::PreCompact, observer, shutdown)
            .await?;
        Ok(ruling
            .stop
            .map(|reason| self.hook_stopped(ClaudeEvent::PreCompact, &reason)))
    }

    /// Stop, for the model's final answer `answer`: `None` when the run may complete, a
    /// [`StopHook::GoOn`] when a hook sent the model back to work (its reason journaled for
    /// it), or the run's end when a hook stopped it.
    pub(super) async fn claude_stop(
        &mut self,
        answer: &str,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<StopHook, EngineError> {
        // stop_hook_active reads the journal: only when a Stop hook will read it.
        if !self.claude.fires(ClaudeEvent::Stop) {
            return Ok(StopHook::Complete);
        }
        let input = ClaudeInput::Stop {
            stop_hook_active: self.stop_hook_active()?,
            last_assistant_message: answer.to_owned(),
        };
        let ruling = self.claude(&input, observer, shutdown).await?;
        if let Some(reason) = ruling.stop {
            return Ok(StopHook::Stopped(
                self.hook_stopped(ClaudeEvent::Stop, &reason),
            ));
        }
        if ruling.decision == Some(ClaudeDecision::Block) {
            let feedback = format!("Stop hook feedback: {}", ruling.reason());
            self.claude_context(&[feedback])?;
            self.claude_context(&ruling.context)?;
            observer.detail(
                Level::Info,
                "a Stop hook sent the model back to work".to_owned(),
            );
            return Ok(StopHook::GoOn);
        }
        Ok(StopHook::Complete)
    }

    /// SessionEnd, as this process leaves the run: side effects only, and its failures
    /// never change how the run ends.
    pub(super) async fn claude_end(
        &mut self,
        stop: &Stop,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) {
        let status = match stop {
            Stop::Completed(_) => RunStatus::Completed,
            Stop::Failed(_) => RunStatus::Failed,
            Stop::Interrupted(_) => RunStatus::Interrupted,
            Stop::WaitingForInput => RunStatus::WaitingForInput,
        };
        let input = ClaudeInput::SessionEnd { status };
        if let Err(error) = self.claude(&input, observer, shutdown).await {
            observer.detail(
                Level::Error,
                format!("SessionEnd hooks not recorded: {error}"),
            );
        }
    }

    /// Whether the model is answering because a Stop hook sent it back: the last Stop
    /// firing since the last user message blocked. Read from the journal, so that a
    /// continued run knows it too.
    fn stop_hook_active(&self) -> Result<bool, EngineError> {
        let events = crate::journal::read_journal(&self.paths.journal())?.events;
        let mut in_firing = false;
        let mut blocked = false;
        for event in events.iter().rev() {
            if let EventPayload::ClaudeHook(hook) = &event.payload
                && hook.event == ClaudeEvent::Stop.as_str()
            {
                in_firing = true;
                blocked |= hook.decision == Some(ClaudeDecision::Block)
                    && hook.status == HookStatus::Success;
                continue;
            }
            // The hooks of one firing are journaled one after another.
            if in_firing {
                return Ok(blocked);
            }
            if matches!(
                event.payload,
                EventPayload::UserMessage(_) | EventPayload::RunStart(_)
            ) {
                return Ok(false);
            }
        }
        Ok(blocked)
    }

    /// The run's end when a hook of `event` answered `continue: false`.
    fn hook_stopped(&self, event: ClaudeEvent, reason: &str) -> Stop {
        Stop::Interrupted(self.stop_error(event, reason))
    }

    pub(super) fn stop_error(&self, event: ClaudeEvent, reason: &str) -> ErrorInfo {
        let message = if reason.trim().is_empty() {
            format!(
                "a {} hook stopped the run (continue: false)",
                event.as_str()
            )
        } else {
            reason.trim().to_owned()
        };
        ErrorInfo::new(ErrorType::HookStopped, message).with_details(format!(
            "a {} hook answered continue: false; go on with: delta continue --run-id {} -w {}",
            event.as_str(),
            self.metadata.run_id.as_str(),
            crate::quote::quote_path(self.paths.workspace())
        ))
    }
}

/// What the Stop hooks made of a final answer.
#[derive(Debug)]
pub(super) enum StopHook {
    /// The run completes.
    Complete,
    /// The model goes on, with the hook's reason.
    GoOn,
    /// A hook stopped the run.
    Stopped(Stop),
}

/// How a call that ran went, beyond its result, for the PostToolUse hooks.
#[derive(Debug, Clone)]
pub(super) struct Ran {
    /// It was an MCP server's tool.
    pub mcp: bool,
    /// How long it ran.
    pub duration: std::time::Duration,
    /// A command's stdout and stderr as kept in memory; `None`: the observation is the
    /// output.
    pub streams: Option<(String, String)>,
    /// It was stopped (timeout, signal, budget) rather than ending by itself.
    pub interrupted: bool,
}

/// `tool_response`: Claude Code's shape for Bash (`stdout`, `stderr`, `interrupted`,
/// `isImage`) for every tool, plus Delta's `exit_code`, `status` and `observation`.
fn tool_response(
    stdout: &str,
    stderr: &str,
    interrupted: bool,
    exit_code: Option<i32>,
    status: ActionStatus,
    observation: &str,
) -> Value {
    serde_json::json!({
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": interrupted,
        "isImage": false,
        "exit_code": exit_code,
        "status": status,
        "observation": observation,
    })
}

/// The tool call as Claude Code's hooks name it: an MCP tool is `mcp__<server>__<tool>`.
pub(super) fn tool_use(name: &str, mcp: bool, input: &Map<String, Value>, id: &str) -> ToolUse {
    ToolUse {
        tool_name: if mcp {
            format!("mcp__{name}")
        } else {
            name.to_owned()
        },
        tool_input: input.clone(),
        tool_use_id: id.to_owned(),
    }
}

/// The log line of a firing, and a warning when its answer was lost.
fn report(handler: &ClaudeHandler, firing: &Firing, observer: &mut dyn Observer) {
    let record = &firing.record;
    let event = &record.event;
    let command = &record.command;
    match &firing.reply {
        Ok(reply) => {
            let decided = reply
                .journaled_decision()
                .map_or_else(|| "no decision".to_owned(), |d| d.as_str().to_owned());
            let mut line = format!(
                "{event} hook `{command}` ({}): exit {}, {decided}",
                record.io_path_ref, record.ended
            );
            let said = firing.stdout.trim();
            if !reply.suppress_output && !said.is_empty() {
                let first = said.lines().next().unwrap_or_default();
                line.push_str(&format!("; stdout: {first}"));
            }
            observer.detail(Level::Info, line);
        }
        Err(error) => {
            let consequence = match handler.event {
                ClaudeEvent::PreToolUse => "the tool call proceeds without its answer",
                ClaudeEvent::SessionStart
                | ClaudeEvent::UserPromptSubmit
                | ClaudeEvent::PostToolUse
                | ClaudeEvent::PostToolUseFailure
                | ClaudeEvent::Notification
                | ClaudeEvent::PreCompact
                | ClaudeEvent::Stop
                | ClaudeEvent::SessionEnd => "the run goes on without its answer",
            };
            observer.on_event(&EngineEvent::Warning {
                message: format!(
                    "{event} hook `{command}` {error}; {consequence} (details in {})",
                    record.io_path_ref
                ),
            });
        }
    }
}
