//! Runs one hook invocation end to end: numbers and prepares its directory, starts the
//! command with the hook environment, records `execution_meta/`, and reads `output/`.
//!
//! Hooks never see the API key in their environment, but could still find it (in the
//! engine's `/proc/PID/environ`, in a `.env` file): their stdout and stderr logs pass the
//! run's redactor as they are written, and so do the output files read back.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::context::{HookContext, HookControl, HookDetails};
use super::outcome::{HookEffect, HookFailure, HookOutcome};
use super::steps::{StepDirs, dir_name};
use crate::config::{HookName, Hooks};
use crate::journal::ActionStatus;
use crate::llm::API_KEY_VARIABLES;
use crate::process::{OutputPolicy, ProcessError, ProcessOptions, ProcessOutcome, run_process};
use crate::quote::command_line;
use crate::run::{ErrorInfo, FinalStatus, RunPaths, RunStatus, Timestamp};
use crate::secrets::Redactor;

/// Variables set to the empty string in every hook's environment: hooks never see the
/// API key, so a hook that logs its environment cannot leak it.
pub const SCRUBBED_VARIABLES: [&str; 2] = API_KEY_VARIABLES;

/// The most bytes of a tool result (or error message) passed in `$TOOL_RESULT`
/// (`$ERROR_MESSAGE`). Linux refuses to start a process with a single environment string
/// over 128 KiB; the whole text is always in `input/payload.dat`.
pub const TOOL_RESULT_ENV_LIMIT: usize = 64 * 1024;

/// A tool call, as `pre_tool_execution` and `post_tool_execution` see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCallInfo<'a> {
    /// Engine id of the execution.
    pub action_id: &'a str,
    /// The model's id for the call.
    pub tool_call_id: &'a str,
    /// The tool's name.
    pub tool_name: &'a str,
    /// The model's arguments.
    pub tool_args: &'a Map<String, Value>,
    /// The command line that runs, quoted for display, when there is one.
    pub resolved_command: Option<&'a str>,
}

/// A tool call's result, as `post_tool_execution` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolResultInfo<'a> {
    /// Outcome.
    pub status: ActionStatus,
    /// The command's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// What the model receives.
    pub observation: &'a str,
}

/// A hook point reached by the engine, with the data the hook receives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HookEvent<'a> {
    /// The request is built and about to be sent.
    PreLlmRequest {
        /// The request body.
        request: &'a Value,
    },
    /// A response arrived.
    PostLlmResponse {
        /// The response body exactly as received.
        body: &'a [u8],
    },
    /// A tool call is about to run.
    PreToolExecution(ToolCallInfo<'a>),
    /// A tool call ran (or was blocked).
    PostToolExecution(ToolCallInfo<'a>, ToolResultInfo<'a>),
    /// An error reached the journal.
    OnError(&'a ErrorInfo),
    /// The process is leaving the run.
    OnRunEnd {
        /// How the run ends.
        status: FinalStatus,
        /// Why, when FAILED or INTERRUPTED.
        error: Option<&'a ErrorInfo>,
        /// The final answer, when COMPLETED.
        result: Option<&'a Value>,
    },
    /// An iteration starts.
    OnIterationStart,
    /// An iteration ended.
    OnIterationEnd,
    /// A sub-agent run ended its part.
    OnSubagentEnd {
        /// The agent call that started it.
        call: ToolCallInfo<'a>,
        /// The sub-agent run.
        run_id: &'a str,
        /// How it ended.
        status: FinalStatus,
        /// Why, when FAILED or INTERRUPTED.
        error: Option<&'a ErrorInfo>,
        /// Its answer, when COMPLETED.
        result: Option<&'a Value>,
    },
}

impl HookEvent<'_> {
    /// The hook this event triggers.
    #[must_use]
    pub fn hook(&self) -> HookName {
        match self {
            HookEvent::PreLlmRequest { .. } => HookName::PreLlmRequest,
            HookEvent::PostLlmResponse { .. } => HookName::PostLlmResponse,
            HookEvent::PreToolExecution(_) => HookName::PreToolExecution,
            HookEvent::PostToolExecution(..) => HookName::PostToolExecution,
            HookEvent::OnError(_) => HookName::OnError,
            HookEvent::OnRunEnd { .. } => HookName::OnRunEnd,
            HookEvent::OnIterationStart => HookName::OnIterationStart,
            HookEvent::OnIterationEnd => HookName::OnIterationEnd,
            HookEvent::OnSubagentEnd { .. } => HookName::OnSubagentEnd,
        }
    }

    fn details(&self) -> HookDetails {
        match self {
            HookEvent::PreLlmRequest { .. } => HookDetails::PreLlmRequest,
            HookEvent::PostLlmResponse { .. } => HookDetails::PostLlmResponse,
            HookEvent::PreToolExecution(call) => HookDetails::PreToolExecution {
                action_id: call.action_id.to_owned(),
                tool_call_id: call.tool_call_id.to_owned(),
                tool_name: call.tool_name.to_owned(),
                tool_args: call.tool_args.clone(),
                resolved_command: call.resolved_command.map(str::to_owned),
            },
            HookEvent::PostToolExecution(call, result) => HookDetails::PostToolExecution {
                action_id: call.action_id.to_owned(),
                tool_call_id: call.tool_call_id.to_owned(),
                tool_name: call.tool_name.to_owned(),
                tool_args: call.tool_args.clone(),
                status: result.status,
                exit_code: result.exit_code,
            },
            HookEvent::OnError(error) => HookDetails::OnError {
                error: (*error).clone(),
            },
            HookEvent::OnRunEnd { status, error, .. } => HookDetails::OnRunEnd {
                status: *status,
                error: error.cloned(),
            },
            HookEvent::OnIterationStart => HookDetails::OnIterationStart,
            HookEvent::OnIterationEnd => HookDetails::OnIterationEnd,
            HookEvent::OnSubagentEnd {
                call,
                run_id,
                status,
                error,
                ..
            } => HookDetails::OnSubagentEnd {
                action_id: call.action_id.to_owned(),
                tool_name: call.tool_name.to_owned(),
                subagent_run_id: (*run_id).to_owned(),
                status: *status,
                error: error.cloned(),
            },
        }
    }

    /// The bytes of `input/payload.dat`; `None` for the iteration hooks, which have none.
    fn payload(&self) -> serde_json::Result<Option<Vec<u8>>> {
        let value = match self {
            HookEvent::PreLlmRequest { request } => (*request).clone(),
            HookEvent::PostLlmResponse { body } => return Ok(Some(body.to_vec())),
            HookEvent::PreToolExecution(call) => call_json(call),
            HookEvent::PostToolExecution(call, result) => json!({
                "call": call_json(call),
                "result": {
                    "status": result.status,
                    "exit_code": result.exit_code,
                    "observation": result.observation,
                },
            }),
            HookEvent::OnError(error) => serde_json::to_value(error)?,
            HookEvent::OnRunEnd {
                status,
                error,
                result,
            } => json!({ "status": status, "error": error, "result": result }),
            HookEvent::OnSubagentEnd {
                call,
                run_id,
                status,
                error,
                result,
            } => json!({
                "call": call_json(call),
                "subagent_run_id": run_id,
                "status": status,
                "error": error,
                "result": result,
            }),
            HookEvent::OnIterationStart | HookEvent::OnIterationEnd => return Ok(None),
        };
        let mut bytes = serde_json::to_vec_pretty(&value)?;
        bytes.push(b'\n');
        Ok(Some(bytes))
    }

    /// The hook-specific variables of seed 000 §2.7.3, plus `RUN_STATUS` for on_run_end.
    fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            HookEvent::PreToolExecution(call) => vec![("TOOL_NAME", call.tool_name.to_owned())],
            HookEvent::PostToolExecution(call, result) => vec![
                ("TOOL_NAME", call.tool_name.to_owned()),
                ("TOOL_RESULT", env_text(result.observation)),
            ],
            HookEvent::OnError(error) => vec![("ERROR_MESSAGE", env_text(&error.message))],
            HookEvent::OnRunEnd { status, .. } => {
                vec![("RUN_STATUS", RunStatus::from(*status).as_str().to_owned())]
            }
            HookEvent::OnSubagentEnd { run_id, status, .. } => vec![
                ("SUBAGENT_RUN_ID", (*run_id).to_owned()),
                (
                    "SUBAGENT_STATUS",
                    RunStatus::from(*status).as_str().to_owned(),
                ),
            ],
            HookEvent::PreLlmRequest { .. }
            | HookEvent::PostLlmResponse { .. }
            | HookEvent::OnIterationStart
            | HookEvent::OnIterationEnd => Vec::new(),
        }
    }
}

fn call_json(call: &ToolCallInfo<'_>) -> Value {
    json!({
        "action_id": call.action_id,
        "tool_call_id": call.tool_call_id,
        "tool_name": call.tool_name,
        "tool_args": call.tool_args,
        "resolved_command": call.resolved_command,
    })
}

/// A text made fit for one environment variable: no NUL byte (the kernel cannot pass
/// one) and at most [`TOOL_RESULT_ENV_LIMIT`] bytes.
fn env_text(text: &str) -> String {
    let text = text.replace('\0', "");
    if text.len() <= TOOL_RESULT_ENV_LIMIT {
        return text;
    }
    let mut end = TOOL_RESULT_ENV_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[truncated to {end} of {} bytes; the whole text is in input/payload.dat]",
        &text[..end],
        text.len()
    )
}

/// Runs the configured hooks of one run, numbering their invocations.
#[derive(Debug)]
pub struct HookRunner {
    hooks: Hooks,
    run_id: String,
    workspace: PathBuf,
    run_dir: PathBuf,
    journal: PathBuf,
    steps: StepDirs,
    output: OutputPolicy,
}

impl HookRunner {
    /// The runner of the run at `paths`, with the run's output policy: the limit of every
    /// hook's output, and the redactor of everything written under `io/hooks/`. Step
    /// numbers continue after the highest `io/hooks/{step}_*` directory already there, so
    /// a continued run never reuses one.
    #[must_use]
    pub fn new(hooks: Hooks, paths: &RunPaths, output: OutputPolicy) -> Self {
        // Hooks run in the workspace and receive these paths: make them absolute once, so
        // that they mean the same thing to the hook as to the engine.
        let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.into());
        Self {
            steps: StepDirs::new(absolute(&paths.hooks_dir())),
            hooks,
            run_id: paths.run_id().as_str().to_owned(),
            workspace: absolute(paths.workspace()),
            run_dir: absolute(paths.dir()),
            journal: absolute(&paths.journal()),
            output,
        }
    }

    /// The step number the next invocation will get.
    #[must_use]
    pub fn next_step(&self) -> u32 {
        self.steps.next()
    }

    /// Runs the hook `event` triggers, if one is configured (`None` otherwise: nothing is
    /// written). `iteration` is the current Think-Act-Observe iteration (from 1).
    ///
    /// Never fails: every problem is a FAILED [`HookOutcome`] whose effect is nothing.
    pub async fn run(&mut self, iteration: u32, event: HookEvent<'_>) -> Option<HookOutcome> {
        self.run_until(iteration, event, std::future::pending::<()>())
            .await
    }

    /// [`Self::run`], abandoning the hook when `cancel` completes first (the run is being
    /// stopped by a signal): its process group is killed and the outcome is FAILED with
    /// [`HookFailure::Interrupted`], recorded like any other.
    pub async fn run_until(
        &mut self,
        iteration: u32,
        event: HookEvent<'_>,
        cancel: impl Future,
    ) -> Option<HookOutcome> {
        let hook = event.hook();
        let spec = self.hooks.get(hook)?.clone();
        let (step, dir) = self.steps.allocate(hook.as_str());
        let outcome = |result| HookOutcome {
            hook,
            step,
            io_path_ref: format!("io/hooks/{}/", dir_name(step, hook.as_str())),
            result,
        };
        let dir = match dir {
            Ok(dir) => dir,
            Err(e) => return Some(outcome(Err(HookFailure::Prepare(e)))),
        };
        let io_path = format!("{}/", dir.display());
        if let Err(e) = self.prepare(&dir, &io_path, step, iteration, &event) {
            return Some(outcome(Err(HookFailure::Prepare(e))));
        }

        let mut env: Vec<(String, String)> = [
            ("DELTA_RUN_ID", self.run_id.clone()),
            ("DELTA_HOOK_NAME", hook.as_str().to_owned()),
            ("DELTA_HOOK_IO_PATH", io_path),
            ("RUN_DIR", self.run_dir.display().to_string()),
            ("JOURNAL_PATH", self.journal.display().to_string()),
            ("ITERATION_COUNT", iteration.to_string()),
        ]
        .into_iter()
        .chain(event.env())
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        env.extend(SCRUBBED_VARIABLES.map(|name| (name.to_owned(), String::new())));
        let meta = dir.join("execution_meta");
        let options = ProcessOptions {
            cwd: self.workspace.clone(),
            env,
            timeout: Duration::from_millis(spec.timeout_ms),
            output: self
                .output
                .with_files(meta.join("stdout.log"), meta.join("stderr.log")),
            record: None,
        };

        // Dropping the process future kills the hook's process group.
        let started = Instant::now();
        let process = tokio::select! {
            process = run_process(&spec.command, None, &options) => Some(process),
            _ = cancel => None,
        };
        let redactor = &self.output.redactor;
        let command = command_line(&spec.command);
        if let Err(e) = record(
            &meta,
            &command,
            process.as_ref(),
            started.elapsed(),
            redactor,
        ) {
            return Some(outcome(Err(HookFailure::Record(e))));
        }
        let Some(process) = process else {
            return Some(outcome(Err(HookFailure::Interrupted)));
        };
        let result = match process {
            Err(ProcessError::NotStarted(e)) => Err(HookFailure::Spawn(e.to_string())),
            Err(e @ ProcessError::Output(_)) => Err(HookFailure::Record(e.to_string())),
            Ok(ProcessOutcome {
                output_limit_exceeded: true,
                ..
            }) => Err(HookFailure::OutputLimitExceeded {
                limit_bytes: self.output.limit,
            }),
            Ok(ProcessOutcome {
                timed_out: true, ..
            }) => Err(HookFailure::TimedOut {
                timeout_ms: spec.timeout_ms,
            }),
            Ok(ProcessOutcome {
                exit_code: Some(0), ..
            }) => ingest(&dir.join("output"), &event, &self.output.redactor),
            Ok(ProcessOutcome {
                exit_code: Some(code),
                ..
            }) => Err(HookFailure::ExitCode(code)),
            Ok(ProcessOutcome {
                exit_code: None,
                signal,
                ..
            }) => Err(HookFailure::Signal(signal.unwrap_or_default())),
        };
        Some(outcome(result))
    }

    /// Writes `input/` and creates the empty `output/` and `execution_meta/`.
    fn prepare(
        &self,
        dir: &Path,
        io_path: &str,
        step: u32,
        iteration: u32,
        event: &HookEvent<'_>,
    ) -> Result<(), String> {
        let input = dir.join("input");
        for sub in [&input, &dir.join("output"), &dir.join("execution_meta")] {
            fs_err::create_dir(sub).map_err(|e| e.to_string())?;
        }
        let context = HookContext {
            run_id: self.run_id.clone(),
            iteration,
            step,
            timestamp: Timestamp::now(),
            workspace: self.workspace.display().to_string(),
            run_dir: self.run_dir.display().to_string(),
            journal_path: self.journal.display().to_string(),
            io_path: io_path.to_owned(),
            details: event.details(),
        };
        let mut context_json = serde_json::to_vec_pretty(&context)
            .map_err(|e| format!("cannot serialize context.json: {e}"))?;
        context_json.push(b'\n');
        let redactor = &self.output.redactor;
        write(redactor, &input.join("context.json"), &context_json)?;
        let payload = event
            .payload()
            .map_err(|e| format!("cannot serialize payload.dat: {e}"))?;
        if let Some(payload) = payload {
            write(redactor, &input.join("payload.dat"), &payload)?;
            if let HookEvent::PreLlmRequest { .. } = event {
                // Seed 001 §8.3 names the same request `proposed_payload.json`.
                write(redactor, &input.join("proposed_payload.json"), &payload)?;
            }
        }
        Ok(())
    }
}

/// Writes `execution_meta/` (the layout of `io/tool_executions/`) around the stdout.log
/// and stderr.log the process runner streamed; `process` is `None` when the hook was
/// abandoned after `elapsed`.
///
/// Returns how it ended in the words of `exit_code.txt`, and its duration in milliseconds.
pub(super) fn record(
    meta: &Path,
    command: &str,
    process: Option<&Result<ProcessOutcome, ProcessError>>,
    elapsed: Duration,
    redactor: &Redactor,
) -> Result<(String, u64), String> {
    let write = |path: &Path, bytes: &[u8]| write(redactor, path, bytes);
    write(&meta.join("command.txt"), format!("{command}\n").as_bytes())?;
    // The same words as `io/tool_executions/*/exit_code.txt`.
    let (exit_code, duration_ms) = match process {
        Some(Ok(outcome)) => (outcome.exit_text(), outcome.duration.as_millis()),
        Some(Err(ProcessError::NotStarted(e))) => {
            // Nothing ran, so nothing was streamed: say why where the output would be.
            write(&meta.join("stdout.log"), b"")?;
            write(&meta.join("stderr.log"), format!("Error: {e}\n").as_bytes())?;
            ("not started".to_owned(), 0)
        }
        Some(Err(ProcessError::Output(_))) => ("error".to_owned(), elapsed.as_millis()),
        None => ("interrupted".to_owned(), elapsed.as_millis()),
    };
    write(
        &meta.join("exit_code.txt"),
        format!("{exit_code}\n").as_bytes(),
    )?;
    write(
        &meta.join("duration_ms.txt"),
        format!("{duration_ms}\n").as_bytes(),
    )?;
    Ok((exit_code, u64::try_from(duration_ms).unwrap_or(u64::MAX)))
}

/// Reads what a successful hook wrote to `output/` into the effect on the run, secrets
/// redacted. Only `pre_llm_request` and `pre_tool_execution` can steer; other hooks'
/// files are ignored.
fn ingest(
    output: &Path,
    event: &HookEvent<'_>,
    redactor: &Redactor,
) -> Result<HookEffect, HookFailure> {
    match event {
        HookEvent::PreLlmRequest { .. } => ingest_override(output, redactor),
        HookEvent::PreToolExecution(call) => ingest_control(output, call.tool_name, redactor),
        HookEvent::PostLlmResponse { .. }
        | HookEvent::PostToolExecution(..)
        | HookEvent::OnError(_)
        | HookEvent::OnRunEnd { .. }
        | HookEvent::OnIterationStart
        | HookEvent::OnIterationEnd
        | HookEvent::OnSubagentEnd { .. } => Ok(HookEffect::None),
    }
}

/// The name of seed 001 §6.4 and the one of §8.3, which is accepted too.
const OVERRIDE_FILES: [&str; 2] = ["payload_override.dat", "final_payload.json"];

fn ingest_override(output: &Path, redactor: &Redactor) -> Result<HookEffect, HookFailure> {
    let mut found = Vec::new();
    for file in OVERRIDE_FILES {
        if let Some(bytes) = read_optional(&output.join(file), redactor).map_err(|reason| {
            HookFailure::InvalidOverride {
                file,
                reason: reason.clone(),
            }
        })? {
            found.push((file, bytes));
        }
    }
    let (file, bytes) = match found.as_slice() {
        [] => return Ok(HookEffect::None),
        [(file, bytes)] => (*file, bytes),
        [..] => {
            return Err(HookFailure::InvalidOverride {
                file: OVERRIDE_FILES[0],
                reason: format!(
                    "output/{} was written too; write only one of the two",
                    OVERRIDE_FILES[1]
                ),
            });
        }
    };
    let invalid = |reason: String| HookFailure::InvalidOverride { file, reason };
    let request: Value = serde_json::from_slice(bytes)
        .map_err(|e| invalid(format!("not JSON ({e}); write the complete request object")))?;
    let Value::Object(fields) = &request else {
        return Err(invalid(
            "not a JSON object; write the complete request, e.g. {\"model\": …, \"messages\": […]}"
                .to_owned(),
        ));
    };
    // The conversation of every API the engine speaks: `messages` (chat, Anthropic) or the
    // Responses API's `input`.
    let conversation = fields.get("messages").is_some_and(Value::is_array)
        || fields
            .get("input")
            .is_some_and(|input| input.is_array() || input.is_string());
    if !conversation {
        return Err(invalid(
            "it has no \"messages\" array; start from input/payload.dat and change what you need"
                .to_owned(),
        ));
    }
    Ok(HookEffect::ReplaceRequest(request))
}

fn ingest_control(
    output: &Path,
    tool_name: &str,
    redactor: &Redactor,
) -> Result<HookEffect, HookFailure> {
    let Some(bytes) = read_optional(&output.join("control.json"), redactor)
        .map_err(|reason| HookFailure::InvalidControl(reason.clone()))?
    else {
        return Ok(HookEffect::None);
    };
    let control = HookControl::parse(&bytes).map_err(HookFailure::InvalidControl)?;
    if !control.skip {
        return Ok(HookEffect::None);
    }
    Ok(HookEffect::SkipTool {
        observation: control.observation.unwrap_or_else(|| {
            format!("The call to `{tool_name}` was blocked by the pre_tool_execution hook.")
        }),
    })
}

/// The file's bytes with secrets redacted, `None` when it does not exist. A secret inside
/// a JSON string stays valid JSON: `[REDACTED]` needs no escaping. A file that held a
/// secret is rewritten redacted: the hook wrote it, but it is part of the run's record.
fn read_optional(path: &Path, redactor: &Redactor) -> Result<Option<Vec<u8>>, String> {
    match fs_err::read(path) {
        Ok(bytes) => {
            let redacted = redactor.redact_bytes(&bytes);
            if redacted != bytes {
                write(redactor, path, &redacted)?;
            }
            Ok(Some(redacted))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn write(redactor: &Redactor, path: &Path, bytes: &[u8]) -> Result<(), String> {
    redactor
        .write_masked(path, bytes)
        .map_err(|e| e.to_string())
}
