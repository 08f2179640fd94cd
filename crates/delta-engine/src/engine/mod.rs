//! The Think-Act-Observe loop (seed 000 §2.1.3): drives a run to an end and leaves the
//! journal, `io/` records and `metadata.json` that describe it.
//!
//! Each step has its file, an `impl ActiveRun` block: `start` (the run created or taken
//! over), `think` (context, request, LLM call, THOUGHT), `act` (one tool call),
//! `ask_human` (the built-in question), `hooks` (the lifecycle hooks), `window` (each
//! request kept within the model's context window); this file keeps the loop and the
//! recording of its end.
//!
//! Stateless by construction: every iteration re-reads the journal from disk and
//! re-reads `context.yaml`, so the conversation the model sees is exactly what the journal
//! says, and a run can be killed at any point and rebuilt by another process. The only
//! things kept in memory across iterations are the run's own handles (journal writer,
//! lock, metadata being maintained), the agent's tool list, and what the server taught
//! about its context window (see `window`).
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
//!   built: FAILED with the message (a context-length 4xx is retried with a smaller
//!   context; only when the task and file sources alone do not fit is the run FAILED,
//!   `error.type` `ContextWindowExceeded`).
//!
//! Every end journals RUN_END, syncs the journal and writes the final metadata, in that
//! order, before [`ActiveRun::drive`] returns; the caller prints from the metadata on disk.

mod act;
mod ask_human;
mod called;
mod claude;
mod event;
mod hooks;
mod limits;
mod log;
mod mcp;
mod observation;
mod run_files;
mod shutdown;
mod start;
mod subagent;
mod think;
mod usage;
mod window;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

pub use act::parse_arguments;
pub use ask_human::{HumanInput, ask_human_schema};
pub use event::{EngineEvent, Level, NoObserver, Observer};
pub use limits::Limits;
pub use log::EngineLog;
pub use observation::{Ending, OBSERVATION_LIMIT_CHARS, cap_observation, format_observation};
pub use shutdown::{Shutdown, ShutdownTrigger, StopSignal};
pub use start::{NewRun, Origin};
pub use subagent::{ChildCall, ChildOutcome, LocalFuture, Spawner, Tree};
pub use window::CONTEXT_WINDOW_EXCEEDED;

use crate::config::Agent;
use crate::environment::{CallEnvironment, EnvironmentReport, Placement};
use crate::hooks::claude::{ClaudeRunner, StartSource};
use crate::hooks::{HookEvent, HookRunner, ToolCallInfo, ToolResultInfo};
use crate::journal::{
    ActionRequest, ActionResult, EventPayload, Journal, JournalError, MessageLevel, RunEnd,
    SystemMessage, ToolCall,
};
use crate::llm::ChatModel;
use crate::process::{OUTPUT_KEEP_BYTES, OutputPolicy};
use crate::run::{
    ErrorInfo, ErrorType, Metadata, RunLock, RunPaths, RunStateError, Timestamp, write_metadata,
};
use crate::tool::{ASK_HUMAN_TOOL, AgentTool, ToolSpec};
use act::Acted;
use ask_human::Asked;
use claude::{Ran, StopHook};
use event::Both;
use limits::{Cut, Verdict};
use think::request_params;
use window::Window;

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
    /// An `io/` record cannot be written; the message names the file.
    #[error(transparent)]
    Io(#[from] std::io::Error),
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
    /// Answers `ask_human` at once (`-i`); without it the run pauses for the answer.
    human: Option<Arc<dyn HumanInput>>,
    hooks: HookRunner,
    /// The hooks of Claude Code's protocol.
    claude: ClaudeRunner,
    /// SessionStart's `source`: how this process came to drive the run.
    source: StartSource,
    /// The prompt UserPromptSubmit judges first: the task, or `delta continue`'s
    /// instruction.
    prompt: Option<String>,
    /// Iterations the context left out when PreCompact last fired in this process.
    compacted: usize,
    /// The call a PreToolUse hook held for approval, answered by `delta continue`: it runs
    /// (or is refused) first thing.
    approval: Option<(ActionRequest, String)>,
    output: OutputPolicy,
    /// The run's MCP servers while the loop runs (started by `drive`).
    mcp: Option<crate::mcp::McpServers>,
    limits: Limits,
    /// The run's budgets and spending, linked to its ancestors' (sub-agents spend from
    /// them); its active time for the duration budget.
    ledger: crate::subagent::Ledger,
    /// Where the run sits in a tree of sub-agents, and what starts its children.
    tree: Tree,
    /// Sub-agents this run has started over its life: the next one's ordinal, in its id.
    ordinals: u32,
    /// Invalid final answers sent back to the model by this process.
    repairs: u32,
    /// The `ask_human` call answered by `delta continue`, with its journaled result: its
    /// `post_tool_execution` hook runs first, as it does for an answer given in-process.
    answered: Option<(ActionRequest, ActionResult)>,
    /// Calls of the model's last turn still to run before it is asked again: those after
    /// an `ask_human` answered by `delta continue`, or after open sub-agent calls.
    pending_calls: Vec<ToolCall>,
    /// Agent calls whose sub-agents an earlier process started and that have not answered
    /// them yet: continued before anything else.
    open_children: Vec<crate::resume::OpenChild>,
    /// Where tool processes (and stdio MCP servers) start: the run's environment.
    placement: Placement,
    /// What each ACTION_REQUEST records of that environment (`None`: the host).
    call_environment: Option<CallEnvironment>,
    /// context.yaml as last read, re-read before every call.
    context_file: crate::config::ContextCache,
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
    /// early. `observer` sees every step as it happens, as does the run's `engine.log`.
    ///
    /// # Errors
    /// Only when the end itself cannot be recorded. A failure to write the run's files
    /// mid-run ends the run FAILED with `error.type` `EngineError`, recorded as far as
    /// the disk allows.
    pub async fn drive(
        mut self,
        agent: &Agent,
        llm: &dyn ChatModel,
        observer: &mut dyn Observer,
        mut shutdown: Shutdown,
    ) -> Result<RunPaths, EngineError> {
        let mut log = EngineLog::open(&self.paths.engine_log(), self.output.redactor.clone());
        let observer = &mut Both {
            first: &mut log,
            second: observer,
        };
        observer.on_event(&EngineEvent::RunStarted {
            run_id: self.metadata.run_id.as_str().to_owned(),
            agent_name: agent.name.clone(),
            workspace: self.paths.workspace().to_path_buf(),
            run_dir: self.paths.dir().to_path_buf(),
            model: agent.llm.model.clone(),
            max_iterations: self.metadata.max_iterations,
            environment: self
                .metadata
                .environment
                .as_ref()
                .map(EnvironmentReport::summary),
        });
        // SessionStart and UserPromptSubmit first: a refused prompt needs no MCP server.
        let looped = match self
            .claude_start(&agent.llm.model, observer, &mut shutdown)
            .await
        {
            Err(error) => Err(error),
            Ok(Some(stop)) => Ok(stop),
            Ok(None) => match self.start_mcp(agent, observer, &mut shutdown).await {
                Ok(()) => self.run_loop(agent, llm, observer, &mut shutdown).await,
                Err(stop) => Ok(stop),
            },
        };
        self.stop_mcp(observer).await;
        let stop = match looped {
            Ok(stop) => stop,
            Err(error) => Stop::Failed(ErrorInfo::new(ErrorType::EngineError, error.to_string())),
        };
        self.claude_end(&stop, observer, &mut shutdown).await;
        self.end_hooks(&stop, observer, &mut shutdown).await;
        self.finish(stop, observer)?;
        Ok(self.paths)
    }

    async fn run_loop(
        &mut self,
        agent: &Agent,
        llm: &dyn ChatModel,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Stop, EngineError> {
        let ask_human = self.limits.ask_human;
        let tools: Vec<Value> = agent
            .tools
            .iter()
            .map(ToolSpec::function_schema)
            .chain(agent.agent_tools.iter().map(AgentTool::function_schema))
            .chain(self.mcp_schemas())
            .chain(ask_human.then(ask_human_schema))
            .collect();
        let params = request_params(&agent.llm);
        // What this process learns about the model's window, across iterations.
        let mut window = Window::default();
        let budget = self.metadata.max_iterations;
        let mut done = 0;
        // Whether the previous answer was a final answer cut by the token limit.
        let mut cut_before = false;
        if let Some((request, result)) = self.answered.take() {
            let call = ToolCallInfo {
                action_id: &request.action_id,
                tool_call_id: &request.tool_call_id,
                tool_name: &request.tool_name,
                tool_args: &request.tool_args,
                resolved_command: request.resolved_command.as_deref(),
            };
            let result = ToolResultInfo {
                status: result.status,
                exit_code: result.exit_code,
                observation: &result.observation_content,
            };
            let ran = Ran {
                mcp: false,
                duration: std::time::Duration::ZERO,
                streams: None,
                interrupted: false,
            };
            if let Some(error) = self
                .after_tool(call, result, false, Some(ran), observer, shutdown)
                .await?
            {
                return Ok(Stop::Interrupted(error));
            }
        }
        if let Some((request, answer)) = self.approval.take() {
            let acted = self
                .resume_approval(agent, request, &answer, observer, shutdown)
                .await?;
            if let Some(stop) = self.acted_stop(acted, observer)? {
                return Ok(stop);
            }
        }
        let open = std::mem::take(&mut self.open_children);
        if let Some(stop) = self
            .resume_children(agent, open, observer, shutdown)
            .await?
        {
            return Ok(stop);
        }
        let pending = std::mem::take(&mut self.pending_calls);
        if let Some(stop) = self
            .run_calls(agent, &pending, false, observer, shutdown)
            .await?
        {
            return Ok(stop);
        }
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
            if let Some(stop) = self.guard_run_files("the previous iteration", observer)? {
                return Ok(stop);
            }
            if let Some(exceeded) = self.budget_spent() {
                return self.budget_stop(exceeded, observer);
            }
            done += 1;
            self.metadata.iterations += 1;
            let iteration = self.metadata.iterations;
            observer.on_event(&EngineEvent::IterationStarted {
                iteration,
                max_iterations: budget,
            });
            self.hook(HookEvent::OnIterationStart, observer, shutdown)
                .await?;

            let said = match self
                .think(
                    agent,
                    llm,
                    iteration,
                    (&tools, &params),
                    &mut window,
                    observer,
                    shutdown,
                )
                .await?
            {
                Ok(said) => said,
                Err(stop) => return Ok(stop),
            };
            if let Some(stop) = self
                .run_calls(agent, &said.tool_calls, said.cut, observer, shutdown)
                .await?
            {
                return Ok(stop);
            }
            self.hook(HookEvent::OnIterationEnd, observer, shutdown)
                .await?;
            let cut_answer = said.tool_calls.is_empty() && said.cut;
            if cut_answer {
                if cut_before {
                    return Ok(Stop::Interrupted(output_truncated(agent)));
                }
                self.ask_to_continue(iteration, observer)?;
            } else if said.tool_calls.is_empty() {
                match self.final_answer(&said.content, observer)? {
                    Verdict::Final(result) => {
                        match self.claude_stop(&said.content, observer, shutdown).await? {
                            StopHook::Complete => return Ok(Stop::Completed(result)),
                            StopHook::Stopped(stop) => return Ok(stop),
                            StopHook::GoOn => {}
                        }
                    }
                    Verdict::Fail(error) => return Ok(Stop::Failed(error)),
                    Verdict::Repair => {}
                }
            }
            cut_before = cut_answer;
            self.record_budget();
            self.metadata.touch(Timestamp::now());
            self.write_metadata()?;
        }
    }

    /// Runs the model's tool calls in order (`ask_human` asked, or the run paused at it);
    /// the reason to stop, when one of them ends the loop. `truncated`: the response that
    /// asked for them ended by the token limit.
    async fn run_calls(
        &mut self,
        agent: &Agent,
        calls: &[ToolCall],
        truncated: bool,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<Stop>, EngineError> {
        let ask_human = self.limits.ask_human;
        let mut rest = calls;
        while let Some((call, after)) = rest.split_first() {
            // Consecutive agent calls start their sub-agents together.
            let group = rest
                .iter()
                .take_while(|call| Self::agent_tool(agent, &call.name).is_some())
                .count();
            if group > 0 {
                let (agent_calls, after) = rest.split_at(group);
                rest = after;
                if let Some(stop) = self
                    .run_agent_calls(agent, agent_calls, truncated, observer, shutdown)
                    .await?
                {
                    return Ok(Some(stop));
                }
                if let Some(stop) = self.guard_run_files("sub-agent calls", observer)? {
                    return Ok(Some(stop));
                }
                continue;
            }
            rest = after;
            if let Some(signal) = shutdown.requested() {
                return Ok(Some(interrupted(signal)));
            }
            if let Some(exceeded) = self.budget_spent() {
                return self.budget_stop(exceeded, observer).map(Some);
            }
            if ask_human && call.name == ASK_HUMAN_TOOL {
                match self.ask_human(call, observer, shutdown).await? {
                    Asked::Answered => continue,
                    Asked::Paused => return Ok(Some(Stop::WaitingForInput)),
                    Asked::Stopped(signal) => return Ok(Some(interrupted(signal))),
                    Asked::HookStopped(error) => return Ok(Some(Stop::Interrupted(error))),
                }
            }
            let acted = self.act(agent, call, truncated, observer, shutdown).await?;
            if let Some(stop) = self.acted_stop(acted, observer)? {
                return Ok(Some(stop));
            }
            let during = format!("tool `{}`", call.name);
            if let Some(stop) = self.guard_run_files(&during, observer)? {
                return Ok(Some(stop));
            }
        }
        Ok(None)
    }

    /// Where a tool call's end takes the loop: on, or to the run's end.
    fn acted_stop(
        &mut self,
        acted: Acted,
        observer: &mut dyn Observer,
    ) -> Result<Option<Stop>, EngineError> {
        match acted {
            Acted::Done => Ok(None),
            Acted::Cut(Cut::Signal(signal)) => Ok(Some(interrupted(signal))),
            Acted::Cut(Cut::Budget) => {
                let exceeded = self.duration_spent();
                self.budget_stop(exceeded, observer).map(Some)
            }
            Acted::Paused => Ok(Some(Stop::WaitingForInput)),
            Acted::Stopped(error) => Ok(Some(Stop::Interrupted(error))),
        }
    }

    /// A final answer cut by the token limit: journaled notice (the model reads it as a
    /// system message in the next request) instead of a COMPLETED run with half an answer.
    fn ask_to_continue(
        &mut self,
        iteration: u32,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        self.journal
            .append(EventPayload::SystemMessage(SystemMessage {
                level: MessageLevel::Warn,
                content: CUT_ANSWER_NOTICE.to_owned(),
            }))?;
        observer.detail(
            Level::Warn,
            format!(
                "iteration {iteration}: the answer was cut by the token limit (finish_reason \
                 length); asking the model to continue"
            ),
        );
        observer.on_event(&EngineEvent::Warning {
            message: "the model's answer was cut by the token limit (llm.max_tokens); asking \
                      it to continue"
                .to_owned(),
        });
        Ok(())
    }

    /// Records the end: RUN_END, journal sync, final metadata (fsynced by its atomic
    /// write). Each step is attempted even when an earlier one failed, so the metadata on
    /// disk is final whenever the disk allows it; the first error is returned.
    fn finish(&mut self, stop: Stop, observer: &mut dyn Observer) -> Result<(), EngineError> {
        self.record_budget();
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
        if let Err(e) = self.write_metadata() {
            first_error.get_or_insert(e.into());
        }
        observer.on_event(&EngineEvent::RunFinished {
            status,
            iterations: self.metadata.iterations,
            error,
        });
        first_error.map_or(Ok(()), Err)
    }
}

impl ActiveRun {
    /// `metadata.json` as the run stands, the run's secrets masked.
    fn write_metadata(&self) -> Result<(), RunStateError> {
        write_metadata(
            &self.paths.metadata(),
            &self.metadata,
            &self.output.redactor,
        )
    }

    /// An `io/` record of the run, its secrets masked.
    fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
        Ok(self.output.redactor.write_masked(path, bytes)?)
    }
}

/// Journaled (and so shown to the model) after a final answer cut by the token limit.
const CUT_ANSWER_NOTICE: &str = "Your previous answer was cut off by the token limit before \
     it was complete. Continue it from where it stopped, or give a shorter complete answer.";

fn output_truncated(agent: &Agent) -> ErrorInfo {
    let limit = agent
        .llm
        .max_tokens
        .map_or_else(|| "the server's default".to_owned(), |n| n.to_string());
    ErrorInfo::new(
        ErrorType::OutputTruncated,
        format!(
            "the model's final answer was cut by the token limit ({limit}) twice in a row, \
             so the run did not complete"
        ),
    )
    .with_details(
        "raise llm.max_tokens in agent.yaml (or ask for a shorter answer), then resume with \
         delta continue",
    )
}

fn interrupted(signal: StopSignal) -> Stop {
    Stop::Interrupted(ErrorInfo::new(
        ErrorType::Interrupted,
        format!("interrupted by {signal}"),
    ))
}

fn create_dir(dir: &Path) -> Result<(), EngineError> {
    Ok(fs_err::create_dir_all(dir)?)
}
