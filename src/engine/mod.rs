//! The Think-Act-Observe loop (seed 000 §2.1.3): creates a run, drives it to an end, and
//! leaves the journal, `io/` records and `metadata.json` that describe it.
//!
//! Stateless by construction: every iteration re-reads the journal from disk and
//! re-reads `context.yaml`, so the conversation the model sees is exactly what the journal
//! says, and a run can be killed at any point and rebuilt by another process. The only
//! things kept in memory across iterations are the run's own handles (journal writer,
//! lock, metadata being maintained) and the agent's tool list.
//!
//! Where a run ends, and how:
//! - the model answers without tool calls: COMPLETED, its text (or the JSON object/array
//!   the text parses as) is the result;
//! - the iteration budget is spent: INTERRUPTED, `error.type` `MaxIterationsReached`;
//! - the model calls `ask_human` and nobody answers at once (no `-i`): WAITING_FOR_INPUT,
//!   the question in `interaction/request.json` for `delta continue`;
//! - SIGINT/SIGTERM ([`Shutdown`]): the LLM call or tool in flight is abandoned (its
//!   process group killed), a dangling ACTION_REQUEST gets an ERROR result, INTERRUPTED
//!   with `error.type` `Interrupted`;
//! - the LLM API fails after retries, answers 4xx or garbage, or the context cannot be
//!   built: FAILED with the message.
//!
//! Every end journals RUN_END, syncs the journal and writes the final metadata, in that
//! order, before [`ActiveRun::drive`] returns; the caller prints from the metadata on disk.

mod act;
mod continued;
mod event;
mod hooks;
mod human;
mod log;
mod mcp;
mod observation;
mod shutdown;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

pub use act::{ask_human_schema, parse_arguments};
pub use continued::resume_run;
pub use event::{EngineEvent, NoObserver, Observer};
pub use human::HumanInput;
pub use log::{EngineLog, Level};
pub use observation::{Ending, OBSERVATION_LIMIT_CHARS, cap_observation, format_observation};
pub use shutdown::{Shutdown, ShutdownTrigger, StopSignal};

use crate::config::{Agent, LlmConfig, load_context};
use crate::context::{ContextEnv, build_context};
use crate::hooks::{HookEvent, HookRunner, ToolCallInfo, ToolResultInfo};
use crate::journal::{
    ActionRequest, ActionResult, ActionStatus, EventPayload, FsyncPolicy, Journal, JournalError,
    RunEnd, RunStart, Thought, ToolCall, read_journal,
};
use crate::llm::{
    AssistantMessage, AttemptRecord, ChatMessage, Completion, LlmClient, LlmError, build_request,
    cost_usd,
};
use crate::run::{
    ErrorInfo, ErrorType, Metadata, MetadataInit, ProcessIdentity, RunId, RunLock, RunPaths,
    RunStateError, Timestamp, create_run, write_metadata,
};
use crate::tool::{
    ASK_HUMAN_TOOL, OUTPUT_KEEP_BYTES, OutputPolicy, ProcessError, ProcessOutcome, ToolSpec,
    run_process,
};
use act::{ExecutionRecord, Resolved, observe, process_options, resolve};
use human::Asked;

// An observation's head and tail (half the cap each, up to 4 bytes a character) must come
// from the head and tail of a stream the process runner kept in memory, so that the gap
// in a long stream's copy always falls in the part the cap cuts out.
const _: () = assert!(OBSERVATION_LIMIT_CHARS * 4 / 2 <= OUTPUT_KEEP_BYTES);

/// Iterations a run may take when neither `--max-iterations` nor agent.yaml says.
pub const DEFAULT_MAX_ITERATIONS: u32 = 30;

/// `error.type` of a run whose context could not be built (broken context.yaml, a
/// missing source, a failed generator). Not a configuration error in the exit-code sense:
/// the run had started, so it ends FAILED with exit code 1.
pub const CONTEXT_ERROR: &str = "ContextError";

/// What a new run starts from.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    /// The agent, loaded with `${CWD}` = `workspace`.
    pub agent: &'a Agent,
    /// The workspace (absolute): tools' working directory, home of `.delta/`.
    pub workspace: &'a Path,
    /// `W001`… when the workspace is one of the agent's numbered workspaces.
    pub workspace_id: Option<String>,
    /// The run's id (validated; unique in the workspace or [`start_run`] fails).
    pub run_id: RunId,
    /// The task (`-m`).
    pub task: &'a str,
    /// The iteration budget of this process.
    pub max_iterations: u32,
    /// When the journal is fsynced (`DELTA_FSYNC`, validated by the caller up front).
    pub fsync: FsyncPolicy,
    /// What happens to the output of every tool, generator and hook of the run (its
    /// files are set per process): the limit, and the redactor of the run's API key, which
    /// also cleans `engine.log`.
    pub output: OutputPolicy,
}

/// A failure of the engine itself: the run directory cannot be written or read back.
/// Everything else (tools, the LLM, the context) ends the run with a status instead.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Creating, locking or writing the run's files failed (the run may already exist).
    #[error(transparent)]
    RunState(#[from] RunStateError),
    /// The journal cannot be written or read.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// An `io/` record cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The request body cannot be serialized (a bug: it is built from JSON values).
    #[error("cannot serialize the LLM request: {0}")]
    Serialize(#[source] serde_json::Error),
}

/// A run that this process owns: its directory exists, its lock is held, its metadata
/// says RUNNING and RUN_START is journaled.
#[derive(Debug)]
pub struct ActiveRun {
    paths: RunPaths,
    _lock: RunLock,
    journal: Journal,
    metadata: Metadata,
    log: EngineLog,
    /// Answers `ask_human` at once (`-i`); without it the run pauses for the answer.
    human: Option<Arc<dyn HumanInput>>,
    hooks: HookRunner,
    output: OutputPolicy,
    /// The run's MCP servers while the loop runs (started by `drive`).
    mcp: Option<crate::mcp::McpServers>,
}

/// Creates the run: one atomic `mkdir` of `.delta/{run_id}` (the uniqueness check, so an
/// existing id fails here before anything else is touched), the lock, RUNNING metadata
/// with this process's identity, and RUN_START with the task.
///
/// # Errors
/// [`RunStateError::RunExists`] (inside [`EngineError::RunState`]) when the id is taken;
/// I/O errors.
pub fn start_run(new: NewRun<'_>) -> Result<ActiveRun, EngineError> {
    let paths = create_run(new.workspace, &new.run_id)?;
    let lock = RunLock::try_acquire(&paths.lock())?;
    let metadata = Metadata::new(
        MetadataInit {
            run_id: new.run_id.clone(),
            agent_name: new.agent.name.clone(),
            agent_home: new.agent.home.clone(),
            work_dir: new.workspace.to_path_buf(),
            workspace_id: new.workspace_id,
            task: new.task.to_owned(),
            max_iterations: new.max_iterations,
        },
        &ProcessIdentity::current(),
        Timestamp::now(),
    );
    write_metadata(&paths.metadata(), &metadata)?;
    let journal = Journal::open_with(&paths.journal(), new.fsync)?;
    journal.append(EventPayload::RunStart(RunStart {
        run_id: new.run_id.clone(),
        task: new.task.to_owned(),
        agent_ref: new.agent.home.display().to_string(),
    }))?;
    journal.sync()?;
    let mut log = EngineLog::open(&paths.engine_log(), new.output.redactor.clone());
    log.info(&format!(
        "run {} started: agent '{}' ({}), workspace {}, model {}, max_iterations {}, pid {}",
        new.run_id.as_str(),
        new.agent.name,
        new.agent.home.display(),
        new.workspace.display(),
        new.agent.llm.model,
        new.max_iterations,
        metadata.pid
    ));
    Ok(ActiveRun {
        hooks: HookRunner::new(new.agent.hooks.clone(), &paths).with_output(new.output.clone()),
        paths,
        _lock: lock,
        journal,
        metadata,
        log,
        human: None,
        output: new.output,
        mcp: None,
    })
}

/// A step's outcome when it did not fail the engine: its value, or the reason the loop
/// stops here.
type Flow<T> = Result<T, Stop>;

/// How the loop stopped, before it is recorded.
#[derive(Debug)]
enum Stop {
    Completed(Value),
    Failed(ErrorInfo),
    Interrupted(ErrorInfo),
    WaitingForInput,
}

impl ActiveRun {
    /// The run's files.
    pub fn paths(&self) -> &RunPaths {
        &self.paths
    }

    /// Runs the loop to its end and records the end (RUN_END, journal sync, final
    /// metadata). Returns the run's paths; read `metadata.json` for the outcome.
    ///
    /// `llm` is used as it is (its retry settings included); `shutdown` stops the run
    /// early. Observers see every step as it happens.
    ///
    /// # Errors
    /// Only when the end itself cannot be recorded. A failure to write the run's files
    /// mid-run ends the run FAILED with `error.type` `EngineError`, recorded as far as
    /// the disk allows.
    pub async fn drive(
        mut self,
        agent: &Agent,
        llm: &LlmClient,
        observer: &mut dyn Observer,
        mut shutdown: Shutdown,
    ) -> Result<RunPaths, EngineError> {
        observer.on_event(&EngineEvent::RunStarted {
            run_id: self.metadata.run_id.as_str().to_owned(),
            agent_name: agent.name.clone(),
            workspace: self.paths.workspace().to_path_buf(),
            run_dir: self.paths.dir().to_path_buf(),
            model: agent.llm.model.clone(),
            max_iterations: self.metadata.max_iterations,
        });
        let looped = match self.start_mcp(agent, observer, &mut shutdown).await {
            Ok(()) => self.run_loop(agent, llm, observer, &mut shutdown).await,
            Err(stop) => Ok(stop),
        };
        self.stop_mcp().await;
        let stop = match looped {
            Ok(stop) => stop,
            Err(error) => {
                self.log.error(&format!("engine error: {error}"));
                Stop::Failed(ErrorInfo::new(ErrorType::EngineError, error.to_string()))
            }
        };
        self.end_hooks(&stop, observer, &mut shutdown).await;
        self.finish(stop, observer)?;
        Ok(self.paths)
    }

    async fn run_loop(
        &mut self,
        agent: &Agent,
        llm: &LlmClient,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Stop, EngineError> {
        let tools: Vec<Value> = agent
            .tools
            .iter()
            .map(ToolSpec::function_schema)
            .chain(self.mcp_schemas())
            .chain(std::iter::once(ask_human_schema()))
            .collect();
        let params = request_params(&agent.llm);
        let budget = self.metadata.max_iterations;
        let mut done = 0;
        loop {
            if let Some(signal) = shutdown.requested() {
                return Ok(interrupted(signal));
            }
            if done >= budget {
                return Ok(Stop::Interrupted(
                    ErrorInfo::new(
                        ErrorType::MaxIterationsReached,
                        format!(
                            "the iteration budget ({budget}) was spent before the model gave \
                             a final answer"
                        ),
                    )
                    .with_details(format!(
                        "resume with a fresh budget: delta continue --run-id {} -w {}",
                        self.metadata.run_id.as_str(),
                        self.paths.workspace().display()
                    )),
                ));
            }
            done += 1;
            self.metadata.iterations += 1;
            let iteration = self.metadata.iterations;
            observer.on_event(&EngineEvent::IterationStarted {
                iteration,
                max_iterations: budget,
            });
            self.log.info(&format!("iteration {iteration} started"));
            self.hook(HookEvent::OnIterationStart, observer, shutdown)
                .await?;

            let messages = match self.think_context(agent, observer, shutdown).await? {
                Ok(messages) => messages,
                Err(stop) => return Ok(stop),
            };
            let body = build_request(&agent.llm.model, &messages, &tools, &params);
            let body = self.pre_llm_request(body, observer, shutdown).await?;
            let completion = match self
                .call_llm(agent, llm, iteration, &body, observer, shutdown)
                .await?
            {
                Ok(completion) => completion,
                Err(stop) => return Ok(stop),
            };

            let content = completion.message.content.clone().unwrap_or_default();
            let tool_calls: Vec<ToolCall> = completion
                .message
                .tool_calls
                .iter()
                .map(|call| ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                })
                .collect();
            self.journal.append(EventPayload::Thought(Thought {
                content: content.clone(),
                llm_invocation_ref: completion.invocation_id.clone(),
                tool_calls: tool_calls.clone(),
            }))?;
            observer.on_event(&EngineEvent::Thought {
                content: content.clone(),
                tool_calls: tool_calls.len(),
            });
            for call in &tool_calls {
                if let Some(signal) = shutdown.requested() {
                    return Ok(interrupted(signal));
                }
                if call.name == ASK_HUMAN_TOOL {
                    match self.ask_human(call, observer, shutdown).await? {
                        Asked::Answered => continue,
                        Asked::Paused => return Ok(Stop::WaitingForInput),
                        Asked::Stopped(signal) => return Ok(interrupted(signal)),
                    }
                }
                if let Some(signal) = self.act(agent, call, observer, shutdown).await? {
                    return Ok(interrupted(signal));
                }
            }
            self.hook(HookEvent::OnIterationEnd, observer, shutdown)
                .await?;
            if tool_calls.is_empty() {
                return Ok(Stop::Completed(result_value(&content)));
            }
            self.metadata.touch(Timestamp::now());
            write_metadata(&self.paths.metadata(), &self.metadata)?;
        }
    }

    /// Steps 1–2: the journal as on disk and context.yaml as on disk, made into messages.
    async fn think_context(
        &mut self,
        agent: &Agent,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Flow<Vec<ChatMessage>>, EngineError> {
        let started = Instant::now();
        let journal_path = self.paths.journal();
        let events = read_journal(&journal_path)?.events;
        let workspace = self.paths.workspace().to_path_buf();
        let manifest = match load_context(&agent.home, &workspace) {
            Ok(manifest) => manifest,
            Err(error) => {
                let location = match (error.line, error.column) {
                    (Some(line), Some(column)) => format!(":{line}:{column}"),
                    (Some(line), None) => format!(":{line}"),
                    (None, _) => String::new(),
                };
                let message = format!(
                    "context.yaml cannot be loaded: {} ({}{location})",
                    error.message,
                    error.file.display()
                );
                self.log.error(&message);
                let mut info = ErrorInfo::new(ErrorType::Other(CONTEXT_ERROR.to_owned()), message);
                if let Some(help) = error.help {
                    info = info.with_details(help);
                }
                return Ok(Err(Stop::Failed(info)));
            }
        };
        let run_id = self.metadata.run_id.as_str().to_owned();
        let env = ContextEnv {
            run_id: &run_id,
            agent_home: &agent.home,
            workspace: &workspace,
            journal_path: &journal_path,
            output: &self.output,
        };
        let built = tokio::select! {
            built = build_context(&manifest, &events, &env) => built,
            signal = shutdown.wait() => return Ok(Err(interrupted(signal))),
        };
        let built = match built {
            Ok(built) => built,
            Err(error) => {
                let message = error.to_string();
                self.log.error(&message);
                return Ok(Err(Stop::Failed(ErrorInfo::new(
                    ErrorType::Other(CONTEXT_ERROR.to_owned()),
                    message,
                ))));
            }
        };
        for warning in &built.warnings {
            self.log.warn(warning);
            observer.on_event(&EngineEvent::Warning {
                message: warning.clone(),
            });
        }
        let elapsed = started.elapsed();
        self.log.info(&format!(
            "context built: {} messages from {} journal events in {} µs",
            built.messages.len(),
            events.len(),
            elapsed.as_micros()
        ));
        observer.on_event(&EngineEvent::ContextBuilt {
            messages: built.messages.len(),
            journal_events: events.len(),
            elapsed,
        });
        Ok(Ok(built.messages))
    }

    /// Step 4: serialize once, record, send those bytes, record the answer.
    async fn call_llm(
        &mut self,
        agent: &Agent,
        llm: &LlmClient,
        iteration: u32,
        body: &Value,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Flow<Answer>, EngineError> {
        let invocation_id = uuid::Uuid::new_v4().to_string();
        let bytes = serde_json::to_vec(body).map_err(EngineError::Serialize)?;
        let dir = self.paths.invocation_dir(&invocation_id);
        create_dir(&dir)?;
        write_file(&self.paths.invocation_request(&invocation_id), &bytes)?;
        let model = agent.llm.model.clone();
        observer.on_event(&EngineEvent::LlmRequestStarted {
            invocation_id: invocation_id.clone(),
            model: model.clone(),
            request_bytes: bytes.len(),
        });
        self.log.info(&format!(
            "invocation {invocation_id}: sending {} bytes to {} (model {model})",
            bytes.len(),
            llm.endpoint()
        ));
        let started_at = Timestamp::now();
        let started = Instant::now();
        let outcome = {
            let log = &mut self.log;
            let on_retry = |record: &AttemptRecord| {
                log.warn(&format!("invocation {invocation_id}: {record}"));
                observer.on_event(&EngineEvent::LlmRetry {
                    invocation_id: invocation_id.clone(),
                    detail: record.to_string(),
                });
            };
            tokio::select! {
                result = llm.complete_observed(&bytes, on_retry) => Ok(result),
                signal = shutdown.wait() => Err(signal),
            }
        };
        let mut record = InvocationRecord {
            invocation_id: invocation_id.clone(),
            iteration,
            model: model.clone(),
            response_model: None,
            status: "SUCCESS",
            started_at,
            duration_ms: millis(started.elapsed()),
            token_usage: None,
            finish_reason: None,
            attempts: 1,
            retries: Vec::new(),
            error: None,
            response_received: false,
        };
        let completion = match outcome {
            Err(signal) => {
                record.status = "CANCELLED";
                record.error = Some(format!("cancelled by {signal}"));
                self.write_invocation_record(&record)?;
                self.log.warn(&format!(
                    "invocation {invocation_id}: cancelled by {signal}"
                ));
                return Ok(Err(interrupted(signal)));
            }
            Ok(Err(error)) => {
                record.status = "FAILED";
                record.attempts = error.attempts().len().max(1);
                record.retries = retry_lines(error.attempts());
                record.error = Some(error.to_string());
                // The server's answer (an error status, a body that is no completion) is
                // the evidence of what went wrong; with no answer there is nothing to keep.
                if let Some(body) = error.response_body() {
                    self.write_response(&invocation_id, body)?;
                    record.response_received = true;
                }
                self.write_invocation_record(&record)?;
                self.log
                    .error(&format!("invocation {invocation_id}: failed: {error}"));
                return Ok(Err(Stop::Failed(llm_failure(&error))));
            }
            Ok(Ok(completion)) => completion,
        };
        self.write_response(&invocation_id, &completion.raw_body)?;
        record.response_received = true;
        record.response_model.clone_from(&completion.model);
        record.duration_ms = millis(completion.duration);
        record.token_usage = completion.usage.map(|usage| TokenCounts {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.total_tokens,
        });
        record.finish_reason.clone_from(&completion.finish_reason);
        record.attempts = completion.attempts.len() + 1;
        record.retries = retry_lines(&completion.attempts);
        self.write_invocation_record(&record)?;
        self.record_usage(agent, &completion);
        self.log.info(&format!(
            "invocation {invocation_id}: answered in {} ms after {} attempt(s); tokens in {} out {}; {} tool call(s)",
            record.duration_ms,
            record.attempts,
            record.token_usage.as_ref().map_or(0, |t| t.prompt_tokens),
            record.token_usage.as_ref().map_or(0, |t| t.completion_tokens),
            completion.message.tool_calls.len()
        ));
        observer.on_event(&EngineEvent::LlmResponded {
            invocation_id: invocation_id.clone(),
            elapsed: completion.duration,
            usage: completion.usage,
            retries: completion.attempts.len(),
        });
        let body = &completion.raw_body;
        self.hook(HookEvent::PostLlmResponse { body }, observer, shutdown)
            .await?;
        Ok(Ok(Answer {
            invocation_id,
            message: completion.message,
        }))
    }

    /// `response.json`: the body as received, except the API key, which a careless server
    /// may echo and which is never written to a file.
    fn write_response(&self, invocation_id: &str, body: &[u8]) -> Result<(), EngineError> {
        let body = self.output.redactor.redact_bytes(body);
        write_file(&self.paths.invocation_response(invocation_id), &body)
    }

    fn write_invocation_record(&self, record: &InvocationRecord) -> Result<(), EngineError> {
        let path = self.paths.invocation_metadata(&record.invocation_id);
        let mut bytes = serde_json::to_vec_pretty(record).map_err(EngineError::Serialize)?;
        bytes.push(b'\n');
        write_file(&path, &bytes)
    }

    /// Adds the call's tokens and estimated cost to the run's usage (step 8).
    fn record_usage(&mut self, agent: &Agent, completion: &Completion) {
        let model = &agent.llm.model;
        let (input, output) = completion.usage.map_or((0, 0), |usage| {
            (usage.prompt_tokens, usage.completion_tokens)
        });
        let pricing = agent
            .llm
            .pricing
            .map(|p| (p.input_per_million, p.output_per_million));
        let cost = match cost_usd(model, input, output, pricing) {
            Some(cost) => cost,
            None => {
                self.metadata.usage.cost_note = Some(format!(
                    "no price is known for model '{model}', so its cost is counted as 0; set \
                     llm.pricing (input_per_million, output_per_million) in agent.yaml to \
                     estimate it"
                ));
                0.0
            }
        };
        self.metadata.usage.record(model, input, output, cost);
    }

    /// Step 7 for one tool call: ACTION_REQUEST, execution, `io/` record, ACTION_RESULT.
    /// Returns the signal when the run was asked to stop while the tool ran.
    async fn act(
        &mut self,
        agent: &Agent,
        call: &ToolCall,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<StopSignal>, EngineError> {
        let action_id = uuid::Uuid::new_v4().to_string();
        let parsed = parse_arguments(&call.arguments);
        let tool_args = parsed.clone().unwrap_or_default();
        let is_command = agent.tools.iter().any(|tool| tool.name == call.name);
        let resolved = match (self.mcp_tool(&call.name), &parsed) {
            (Some(tool), Ok(arguments)) if !is_command => Resolved::Mcp {
                tool,
                arguments: arguments.clone(),
            },
            (Some(_), Err(observation)) if !is_command => Resolved::Refused {
                observation: observation.clone(),
            },
            (Some(_) | None, _) => resolve(
                &agent.tools,
                &self.mcp_tool_names(),
                &call.name,
                parsed.as_ref().map_err(String::as_str),
            ),
        };
        let command = match &resolved {
            Resolved::Run { invocation, .. } => Some(invocation.display()),
            Resolved::Mcp { tool, .. } => Some(tool.resolved_command()),
            Resolved::Refused { .. } => None,
        };
        self.journal
            .append(EventPayload::ActionRequest(ActionRequest {
                action_id: action_id.clone(),
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                tool_args: tool_args.clone(),
                resolved_command: command.clone(),
            }))?;
        observer.on_event(&EngineEvent::ToolStarted {
            action_id: action_id.clone(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
            command: command.clone(),
        });
        let hook_call = ToolCallInfo {
            action_id: &action_id,
            tool_call_id: &call.id,
            tool_name: &call.name,
            tool_args: &tool_args,
            resolved_command: command.as_deref(),
        };
        let blocked = self
            .pre_tool_execution(hook_call, observer, shutdown)
            .await?;
        let resolved = match blocked.clone() {
            Some(observation) => Resolved::Refused { observation },
            None => resolved,
        };

        let record_dir = self.paths.tool_execution_dir(&action_id);
        let full_output_ref = format!("io/tool_executions/{action_id}/");
        let mut stopped_by = None;
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
                let env = tool_env(self.metadata.run_id.as_str(), agent, self.paths.workspace());
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
                let outcome = tokio::select! {
                    result = run_process(&invocation.argv, stdin, &options) => Ok(result),
                    signal = shutdown.wait() => Err(signal),
                };
                let command = command.clone().unwrap_or_default();
                match outcome {
                    Ok(Ok(outcome)) => {
                        write_execution(&record_dir, &command, &outcome)?;
                        let executed = observe(
                            &outcome,
                            spec.timeout(),
                            self.output.limit,
                            OBSERVATION_LIMIT_CHARS,
                            &full_output_ref,
                        );
                        (
                            executed.status,
                            executed.exit_code,
                            executed.observation,
                            executed.duration,
                        )
                    }
                    Ok(Err(error)) => {
                        let message = format!("Error: {error}");
                        let record = match error {
                            ProcessError::NotStarted(_) => ExecutionRecord {
                                command: &command,
                                logs: Some((b"", message.as_bytes())),
                                exit: "not started".to_owned(),
                                duration: started.elapsed(),
                            },
                            // What was streamed before the failure stays in the logs.
                            ProcessError::Output(_) => ExecutionRecord {
                                command: &command,
                                logs: None,
                                exit: "error".to_owned(),
                                duration: started.elapsed(),
                            },
                        };
                        record
                            .write(&record_dir)
                            .map_err(|source| EngineError::Io {
                                path: record_dir.clone(),
                                source,
                            })?;
                        (ActionStatus::Error, None, message, started.elapsed())
                    }
                    Err(signal) => {
                        stopped_by = Some(signal);
                        // The logs keep what the command wrote before it was stopped.
                        let record = ExecutionRecord {
                            command: &command,
                            logs: None,
                            exit: "interrupted".to_owned(),
                            duration: started.elapsed(),
                        };
                        record
                            .write(&record_dir)
                            .map_err(|source| EngineError::Io {
                                path: record_dir.clone(),
                                source,
                            })?;
                        let message = format!(
                            "Error: the run was interrupted by {signal} while this command ran; \
                             the command was stopped (its process group killed) and may have \
                             done only part of its work."
                        );
                        (ActionStatus::Error, None, message, started.elapsed())
                    }
                }
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
            }))?;
        self.log.info(&format!(
            "action {action_id}: {} {} in {} ms (exit code {})",
            call.name,
            status_name(status),
            duration.as_millis(),
            exit_code.map_or_else(|| "none".to_owned(), |c| c.to_string())
        ));
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
        self.post_tool_execution(hook_call, result, blocked.is_some(), observer, shutdown)
            .await?;
        Ok(stopped_by)
    }

    /// Records the end: RUN_END, journal sync, final metadata (fsynced by its atomic
    /// write). Each step is attempted even when an earlier one failed, so the metadata on
    /// disk is final whenever the disk allows it; the first error is returned.
    fn finish(&mut self, stop: Stop, observer: &mut dyn Observer) -> Result<(), EngineError> {
        let now = Timestamp::now();
        let (error, result) = match stop {
            Stop::Completed(result) => {
                self.metadata.complete(result.clone(), now);
                (None, Some(result))
            }
            Stop::Failed(error) => {
                self.metadata.fail(error.clone(), now);
                (Some(error), None)
            }
            Stop::Interrupted(error) => {
                self.metadata.interrupt(error.clone(), now);
                (Some(error), None)
            }
            Stop::WaitingForInput => {
                self.metadata.wait_for_input(now);
                (None, None)
            }
        };
        let status = self.metadata.status;
        let mut first_error: Option<EngineError> = None;
        if let Some(final_status) = status.as_final() {
            let appended = self.journal.append(EventPayload::RunEnd(RunEnd {
                status: final_status,
                error: error.clone(),
                result,
            }));
            if let Err(e) = appended {
                first_error.get_or_insert(e.into());
            }
        }
        if let Err(e) = self.journal.sync() {
            first_error.get_or_insert(e.into());
        }
        if let Err(e) = write_metadata(&self.paths.metadata(), &self.metadata) {
            first_error.get_or_insert(e.into());
        }
        self.log.info(&format!(
            "run ended {status} after {} iteration(s){}",
            self.metadata.iterations,
            error
                .as_ref()
                .map(|e| format!(": {}: {}", e.error_type, e.message))
                .unwrap_or_default()
        ));
        observer.on_event(&EngineEvent::RunFinished {
            status,
            iterations: self.metadata.iterations,
            error,
        });
        first_error.map_or(Ok(()), Err)
    }
}

/// The model's answer to one request.
struct Answer {
    invocation_id: String,
    message: AssistantMessage,
}

/// `io/invocations/{id}/metadata.json`.
#[derive(Debug, Serialize)]
struct InvocationRecord {
    invocation_id: String,
    iteration: u32,
    /// The model asked for.
    model: String,
    /// The model that answered, as the server names it.
    response_model: Option<String>,
    /// SUCCESS, FAILED or CANCELLED.
    status: &'static str,
    started_at: Timestamp,
    /// Wall time, retries and waits included.
    duration_ms: u64,
    token_usage: Option<TokenCounts>,
    finish_reason: Option<String>,
    /// HTTP attempts made.
    attempts: usize,
    /// One line per failed attempt (`retry 1/4 in 0 ms after HTTP 500: …`).
    retries: Vec<String>,
    error: Option<String>,
    /// Whether the last attempt got an answer: its body is `response.json` (as received,
    /// the API key redacted), even when the call failed on it. False when nothing arrived
    /// (connection failure, timeout, cancelled), and there is no `response.json`.
    response_received: bool,
}

#[derive(Debug, Serialize)]
struct TokenCounts {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

fn retry_lines(attempts: &[AttemptRecord]) -> Vec<String> {
    attempts.iter().map(ToString::to_string).collect()
}

/// The request parameters besides model, messages and tools: `temperature`, `max_tokens`
/// and every other key of `llm:`, as written. `pricing` is not among them: it is ours.
fn request_params(llm: &LlmConfig) -> Map<String, Value> {
    let mut params = llm.extra.clone();
    if let Some(temperature) = llm.temperature {
        params.insert("temperature".to_owned(), Value::from(temperature));
    }
    if let Some(max_tokens) = llm.max_tokens {
        params.insert("max_tokens".to_owned(), Value::from(max_tokens));
    }
    params
}

/// The variables a tool sees on top of the engine's environment, so a tool can find the
/// run it serves (e.g. to read its journal). The engine's environment itself is passed on
/// whole, API key included, on purpose: a sub-agent run as a tool needs it.
fn tool_env(run_id: &str, agent: &Agent, workspace: &Path) -> Vec<(String, String)> {
    vec![
        ("DELTA_RUN_ID".to_owned(), run_id.to_owned()),
        (
            "DELTA_AGENT_HOME".to_owned(),
            agent.home.display().to_string(),
        ),
        ("DELTA_CWD".to_owned(), workspace.display().to_string()),
    ]
}

/// The final answer: a JSON object or array when the whole text parses as one, else the
/// text itself.
pub fn result_value(content: &str) -> Value {
    match serde_json::from_str::<Value>(content.trim()) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => value,
        Ok(_) | Err(_) => Value::String(content.to_owned()),
    }
}

fn interrupted(signal: StopSignal) -> Stop {
    Stop::Interrupted(ErrorInfo::new(
        ErrorType::Interrupted,
        format!("interrupted by {signal}"),
    ))
}

fn llm_failure(error: &LlmError) -> ErrorInfo {
    ErrorInfo::new(ErrorType::LlmError, error.to_string())
}

fn status_name(status: ActionStatus) -> &'static str {
    match status {
        ActionStatus::Success => "SUCCESS",
        ActionStatus::Failed => "FAILED",
        ActionStatus::Error => "ERROR",
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn create_dir(dir: &Path) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir).map_err(|source| EngineError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    std::fs::write(path, bytes).map_err(|source| EngineError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn write_execution(dir: &Path, command: &str, outcome: &ProcessOutcome) -> Result<(), EngineError> {
    ExecutionRecord {
        command,
        logs: None,
        exit: outcome.exit_text(),
        duration: outcome.duration,
    }
    .write(dir)
    .map_err(|source| EngineError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_is_json_only_for_objects_and_arrays() {
        assert_eq!(result_value(" {\"a\": 1} "), serde_json::json!({"a": 1}));
        assert_eq!(result_value("[1, 2]"), serde_json::json!([1, 2]));
        assert_eq!(result_value("42"), Value::String("42".to_owned()));
        assert_eq!(result_value("\"x\""), Value::String("\"x\"".to_owned()));
        assert_eq!(result_value("Done."), Value::String("Done.".to_owned()));
    }
}
