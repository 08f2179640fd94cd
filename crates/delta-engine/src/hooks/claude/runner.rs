//! Runs one hook of Claude Code's protocol: the event as JSON on stdin (one write, then
//! closed; a hook that never reads it is fine), the command through `sh -c` in the
//! workspace (or its program and `args` without a shell), a timeout that kills its process
//! group, and the record `io/claude_hooks/{step:03}_{Event}/`: `input.json`, `command.txt`,
//! `stdout.log`, `stderr.log`, `exit_code.txt`, `duration_ms.txt`, all redacted.
//!
//! The environment is the engine's, plus `CLAUDE_PROJECT_DIR` (the workspace, as Claude Code
//! sets the project root), `CLAUDE_PLUGIN_ROOT` (the agent directory, so that a plugin's
//! `hooks.json` runs unchanged from it) and Delta's names for the same; the API key
//! variables are emptied unless the hook says `pass_api_key: true`.

use std::path::Path;
use std::time::Instant;

use serde_json::{Map, Value};

use super::event::{ClaudeInput, Session};
use super::reply::{Reply, parse};
use crate::config::{ClaudeCommand, ClaudeHandler, ClaudeHooks};
use crate::hooks::SCRUBBED_VARIABLES;
use crate::hooks::runner::record as record_execution;
use crate::hooks::steps::{StepDirs, dir_name};
use crate::journal::{ClaudeHook, HookStatus};
use crate::process::{OutputPolicy, ProcessError, ProcessOptions, ProcessOutcome, run_process};
use crate::run::RunPaths;

/// One hook's run: its answer (or why there is none) and its journal event.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// The answer; `Err` is a non-blocking error, worded for the journal.
    pub reply: Result<Reply, String>,
    /// The CLAUDE_HOOK event that records it.
    pub record: ClaudeHook,
    /// Its stdout, as the log may show it.
    pub stdout: String,
}

/// Runs the Claude Code hooks of one run, numbering their records.
#[derive(Debug)]
pub struct ClaudeRunner {
    hooks: ClaudeHooks,
    steps: StepDirs,
    session: Session,
    workspace: String,
    env: Vec<(String, String)>,
    output: OutputPolicy,
}

impl ClaudeRunner {
    /// The runner of the run at `paths` for an agent at `agent_home`, with the run's output
    /// policy (limit and redactor).
    #[must_use]
    pub fn new(
        hooks: ClaudeHooks,
        paths: &RunPaths,
        agent_home: &Path,
        output: OutputPolicy,
    ) -> Self {
        // Hooks run in the workspace and receive these paths: absolute, so that they mean
        // the same to the hook as to the engine.
        let absolute = |path: &Path| {
            std::path::absolute(path)
                .unwrap_or_else(|_| path.into())
                .display()
                .to_string()
        };
        let workspace = absolute(paths.workspace());
        let agent_home = absolute(agent_home);
        let run_id = paths.run_id().as_str().to_owned();
        let env = vec![
            ("CLAUDE_PROJECT_DIR".to_owned(), workspace.clone()),
            ("CLAUDE_PLUGIN_ROOT".to_owned(), agent_home.clone()),
            ("DELTA_PROJECT_DIR".to_owned(), workspace.clone()),
            ("DELTA_AGENT_HOME".to_owned(), agent_home),
            ("DELTA_CWD".to_owned(), workspace.clone()),
            ("DELTA_RUN_ID".to_owned(), run_id.clone()),
        ];
        Self {
            steps: StepDirs::new(
                std::path::absolute(paths.claude_hooks_dir())
                    .unwrap_or_else(|_| paths.claude_hooks_dir()),
            ),
            session: Session {
                session_id: run_id,
                transcript_path: absolute(&paths.journal()),
                cwd: workspace.clone(),
                permission_mode: "default",
            },
            hooks,
            workspace,
            env,
            output,
        }
    }

    /// Tells hooks whether someone can be asked (`permission_mode` `default`), or nobody
    /// can (`dontAsk`: `--no-ask-human`).
    pub fn set_askable(&mut self, askable: bool) {
        self.session.permission_mode = if askable { "default" } else { "dontAsk" };
    }

    /// Whether any hook is configured for `event` (whatever its matcher).
    #[must_use]
    pub fn fires(&self, event: crate::config::ClaudeEvent) -> bool {
        self.hooks.iter().any(|handler| handler.event == event)
    }

    /// The handlers a firing of `input` runs, in order.
    #[must_use]
    pub fn handlers(&self, input: &ClaudeInput) -> Vec<ClaudeHandler> {
        self.hooks
            .matching(input.event(), input.matched())
            .into_iter()
            .cloned()
            .collect()
    }

    /// Runs `handler` for `input`; `tool_input` replaces the call's input (a PreToolUse
    /// chain's input so far). When `cancel` completes first (the run is being stopped),
    /// the hook's process group is killed and its answer is lost.
    pub async fn fire(
        &mut self,
        handler: &ClaudeHandler,
        input: &ClaudeInput,
        tool_input: Option<&Map<String, Value>>,
        cancel: impl Future,
    ) -> Firing {
        let event = input.event();
        let (step, dir) = self.steps.allocate(event.as_str());
        let mut record = ClaudeHook {
            event: event.as_str().to_owned(),
            command: handler.command.display(),
            source: Some(handler.source.as_str().to_owned()),
            matcher: handler.matcher_text.clone(),
            status: HookStatus::Failed,
            exit_code: None,
            ended: "not started".to_owned(),
            decision: None,
            reason: None,
            duration_ms: 0,
            tool_use_id: input.tool().map(|tool| tool.tool_use_id.clone()),
            updated_input: None,
            system_message: None,
            error: None,
            io_path_ref: format!("io/claude_hooks/{}/", dir_name(step, event.as_str())),
        };
        let failed = |mut record: ClaudeHook, error: String| {
            record.error = Some(error.clone());
            Firing {
                reply: Err(error),
                record,
                stdout: String::new(),
            }
        };
        let dir = match dir {
            Ok(dir) => dir,
            Err(error) => return failed(record, format!("could not prepare its record: {error}")),
        };
        let mut stdin = input.stdin(&self.session, tool_input).to_string();
        stdin.push('\n');
        let redactor = &self.output.redactor;
        if let Err(error) = redactor.write_masked(&dir.join("input.json"), stdin.as_bytes()) {
            return failed(record, format!("could not prepare its record: {error}"));
        }
        let options = ProcessOptions {
            cwd: self.workspace.clone().into(),
            env: self.env(handler, input),
            timeout: handler.timeout,
            output: self
                .output
                .with_files(dir.join("stdout.log"), dir.join("stderr.log")),
            record: None,
        };
        let argv = self.argv(&handler.command);
        let started = Instant::now();
        // Dropping the process future kills the hook's process group.
        let process = tokio::select! {
            process = run_process(&argv, Some(stdin.as_bytes()), &options) => Some(process),
            _ = cancel => None,
        };
        let elapsed = started.elapsed();
        match record_execution(&dir, &record.command, process.as_ref(), elapsed, redactor) {
            Ok((ended, duration_ms)) => {
                record.ended = ended;
                record.duration_ms = duration_ms;
            }
            Err(error) => {
                return failed(record, format!("could not record its execution: {error}"));
            }
        }
        let (reply, stdout) = self.answer(event, process, handler);
        record.exit_code = exit_code(&record.ended);
        match &reply {
            Ok(reply) => {
                record.status = HookStatus::Success;
                record.decision = reply.journaled_decision();
                record.reason = reply.journaled_reason().map(str::to_owned);
                record.updated_input.clone_from(&reply.updated_input);
                record.system_message.clone_from(&reply.system_message);
            }
            Err(error) => record.error = Some(error.clone()),
        }
        Firing {
            reply,
            record,
            stdout,
        }
    }

    /// The hook's answer from how its process ended, and its stdout.
    fn answer(
        &self,
        event: crate::config::ClaudeEvent,
        process: Option<Result<ProcessOutcome, ProcessError>>,
        handler: &ClaudeHandler,
    ) -> (Result<Reply, String>, String) {
        let outcome = match process {
            None => {
                return (
                    Err("was stopped because the run is being interrupted".to_owned()),
                    String::new(),
                );
            }
            Some(Err(ProcessError::NotStarted(error))) => {
                return (Err(format!("could not start: {error}")), String::new());
            }
            Some(Err(error @ ProcessError::Output(_))) => {
                return (Err(error.to_string()), String::new());
            }
            Some(Ok(outcome)) => outcome,
        };
        let stdout = String::from_utf8_lossy(&outcome.stdout.to_vec()).into_owned();
        let stderr = String::from_utf8_lossy(&outcome.stderr.to_vec()).into_owned();
        let reply = if outcome.output_limit_exceeded {
            Err(format!(
                "wrote more than {} bytes to stdout or stderr and was killed with its child \
                 processes",
                self.output.limit
            ))
        } else if outcome.timed_out {
            Err(format!(
                "timed out after {} and was killed with its child processes",
                seconds(handler.timeout)
            ))
        } else {
            match (outcome.exit_code, outcome.signal) {
                (Some(code), _) => parse(event, code, &stdout, &stderr),
                (None, signal) => Err(format!(
                    "was killed by signal {}",
                    signal.map_or_else(|| "?".to_owned(), |s| s.to_string())
                )),
            }
        };
        (reply, stdout)
    }

    /// The program and arguments: `sh -c LINE` (or bash), or the exec form with the
    /// directories Claude Code substitutes into it.
    fn argv(&self, command: &ClaudeCommand) -> Vec<String> {
        match command {
            ClaudeCommand::Shell { shell, line } => {
                vec![shell.clone(), "-c".to_owned(), line.clone()]
            }
            ClaudeCommand::Exec { program, args } => std::iter::once(program)
                .chain(args)
                .map(|word| self.substitute(word))
                .collect(),
        }
    }

    /// `${NAME}` of the variables set for hooks replaced by their values (the exec form has
    /// no shell to do it).
    fn substitute(&self, word: &str) -> String {
        self.env
            .iter()
            .fold(word.to_owned(), |word, (name, value)| {
                word.replace(&format!("${{{name}}}"), value)
            })
    }

    fn env(&self, handler: &ClaudeHandler, input: &ClaudeInput) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        env.push((
            "DELTA_HOOK_EVENT".to_owned(),
            input.event().as_str().to_owned(),
        ));
        if !handler.pass_api_key {
            env.extend(SCRUBBED_VARIABLES.map(|name| (name.to_owned(), String::new())));
        }
        env
    }
}

/// The exit code in `exit_code.txt`'s words, when the command exited.
fn exit_code(ended: &str) -> Option<i32> {
    ended.parse().ok()
}

/// A timeout as configured: `60 s`, `0.5 s`.
fn seconds(duration: std::time::Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}
