//! The Act and Observe steps for one tool call (seed 000 §2.1.3, steps 6–8): resolve it,
//! journal ACTION_REQUEST, pass the `pre_tool_execution` hook, run it, keep the complete
//! record in `io/tool_executions/{action_id}/`, journal what the model will read as
//! ACTION_RESULT, and pass the `post_tool_execution` hook.
//!
//! Everything the model did wrong (unknown tool, arguments that are not a JSON object,
//! missing parameters) and everything the command did wrong (non-zero exit, signal,
//! timeout, cannot start) becomes an observation: tool failures never end a run.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::ask_human::{Asking, Heard};
use super::claude::{Ran, tool_use};
use super::observation::{Ending, cap_observation, format_observation};
use super::{
    ActiveRun, Cut, EngineError, EngineEvent, OBSERVATION_LIMIT_CHARS, Observer, Shutdown,
    create_dir,
};
use crate::config::Agent;
use crate::environment::CallEnvironment;
use crate::hooks::claude::{
    NotificationType, Ruling, approval_prompt, approves, denied_observation, refused_observation,
    stopped_observation, unattended_observation,
};
use crate::hooks::{ToolCallInfo, ToolResultInfo};
use crate::journal::ClaudeDecision;
use crate::journal::{ActionRequest, ActionResult, ActionStatus, EventPayload, ToolCall};
use crate::process::{
    Captured, OutputPolicy, ProcessError, ProcessOptions, ProcessOutcome, run_process_in,
};
use crate::run::{ErrorInfo, InputType, InteractionRequest, Timestamp};
use crate::secrets::Redactor;
use crate::tool::{ASK_HUMAN_TOOL, Invocation, ToolSpec};

/// A tool call resolved against the agent's tools, before anything runs.
#[derive(Debug)]
pub enum Resolved<'a> {
    /// A command to run.
    Run {
        /// The tool.
        spec: &'a ToolSpec,
        /// Its argv and stdin.
        invocation: Invocation,
    },
    /// A tool of one of the run's MCP servers.
    Mcp {
        /// The tool.
        tool: crate::mcp::McpTool,
        /// The arguments sent.
        arguments: Map<String, Value>,
    },
    /// Nothing runs; the call is answered at once with an ERROR observation.
    Refused {
        /// What the model reads.
        observation: String,
    },
}

/// Parses the model's argument text: a JSON object, or empty text meaning `{}` (some
/// servers send `""` for a call without arguments).
pub fn parse_arguments(arguments: &str) -> Result<Map<String, Value>, String> {
    if arguments.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "Error: the arguments must be a JSON object of parameter names to values, but \
             they are {}. Call the tool again with an object, e.g. {{\"name\": \"value\"}}.",
            json_kind(&other)
        )),
        Err(error) => Err(format!(
            "Error: the arguments are not valid JSON ({error}). Call the tool again with a \
             JSON object of parameter names to values."
        )),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Finds the tool and builds its invocation; every failure is an observation. (`ask_human`
/// never gets here: the loop answers it itself, see `ask_human`.) `others` are the names
/// of the agent and MCP tools offered, for the list an unknown name gets.
pub fn resolve<'a>(
    tools: &'a [ToolSpec],
    others: &[String],
    name: &str,
    args: Result<&Map<String, Value>, &str>,
) -> Resolved<'a> {
    let Some(spec) = tools.iter().find(|tool| tool.name == name) else {
        let mut available: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        available.extend(others.iter().map(String::as_str));
        available.push(ASK_HUMAN_TOOL);
        return Resolved::Refused {
            observation: format!(
                "Error: there is no tool named '{name}'. Available tools: {}. Call one of \
                 these instead.",
                available.join(", ")
            ),
        };
    };
    let args = match args {
        Ok(args) => args,
        Err(observation) => {
            return Resolved::Refused {
                observation: observation.to_owned(),
            };
        }
    };
    match spec.invocation(args) {
        Ok(invocation) => Resolved::Run { spec, invocation },
        Err(error) => Resolved::Refused {
            observation: format!("Error: {error}"),
        },
    }
}

/// The observation of a tool call whose arguments the token limit cut.
const CUT_ARGUMENTS_OBSERVATION: &str = "Error: the arguments of this call were cut off by the \
     token limit before they were complete, so the tool was not run. Call it again with \
     shorter arguments (e.g. write a long file in parts).";

/// How a command run ended, for the journal and `io/`.
#[derive(Debug)]
pub struct Executed {
    /// SUCCESS (exit 0) or FAILED (non-zero exit, signal, timeout, output limit); ERROR
    /// when it did not start.
    pub status: ActionStatus,
    /// The exit code, when it exited.
    pub exit_code: Option<i32>,
    /// What the model reads, capped.
    pub observation: String,
    /// Wall time.
    pub duration: Duration,
}

/// Turns a finished process into the journal's view of it. The streams' in-memory copies
/// are already redacted by the process runner; `output_limit` is the policy's, for the
/// marker.
pub fn observe(
    outcome: &ProcessOutcome,
    timeout: Duration,
    output_limit: u64,
    limit: usize,
    full_output_ref: &str,
) -> Executed {
    let ending = ending_of(outcome, timeout, output_limit);
    let status = match ending {
        Ending::Exited(0) => ActionStatus::Success,
        Ending::Exited(_) | Ending::Signaled(_) | Ending::TimedOut(_) | Ending::OutputLimit(_) => {
            ActionStatus::Failed
        }
    };
    let text = format_observation(
        &kept_text(&outcome.stdout),
        &kept_text(&outcome.stderr),
        ending,
    );
    let unkept = outcome.stdout.omitted + outcome.stderr.omitted;
    Executed {
        status,
        exit_code: outcome.exit_code,
        observation: cap_observation(&text, unkept, limit, full_output_ref),
        duration: outcome.duration,
    }
}

/// The head and tail of a stream as text; where a long stream's middle is missing,
/// [`cap_observation`] puts its marker.
fn kept_text(captured: &Captured) -> String {
    let mut bytes = captured.head.clone();
    bytes.extend_from_slice(&captured.tail);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The output limit is reported before anything else: the output was cut, whatever the
/// process did after (a producer often dies of SIGPIPE before the kill).
fn ending_of(outcome: &ProcessOutcome, timeout: Duration, output_limit: u64) -> Ending {
    if outcome.output_limit_exceeded {
        return Ending::OutputLimit(output_limit);
    }
    if outcome.timed_out {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        return Ending::TimedOut(ms);
    }
    match (outcome.exit_code, outcome.signal) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signaled(signal),
        // Unix reports one or the other; treat the impossible case as a failure.
        (None, None) => Ending::Exited(-1),
    }
}

/// The process options of a tool: the workspace as working directory, the run's ids in
/// the environment, the tool's timeout, and the run's output policy with the streams
/// going straight to `stdout.log` and `stderr.log` in `record_dir`.
///
/// The environment is the engine's own plus `env`, API key included: a sub-agent run as
/// a tool (`delta run`) needs it. The policy's redactor keeps it out of what is recorded.
pub fn process_options(
    spec: &ToolSpec,
    workspace: &Path,
    env: &[(String, String)],
    output: &OutputPolicy,
    record_dir: &Path,
) -> ProcessOptions {
    ProcessOptions {
        cwd: workspace.to_path_buf(),
        env: env.to_vec(),
        timeout: spec.timeout(),
        output: output.with_files(record_dir.join("stdout.log"), record_dir.join("stderr.log")),
        record: Some(record_dir.to_path_buf()),
    }
}

/// What is written to `io/tool_executions/{action_id}/` besides the output the process
/// runner streamed to `stdout.log` and `stderr.log`.
#[derive(Debug)]
pub struct ExecutionRecord {
    /// `command.txt`: the resolved command line.
    pub command: String,
    /// `stderr.log` (and an empty `stdout.log`) for a command that never started: nothing
    /// was streamed to them. `None` leaves what the runner wrote.
    pub logs: Option<Vec<u8>>,
    /// `exit_code.txt`: the code, or `signal N`, `timeout`, `output limit exceeded`,
    /// `interrupted`, `not started`, `error`.
    pub exit: String,
    /// `duration_ms.txt`.
    pub duration: Duration,
}

impl ExecutionRecord {
    /// Writes the files into `dir` (created), the secrets of `redactor` (the run's)
    /// masked.
    pub fn write(&self, dir: &Path, redactor: &Redactor) -> std::io::Result<()> {
        fs_err::create_dir_all(dir)?;
        let write = |path: &Path, bytes: &[u8]| redactor.write_masked(path, bytes);
        write(
            &dir.join("command.txt"),
            format!("{}\n", self.command).as_bytes(),
        )?;
        if let Some(stderr) = &self.logs {
            write(&dir.join("stdout.log"), b"")?;
            write(&dir.join("stderr.log"), stderr)?;
        }
        write(
            &dir.join("exit_code.txt"),
            format!("{}\n", self.exit).as_bytes(),
        )?;
        fs_err::write(
            dir.join("duration_ms.txt"),
            format!("{}\n", self.duration.as_millis()),
        )
    }
}

impl ActiveRun {
    /// The names of the tools offered besides the command tools: agent tools and MCP tools.
    fn other_tool_names(&self, agent: &Agent) -> Vec<String> {
        agent
            .agent_tools
            .iter()
            .map(|tool| tool.name.clone())
            .chain(self.mcp_tool_names())
            .collect()
    }

    /// The start of any tool call, `ask_human` included: ACTION_REQUEST journaled (with the
    /// command that will run, when one will), then reported.
    pub(super) fn request_action(
        &mut self,
        call: &ToolCall,
        action_id: &str,
        tool_args: &Map<String, Value>,
        command: Option<&str>,
        environment: Option<CallEnvironment>,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        self.journal
            .append(EventPayload::ActionRequest(ActionRequest {
                action_id: action_id.to_owned(),
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                tool_args: tool_args.clone(),
                resolved_command: command.map(str::to_owned),
                subagent: None,
                environment,
            }))?;
        observer.on_event(&EngineEvent::ToolStarted {
            action_id: action_id.to_owned(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
            command: command.map(str::to_owned),
        });
        Ok(())
    }

    /// Step 7 for one tool call: Claude Code's PreToolUse hooks (which may rewrite, deny,
    /// or hold it for a human's approval), ACTION_REQUEST with the input that runs, then
    /// [`Self::execute`]. Returns how the call ended for the loop.
    ///
    /// `truncated`: the response ended by the token limit, so arguments that do not parse were
    /// most likely cut short, and the model is told so.
    pub(super) async fn act(
        &mut self,
        agent: &Agent,
        call: &ToolCall,
        truncated: bool,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Acted, EngineError> {
        let action_id = uuid::Uuid::new_v4().to_string();
        let parsed = parse_arguments(&call.arguments).map_err(|error| {
            if truncated {
                CUT_ARGUMENTS_OBSERVATION.to_owned()
            } else {
                error
            }
        });
        let mut tool_args = parsed.clone().unwrap_or_default();
        let mut resolved =
            self.resolve_call(agent, &call.name, parsed.as_ref().map_err(String::as_str));
        // Only a call that would run meets the hooks: an unknown tool or arguments that do
        // not fit are answered at once, as Claude Code rejects them before its hooks.
        let mut ruling = Ruling::default();
        if let Some(mcp) = runs(&resolved) {
            let tool = tool_use(&call.name, mcp, &tool_args, &call.id);
            ruling = self.claude_pre_tool(tool, observer, shutdown).await?;
            if let Some(input) = ruling.tool_input.take() {
                tool_args = input;
                resolved = self.resolve_call(agent, &call.name, Ok(&tool_args));
            }
        }
        let command = command_of(&resolved);
        let environment = self.environment_of(&resolved);
        self.request_action(
            call,
            &action_id,
            &tool_args,
            command.as_deref(),
            environment,
            observer,
        )?;
        let held = Held {
            call,
            action_id,
            tool_args,
            command,
        };
        if let Some(reason) = ruling.stop {
            let refused = Resolved::Refused {
                observation: stopped_observation(&reason),
            };
            self.execute(agent, &held, refused, true, observer, shutdown)
                .await?;
            let error = self.stop_error(crate::config::ClaudeEvent::PreToolUse, &reason);
            return Ok(Acted::Stopped(error));
        }
        let refusal = |observation: String| (Resolved::Refused { observation }, true);
        let (resolved, refused) = match ruling.decision {
            Some(ClaudeDecision::Deny) => refusal(denied_observation(&ruling.reason())),
            Some(ClaudeDecision::Ask | ClaudeDecision::Defer) if !self.limits.ask_human => {
                refusal(unattended_observation(&ruling.reason()))
            }
            Some(decision @ (ClaudeDecision::Ask | ClaudeDecision::Defer)) => {
                let prompt =
                    approval_prompt(&call.name, &held.tool_args, decision, &ruling.reason());
                match self.approve(&held, prompt, observer, shutdown).await? {
                    Heard::Answer(answer) if approves(&answer) => (resolved, false),
                    Heard::Answer(answer) => refusal(refused_observation(&answer)),
                    Heard::Paused => return Ok(Acted::Paused),
                    Heard::Stopped(signal) => {
                        let observation = format!(
                            "Error: the run was interrupted by {signal} while waiting for the \
                             human's approval; the call was not run."
                        );
                        let (refused, _) = refusal(observation);
                        self.execute(agent, &held, refused, true, observer, shutdown)
                            .await?;
                        return Ok(Acted::Cut(Cut::Signal(signal)));
                    }
                }
            }
            Some(ClaudeDecision::Allow | ClaudeDecision::Block | ClaudeDecision::Stop) | None => {
                (resolved, false)
            }
        };
        self.execute(agent, &held, resolved, refused, observer, shutdown)
            .await
    }

    /// The call a PreToolUse hook held, answered by `delta continue`: its ACTION_REQUEST
    /// (the input that was shown) is journaled, so it runs now with that input, or is
    /// refused with the human's answer. The hooks are not asked again: the human was.
    pub(super) async fn resume_approval(
        &mut self,
        agent: &Agent,
        request: ActionRequest,
        answer: &str,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Acted, EngineError> {
        let call = ToolCall {
            id: request.tool_call_id,
            name: request.tool_name,
            arguments: Value::Object(request.tool_args.clone()).to_string(),
        };
        let (resolved, refused) = if approves(answer) {
            let resolved = self.resolve_call(agent, &call.name, Ok(&request.tool_args));
            (resolved, false)
        } else {
            let observation = refused_observation(answer);
            (Resolved::Refused { observation }, true)
        };
        let held = Held {
            call: &call,
            action_id: request.action_id,
            tool_args: request.tool_args,
            command: request.resolved_command,
        };
        self.execute(agent, &held, resolved, refused, observer, shutdown)
            .await
    }

    /// Puts a held call's approval to the human (see `ask_human`'s `put_question`).
    async fn approve(
        &mut self,
        held: &Held<'_>,
        prompt: String,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Heard, EngineError> {
        let request = InteractionRequest {
            request_id: held.action_id.clone(),
            timestamp: Timestamp::now(),
            prompt,
            input_type: InputType::Confirmation,
            sensitive: false,
        };
        let asking = Asking {
            what: "the hook's approval question",
            kind: NotificationType::PermissionPrompt,
        };
        self.put_question(&request, asking, observer, shutdown)
            .await
    }

    /// The call with `name` and `args` against the agent's tools and the run's MCP tools.
    fn resolve_call<'a>(
        &self,
        agent: &'a Agent,
        name: &str,
        args: Result<&Map<String, Value>, &str>,
    ) -> Resolved<'a> {
        let is_command = agent.tools.iter().any(|tool| tool.name == name);
        match (self.mcp_tool(name), args) {
            (Some(tool), Ok(arguments)) if !is_command => Resolved::Mcp {
                tool,
                arguments: arguments.clone(),
            },
            (Some(_), Err(observation)) if !is_command => Resolved::Refused {
                observation: observation.to_owned(),
            },
            (Some(_) | None, _) => resolve(&agent.tools, &self.other_tool_names(agent), name, args),
        }
    }

    /// The environment of what runs: a command, or a tool of a server started in it.
    fn environment_of(&self, resolved: &Resolved<'_>) -> Option<CallEnvironment> {
        match resolved {
            Resolved::Run { .. } => self.call_environment.clone(),
            Resolved::Mcp { tool, .. } if self.mcp_server_is_local(&tool.server) => {
                self.call_environment.clone()
            }
            Resolved::Mcp { .. } | Resolved::Refused { .. } => None,
        }
    }

    /// A requested call from the `pre_tool_execution` hook on: execution (unless
    /// `resolved` refuses it), `io/` record, ACTION_RESULT, then the hooks after it.
    /// `refused`: a Claude Code hook or the human refused it (on purpose, not an error).
    async fn execute(
        &mut self,
        agent: &Agent,
        held: &Held<'_>,
        resolved: Resolved<'_>,
        refused: bool,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Acted, EngineError> {
        let call = held.call;
        let action_id = &held.action_id;
        let command = &held.command;
        let hook_call = ToolCallInfo {
            action_id,
            tool_call_id: &call.id,
            tool_name: &call.name,
            tool_args: &held.tool_args,
            resolved_command: command.as_deref(),
        };
        let blocked = self
            .pre_tool_execution(hook_call, observer, shutdown)
            .await?;
        let resolved = match blocked.clone() {
            Some(observation) => Resolved::Refused { observation },
            None => resolved,
        };
        let mcp = runs(&resolved);

        let record_dir = self.paths.tool_execution_dir(action_id);
        let full_output_ref = format!("io/tool_executions/{action_id}/");
        let mut stopped_by = None;
        let mut streams = None;
        let (status, exit_code, observation, duration) = match resolved {
            Resolved::Refused { observation } => {
                (ActionStatus::Error, None, observation, Duration::ZERO)
            }
            Resolved::Mcp { tool, arguments } => {
                let acted = self
                    .call_mcp(&tool, arguments, &record_dir, &full_output_ref, shutdown)
                    .await?;
                stopped_by = acted.stopped_by;
                (acted.status, None, acted.observation, acted.duration)
            }
            Resolved::Run { spec, invocation } => {
                let mut env =
                    tool_env(self.metadata.run_id.as_str(), agent, self.paths.workspace());
                // Where delta-sessions notes the holders this call starts (they leave its
                // process group), so a takeover after kill -9 can end them too.
                env.push((
                    delta_sessions::OWNER_DIR_ENV.to_owned(),
                    // Absolute: the tool runs in the workspace, not in our directory.
                    std::path::absolute(&record_dir)
                        .unwrap_or_else(|_| record_dir.clone())
                        .display()
                        .to_string(),
                ));
                // The runner streams stdout.log and stderr.log into it as output arrives.
                create_dir(&record_dir)?;
                let options = process_options(
                    spec,
                    self.paths.workspace(),
                    &env,
                    &self.output,
                    &record_dir,
                );
                let started = Instant::now();
                let stdin = invocation.stdin.as_deref().map(str::as_bytes);
                let deadline = self.deadline();
                let outcome = tokio::select! {
                    result = run_process_in(&self.placement, &invocation.argv, stdin, &options) => Ok(result),
                    signal = shutdown.wait() => Err(Cut::Signal(signal)),
                    () = until(deadline) => Err(Cut::Budget),
                };
                let command = command.clone().unwrap_or_default();
                let elapsed = started.elapsed();
                let (record, ended) = match outcome {
                    Ok(Ok(outcome)) => {
                        let executed = observe(
                            &outcome,
                            spec.timeout(),
                            self.output.limit,
                            OBSERVATION_LIMIT_CHARS,
                            &full_output_ref,
                        );
                        streams = Some((
                            (kept_text(&outcome.stdout), kept_text(&outcome.stderr)),
                            outcome.timed_out,
                        ));
                        let record = ExecutionRecord {
                            command,
                            logs: None,
                            exit: outcome.exit_text(),
                            duration: outcome.duration,
                        };
                        let ended = (
                            executed.status,
                            executed.exit_code,
                            executed.observation,
                            executed.duration,
                        );
                        (record, ended)
                    }
                    Ok(Err(error)) => {
                        let message = format!("Error: {error}");
                        let (logs, exit) = match error {
                            ProcessError::NotStarted(_) => {
                                (Some(message.clone().into_bytes()), "not started")
                            }
                            // What was streamed before the failure stays in the logs.
                            ProcessError::Output(_) => (None, "error"),
                        };
                        let record = ExecutionRecord {
                            command,
                            logs,
                            exit: exit.to_owned(),
                            duration: elapsed,
                        };
                        (record, (ActionStatus::Error, None, message, elapsed))
                    }
                    Err(cut) => {
                        stopped_by = Some(cut);
                        let (exit, why) = self.cut_reason(cut);
                        // The logs keep what the command wrote before it was stopped.
                        let record = ExecutionRecord {
                            command,
                            logs: None,
                            exit: exit.to_owned(),
                            duration: elapsed,
                        };
                        let message = format!(
                            "Error: {why} while this command ran; the command was stopped (its \
                             process group killed) and may have done only part of its work."
                        );
                        (record, (ActionStatus::Error, None, message, elapsed))
                    }
                };
                record.write(&record_dir, &self.output.redactor)?;
                ended
            }
        };
        self.journal
            .append(EventPayload::ActionResult(ActionResult {
                action_id: action_id.clone(),
                tool_call_id: call.id.clone(),
                status,
                observation_content: observation.clone(),
                exit_code,
                execution_ref: action_id.clone(),
                subagent: None,
            }))?;
        observer.on_event(&EngineEvent::ToolFinished {
            action_id: action_id.clone(),
            tool_name: call.name.clone(),
            status,
            exit_code,
            elapsed: duration,
            observation: observation.clone(),
        });
        let result = ToolResultInfo {
            status,
            exit_code,
            observation: &observation,
        };
        let ran = mcp.map(|mcp| Ran {
            mcp,
            duration,
            interrupted: stopped_by.is_some() || streams.as_ref().is_some_and(|(_, t)| *t),
            streams: streams.map(|(streams, _)| streams),
        });
        let blocked = blocked.is_some() || refused;
        let stopped = self
            .after_tool(hook_call, result, blocked, ran, observer, shutdown)
            .await?;
        Ok(match (stopped_by, stopped) {
            (Some(cut), _) => Acted::Cut(cut),
            (None, Some(error)) => Acted::Stopped(error),
            (None, None) => Acted::Done,
        })
    }
}

/// A requested call: what ACTION_REQUEST journaled.
struct Held<'c> {
    call: &'c ToolCall,
    action_id: String,
    /// The input that runs (after the hooks' rewrites).
    tool_args: Map<String, Value>,
    command: Option<String>,
}

/// How a tool call ended, for the loop.
#[derive(Debug)]
pub(super) enum Acted {
    /// It has its result; the loop goes on.
    Done,
    /// A signal or the duration budget stopped it.
    Cut(Cut),
    /// A hook holds it for a human's approval: the run pauses.
    Paused,
    /// A Claude Code hook answered `continue: false`.
    Stopped(ErrorInfo),
}

/// Whether a resolved call would run: `Some(true)` for an MCP tool, `Some(false)` for a
/// command, `None` when it is refused.
fn runs(resolved: &Resolved<'_>) -> Option<bool> {
    match resolved {
        Resolved::Run { .. } => Some(false),
        Resolved::Mcp { .. } => Some(true),
        Resolved::Refused { .. } => None,
    }
}

/// The command line a resolved call runs, for ACTION_REQUEST.
fn command_of(resolved: &Resolved<'_>) -> Option<String> {
    match resolved {
        Resolved::Run { invocation, .. } => Some(invocation.display()),
        Resolved::Mcp { tool, .. } => Some(tool.resolved_command()),
        Resolved::Refused { .. } => None,
    }
}

/// Resolves at `deadline`, or never.
pub(super) async fn until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The variables a tool sees on top of the engine's environment, so a tool can find the
/// run it serves (e.g. to read its journal). The engine's environment itself is passed on
/// whole, API key included, on purpose: a sub-agent run as a tool needs it.
pub(super) fn tool_env(run_id: &str, agent: &Agent, workspace: &Path) -> Vec<(String, String)> {
    vec![
        ("DELTA_RUN_ID".to_owned(), run_id.to_owned()),
        (
            "DELTA_AGENT_HOME".to_owned(),
            agent.home.display().to_string(),
        ),
        ("DELTA_CWD".to_owned(), workspace.display().to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_arguments_mean_no_arguments() {
        assert_eq!(parse_arguments("  "), Ok(Map::new()));
    }

    #[test]
    fn non_object_arguments_are_explained() {
        let error = parse_arguments("[1]").unwrap_err();
        assert!(error.contains("they are an array"), "{error}");
        let error = parse_arguments("{\"a\": ").unwrap_err();
        assert!(
            error.starts_with("Error: the arguments are not valid JSON"),
            "{error}"
        );
    }

    #[test]
    fn unknown_tool_lists_the_available_ones() {
        let Resolved::Refused { observation } = resolve(&[], &[], "nope", Ok(&Map::new())) else {
            panic!("resolved an unknown tool");
        };
        assert_eq!(
            observation,
            "Error: there is no tool named 'nope'. Available tools: ask_human. Call one of \
             these instead."
        );
    }

    fn outcome(exit_code: Option<i32>, signal: Option<i32>, timed_out: bool) -> ProcessOutcome {
        ProcessOutcome {
            stdout: Captured::whole(b"out\n".to_vec()),
            stderr: Captured::default(),
            exit_code,
            signal,
            timed_out,
            output_limit_exceeded: false,
            duration: Duration::from_millis(7),
        }
    }

    const MS: Duration = Duration::from_millis(5);
    const MIB: u64 = 1024 * 1024;

    #[test]
    fn statuses_follow_the_ending() {
        assert_eq!(
            observe(&outcome(Some(0), None, false), MS, MIB, 100, "r").status,
            ActionStatus::Success
        );
        assert_eq!(
            observe(&outcome(Some(3), None, false), MS, MIB, 100, "r").status,
            ActionStatus::Failed
        );
        assert_eq!(
            observe(&outcome(None, Some(9), false), MS, MIB, 100, "r").status,
            ActionStatus::Failed
        );
        let timed_out = observe(&outcome(None, Some(9), true), MS, MIB, 100, "r");
        assert_eq!(timed_out.status, ActionStatus::Failed);
        assert_eq!(
            timed_out.observation,
            "out\n[timed out after 5 ms; process group killed]"
        );
    }

    #[test]
    fn the_output_limit_is_named_whatever_killed_the_process() {
        // The producer died of SIGPIPE when the engine stopped reading.
        let mut flooded = outcome(None, Some(13), false);
        flooded.output_limit_exceeded = true;
        let executed = observe(&flooded, MS, MIB, 100, "r");
        assert_eq!(executed.status, ActionStatus::Failed);
        assert_eq!(
            executed.observation,
            "out\n[output exceeded 1 MiB; process group killed]"
        );
        assert_eq!(flooded.exit_text(), "output limit exceeded");
    }

    #[test]
    fn a_stream_cut_in_memory_keeps_its_head_and_tail_around_one_marker() {
        let mut long = outcome(None, Some(9), false);
        long.output_limit_exceeded = true;
        long.stdout = Captured {
            head: b"H".repeat(300),
            omitted: 5000,
            tail: b"T".repeat(300),
        };
        let executed = observe(&long, MS, MIB, 200, "io/tool_executions/a/");
        let text = &executed.observation;
        assert!(text.chars().count() <= 200, "{text}");
        assert!(text.starts_with("HHHH"), "{text}");
        assert!(
            text.ends_with("TTTT\n[output exceeded 1 MiB; process group killed]"),
            "{text}"
        );
        assert!(
            text.contains("more bytes omitted; full output in io/tool_executions/a/"),
            "{text}"
        );
        assert!(
            text.contains(" characters and 5000 more bytes omitted"),
            "{text}"
        );
    }

    #[test]
    fn exit_text_names_how_it_ended() {
        assert_eq!(outcome(Some(0), None, false).exit_text(), "0");
        assert_eq!(outcome(None, Some(15), false).exit_text(), "signal 15");
        assert_eq!(outcome(None, Some(9), true).exit_text(), "timeout");
    }
}
