//! The built-in `ask_human` (seed 000 §2.5): a question for the human, answered on the
//! spot through a [`HumanInput`] (`-i`), or later through `delta continue` — the run then
//! pauses in WAITING_FOR_INPUT with its question in `interaction/request.json`.
//!
//! Journal of one call: ACTION_REQUEST (no command), HUMAN_INPUT_REQUEST (its
//! `request_id` is the action id), then either HUMAN_INPUT_RECEIVED and a SUCCESS
//! ACTION_RESULT whose observation is the answer, or — paused — nothing more until
//! `delta continue` journals those two (see [`crate::resume`]).

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value, json};

use super::claude::{Ran, tool_use};
use super::{
    ActiveRun, EngineError, EngineEvent, Level, Observer, Shutdown, StopSignal, parse_arguments,
};
use crate::hooks::claude::{NotificationType, Ruling, denied_observation, stopped_observation};
use crate::hooks::{ToolCallInfo, ToolResultInfo};
use crate::journal::ClaudeDecision;
use crate::journal::{
    ActionResult, ActionStatus, EventPayload, HumanInputReceived, HumanInputRequest, ToolCall,
};
use crate::run::ErrorInfo;
use crate::run::{InputType, InteractionRequest, Timestamp, write_interaction_request};
use crate::tool::ASK_HUMAN_TOOL;

/// The built-in `ask_human` declaration (seed 000 §2.5.1), offered on every request.
pub fn ask_human_schema() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": ASK_HUMAN_TOOL,
            "description": "Request input from the human user. Execution pauses until a response is received. Use it only when you cannot proceed without information that only the user has.",
            "parameters": {
                "type": "object",
                "properties": {
                    "prompt": {
                        "type": "string",
                        "description": "Question or instruction to display to the user"
                    },
                    "input_type": {
                        "type": "string",
                        "enum": ["text", "password", "confirmation"],
                        "description": "Input type: text | password | confirmation"
                    },
                    "sensitive": {
                        "type": "boolean",
                        "description": "Whether the input is sensitive (its characters are hidden)"
                    }
                },
                "required": ["prompt"]
            }
        }
    })
}

/// Answers `ask_human` questions while the run waits (`-i`). The engine calls
/// [`HumanInput::ask`] on a thread of its own, so it may block on a terminal.
pub trait HumanInput: Send + Sync + fmt::Debug {
    /// Shows the question and returns the answer; `Ok(None)` when nobody can answer (the
    /// input is closed), in which case the run pauses for an asynchronous answer instead.
    ///
    /// # Errors
    /// When the question cannot be shown or the answer read; the run then pauses too.
    fn ask(&self, request: &InteractionRequest) -> std::io::Result<Option<String>>;

    /// The run is stopping (a signal) while [`HumanInput::ask`] still waits: undo what the
    /// question changed (e.g. terminal echo turned off for a password).
    fn abandon(&self);
}

/// What the ACTION_RESULT of an `ask_human` call needs besides its status and text.
struct Reply<'a> {
    /// The call, as the hooks see it.
    call: ToolCallInfo<'a>,
    /// When the call began.
    started: Instant,
    /// The answer is secret: not shown on the live stream.
    hidden: bool,
    /// The `pre_tool_execution` hook blocked the question.
    blocked: bool,
}

/// How an `ask_human` call ended for the loop.
#[derive(Debug)]
pub(super) enum Asked {
    /// The call has its ACTION_RESULT (the answer, or an error the model reads).
    Answered,
    /// The question waits in `interaction/request.json`: the run pauses.
    Paused,
    /// A signal arrived while the human was being asked.
    Stopped(StopSignal),
    /// A Claude Code hook answered `continue: false`; the call has its result.
    HookStopped(ErrorInfo),
}

/// What a question put to the human is, for the messages and the hooks.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asking {
    /// How the messages name it: `ask_human`, or an approval.
    pub what: &'static str,
    /// The Notification hooks' `notification_type`.
    pub kind: NotificationType,
}

/// How a question put to the human ended.
#[derive(Debug)]
pub(super) enum Heard {
    /// The answer, journaled.
    Answer(String),
    /// The question waits in `interaction/request.json`: the run pauses.
    Paused,
    /// A signal arrived while the human was being asked.
    Stopped(StopSignal),
}

/// What the model reads when it called `ask_human` without a usable question.
fn invalid(problem: &str) -> String {
    format!(
        "Error: {problem}. Call ask_human with {{\"prompt\": \"the question\"}}, optionally \
         \"input_type\" (text, password or confirmation) and \"sensitive\" (true or false)."
    )
}

/// The question of an `ask_human` call, or what the model did wrong.
fn question(args: &Map<String, Value>) -> Result<(String, InputType, bool), String> {
    let prompt = match args.get("prompt") {
        Some(Value::String(prompt)) if !prompt.trim().is_empty() => prompt.clone(),
        Some(Value::String(_)) => return Err(invalid("the prompt is empty")),
        Some(_) => return Err(invalid("\"prompt\" must be a string")),
        None => return Err(invalid("ask_human needs a \"prompt\"")),
    };
    let input_type = match args.get("input_type") {
        None | Some(Value::Null) => InputType::Text,
        Some(Value::String(name)) => match name.trim().to_ascii_lowercase().as_str() {
            "text" => InputType::Text,
            "password" => InputType::Password,
            "confirmation" => InputType::Confirmation,
            _ => return Err(invalid(&format!("unknown input_type {name:?}"))),
        },
        Some(_) => return Err(invalid("\"input_type\" must be a string")),
    };
    let sensitive = match args.get("sensitive") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(sensitive)) => *sensitive,
        Some(_) => return Err(invalid("\"sensitive\" must be true or false")),
    };
    Ok((prompt, input_type, sensitive))
}

/// The observation as the live stream shows it: a secret answer is not displayed.
fn shown(answer: &str, hidden: bool) -> String {
    if hidden {
        format!("(answer hidden: {} characters)", answer.chars().count())
    } else {
        answer.to_owned()
    }
}

impl ActiveRun {
    /// Answers `ask_human` questions through `human` from now on, instead of pausing.
    #[must_use]
    pub fn with_human(mut self, human: Arc<dyn HumanInput>) -> Self {
        self.human = Some(human);
        self
    }

    /// Step 7 for an `ask_human` call. Like any tool call it has an ACTION_REQUEST and,
    /// once answered, an ACTION_RESULT, and passes the `pre_tool_execution` (which may
    /// block the question) and `post_tool_execution` hooks, and Claude Code's PreToolUse
    /// (which may deny or rewrite it; its ask and defer change nothing: the call asks
    /// already) and PostToolUse.
    pub(super) async fn ask_human(
        &mut self,
        call: &ToolCall,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Asked, EngineError> {
        let started = Instant::now();
        let action_id = uuid::Uuid::new_v4().to_string();
        let mut parsed = parse_arguments(&call.arguments);
        let mut claude = Ruling::default();
        if let Ok(args) = &parsed {
            let tool = tool_use(&call.name, false, args, &call.id);
            claude = self.claude_pre_tool(tool, observer, shutdown).await?;
            if let Some(input) = claude.tool_input.clone() {
                parsed = Ok(input);
            }
        }
        let tool_args = parsed.clone().unwrap_or_default();
        self.request_action(call, &action_id, &tool_args, None, None, observer)?;
        let hook_call = ToolCallInfo {
            action_id: &action_id,
            tool_call_id: &call.id,
            tool_name: &call.name,
            tool_args: &tool_args,
            resolved_command: None,
        };
        let mut reply = Reply {
            call: hook_call,
            started,
            hidden: false,
            blocked: false,
        };
        if let Some(reason) = claude.stop {
            reply.blocked = true;
            let observation = stopped_observation(&reason);
            self.answer(&reply, ActionStatus::Error, observation, observer, shutdown)
                .await?;
            let error = self.stop_error(crate::config::ClaudeEvent::PreToolUse, &reason);
            return Ok(Asked::HookStopped(error));
        }
        if claude.decision == Some(ClaudeDecision::Deny) {
            reply.blocked = true;
            let observation = denied_observation(&claude.reason());
            return self
                .answer(&reply, ActionStatus::Error, observation, observer, shutdown)
                .await;
        }
        if let Some(observation) = self
            .pre_tool_execution(hook_call, observer, shutdown)
            .await?
        {
            reply.blocked = true;
            return self
                .answer(&reply, ActionStatus::Error, observation, observer, shutdown)
                .await;
        }
        let (prompt, input_type, sensitive) = match parsed.and_then(|args| question(&args)) {
            Ok(question) => question,
            Err(observation) => {
                return self
                    .answer(&reply, ActionStatus::Error, observation, observer, shutdown)
                    .await;
            }
        };
        let request = InteractionRequest {
            request_id: action_id.clone(),
            timestamp: Timestamp::now(),
            prompt,
            input_type,
            sensitive,
        };
        reply.hidden = sensitive || input_type == InputType::Password;
        let asking = Asking {
            what: ASK_HUMAN_TOOL,
            kind: NotificationType::IdlePrompt,
        };
        match self
            .put_question(&request, asking, observer, shutdown)
            .await?
        {
            Heard::Answer(text) => {
                self.answer(&reply, ActionStatus::Success, text, observer, shutdown)
                    .await
            }
            Heard::Paused => Ok(Asked::Paused),
            Heard::Stopped(signal) => {
                let observation = format!(
                    "Error: the run was interrupted by {signal} while waiting for the \
                     human's answer; no answer was given."
                );
                self.answer(&reply, ActionStatus::Error, observation, observer, shutdown)
                    .await?;
                Ok(Asked::Stopped(signal))
            }
        }
    }

    /// Puts `request` to the human: HUMAN_INPUT_REQUEST journaled, then asked through
    /// `-i`'s [`HumanInput`] when there is one (the answer journaled as
    /// HUMAN_INPUT_RECEIVED), else (or when nobody answers there) written to
    /// `interaction/request.json` for `delta continue`: the run pauses. The Notification
    /// hooks fire once, before the human is asked. `asking` says what is asked, for the
    /// messages and the hooks.
    pub(super) async fn put_question(
        &mut self,
        request: &InteractionRequest,
        asking: Asking,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Heard, EngineError> {
        self.journal
            .append(EventPayload::HumanInputRequest(HumanInputRequest {
                request_id: request.request_id.clone(),
                prompt: request.prompt.clone(),
                input_type: request.input_type,
                sensitive: request.sensitive,
            }))?;
        let what = asking.what;
        let answer = match self.human.clone() {
            None => None,
            Some(human) => {
                self.claude_notify(asking.kind, &request.prompt, observer, shutdown)
                    .await?;
                match ask_on_thread(&human, request, shutdown).await {
                    Ok(Ok(Some(answer))) => Some(answer),
                    Ok(Ok(None)) => {
                        observer.on_event(&EngineEvent::Warning {
                            message: format!(
                                "no answer to {what}: standard input is closed; the run \
                                 waits for an answer through `delta continue` instead"
                            ),
                        });
                        None
                    }
                    Ok(Err(error)) => {
                        observer.on_event(&EngineEvent::Warning {
                            message: format!(
                                "cannot ask on the terminal ({error}); the run waits for an \
                                 answer through `delta continue` instead"
                            ),
                        });
                        None
                    }
                    Err(signal) => {
                        human.abandon();
                        return Ok(Heard::Stopped(signal));
                    }
                }
            }
        };
        match answer {
            Some(text) => {
                self.journal
                    .append(EventPayload::HumanInputReceived(HumanInputReceived {
                        request_id: request.request_id.clone(),
                        response: text.clone(),
                    }))?;
                Ok(Heard::Answer(text))
            }
            None => {
                write_interaction_request(&self.paths, request, &self.output.redactor)?;
                observer.detail(
                    Level::Info,
                    format!(
                        "action {}: {what} waits for an answer in {}",
                        request.request_id,
                        self.paths.interaction_response().display()
                    ),
                );
                if self.human.is_none() {
                    self.claude_notify(asking.kind, &request.prompt, observer, shutdown)
                        .await?;
                }
                Ok(Heard::Paused)
            }
        }
    }

    /// Journals the ACTION_RESULT of an `ask_human` call, reports it, and runs the
    /// `post_tool_execution` hook, and Claude Code's PostToolUse for an answered one.
    async fn answer(
        &mut self,
        reply: &Reply<'_>,
        status: ActionStatus,
        observation: String,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Asked, EngineError> {
        let call = reply.call;
        let exit_code = match status {
            ActionStatus::Success => Some(0),
            ActionStatus::Failed | ActionStatus::Error => None,
        };
        self.journal
            .append(EventPayload::ActionResult(ActionResult {
                action_id: call.action_id.to_owned(),
                tool_call_id: call.tool_call_id.to_owned(),
                status,
                observation_content: observation.clone(),
                exit_code,
                execution_ref: call.action_id.to_owned(),
                subagent: None,
            }))?;
        observer.on_event(&EngineEvent::ToolFinished {
            action_id: call.action_id.to_owned(),
            tool_name: call.tool_name.to_owned(),
            status,
            exit_code,
            elapsed: reply.started.elapsed(),
            observation: shown(&observation, reply.hidden),
        });
        let result = ToolResultInfo {
            status,
            exit_code,
            observation: &observation,
        };
        let ran = (status == ActionStatus::Success).then(|| Ran {
            mcp: false,
            duration: reply.started.elapsed(),
            streams: None,
            interrupted: false,
        });
        self.after_tool(call, result, reply.blocked, ran, observer, shutdown)
            .await
            .map(|stopped| stopped.map_or(Asked::Answered, Asked::HookStopped))
    }
}

/// Runs `human.ask` on a thread of its own, raced against `shutdown`. A plain thread, not
/// the runtime's blocking pool: a read that never returns must not keep the process alive
/// after the run has ended.
async fn ask_on_thread(
    human: &Arc<dyn HumanInput>,
    request: &InteractionRequest,
    shutdown: &mut Shutdown,
) -> Result<std::io::Result<Option<String>>, StopSignal> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let (human, request) = (Arc::clone(human), request.clone());
    let spawned = std::thread::Builder::new()
        .name("ask_human".to_owned())
        .spawn(move || {
            // The receiver is gone only when the run stopped first; nobody needs the answer.
            let _ = sender.send(human.ask(&request));
        });
    if let Err(error) = spawned {
        return Ok(Err(error));
    }
    tokio::select! {
        answer = receiver => Ok(answer.unwrap_or_else(|_| {
            Err(std::io::Error::other("the question was abandoned"))
        })),
        signal = shutdown.wait() => Err(signal),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        if let Value::Object(map) = value {
            map
        } else {
            Map::new()
        }
    }

    #[test]
    fn a_question_needs_a_prompt_and_known_options() {
        assert_eq!(
            question(&args(json!({"prompt": "Name?"}))),
            Ok(("Name?".to_owned(), InputType::Text, false))
        );
        assert_eq!(
            question(&args(
                json!({"prompt": "Key?", "input_type": "Password", "sensitive": true})
            )),
            Ok(("Key?".to_owned(), InputType::Password, true))
        );
        assert_eq!(
            question(&args(json!({}))),
            Err(invalid("ask_human needs a \"prompt\""))
        );
        assert_eq!(
            question(&args(json!({"prompt": " "}))),
            Err(invalid("the prompt is empty"))
        );
        assert_eq!(
            question(&args(json!({"prompt": "x", "input_type": "number"}))),
            Err(invalid("unknown input_type \"number\""))
        );
        assert_eq!(
            question(&args(json!({"prompt": "x", "sensitive": "yes"}))),
            Err(invalid("\"sensitive\" must be true or false"))
        );
    }

    #[test]
    fn secret_answers_are_not_shown() {
        assert_eq!(shown("hunter2", true), "(answer hidden: 7 characters)");
        assert_eq!(shown("hunter2", false), "hunter2");
    }
}
