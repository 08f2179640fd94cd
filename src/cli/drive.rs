//! What `delta run` and `delta continue` share once their arguments are parsed: the
//! terminal as the launch's [`Frontend`], the live stream on stderr, and the final output
//! on stdout, printed last from the metadata on disk.

use std::io::IsTerminal;
use std::sync::Arc;

use clap::ValueEnum;

use super::error::CliError;
use super::human::{TerminalHuman, print_pause_guidance};
use super::render;
use super::stream::StreamRenderer;
use crate::engine::HumanInput;
use crate::launch::{Frontend, Launch, LaunchError, LaunchSpec, Reuse, ask_reuse};
use crate::output::{Exit, render_json, render_raw, render_text};
use crate::resume::ResumeReport;
use crate::run::RunId;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A human-readable summary.
    Text,
    /// RunResult v2.0 as JSON.
    Json,
    /// The result alone (nothing unless COMPLETED): for pipes.
    Raw,
}

/// `--run-id`'s parser.
pub(super) fn parse_run_id(text: &str) -> Result<RunId, String> {
    RunId::parse(text).map_err(|error| error.to_string())
}

/// How the terminal takes part in a run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Terminal {
    /// `-v`: engine detail on the live stream.
    pub verbose: bool,
    /// `-i`: `ask_human` is answered on the terminal.
    pub interactive: bool,
    /// `-y`: the workspace question is never asked.
    pub yes: bool,
    /// What stdout gets at the end.
    pub format: Format,
}

/// Prepares and drives the run of `spec`, then prints its result: the one path of every
/// command that runs an agent.
pub(super) fn launch(spec: LaunchSpec, terminal: Terminal) -> Result<Exit, CliError> {
    let mut frontend = TerminalFrontend { yes: terminal.yes };
    let launch = Launch::prepare(spec, &mut frontend)?;
    let human: Option<Arc<dyn HumanInput>> = if terminal.interactive {
        Some(Arc::new(TerminalHuman))
    } else {
        None
    };
    let mut renderer = StreamRenderer::stderr(terminal.verbose);
    let finished = launch.drive(&mut renderer, human, &mut frontend)?;
    let text = match terminal.format {
        Format::Text => render_text(&finished.result),
        Format::Json => render_json(&finished.result),
        Format::Raw => render_raw(&finished.result),
    };
    print_pause_guidance(&finished.result);
    render::stdout(&text)?;
    Ok(finished.exit())
}

/// The terminal as the launch's [`Frontend`]: warnings and reports on stderr, the workspace
/// question asked there.
struct TerminalFrontend {
    yes: bool,
}

impl Frontend for TerminalFrontend {
    fn warning(&mut self, message: &str) {
        render::warning(message);
    }

    fn reuse_workspace(&mut self, previous: &str) -> Result<Reuse, LaunchError> {
        // As `delta init`: a question needs someone to read it and someone to answer.
        if self.yes || !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return Ok(Reuse::New);
        }
        let mut stdin = std::io::stdin().lock();
        ask_reuse(previous, &mut stdin, &mut anstream::stderr())
    }

    fn took_over(&mut self, report: &ResumeReport) {
        if let Some(janitor) = &report.janitor {
            render::stderr(&format!("{janitor}\n"));
        }
        if report.run_start_restored {
            render::warning(
                "the journal was empty (the process died before writing it); the task was \
                 journaled again from metadata.json",
            );
        }
        if report.torn_tail.is_some() {
            render::warning(
                "the journal's last line was cut short by the crash and was removed (details \
                 in engine.log)",
            );
        }
        let interrupted = report.repairs.interrupted_actions.len();
        if interrupted > 0 {
            render::warning(&format!(
                "{interrupted} tool call(s) were in progress when the run stopped; they were \
                 answered with an error and not run again"
            ));
        }
        let not_run = report.repairs.not_run_calls.len();
        if not_run > 0 {
            render::warning(&format!(
                "{not_run} tool call(s) the model asked for never started; they were answered \
                 with an error"
            ));
        }
        if report.answer_as_user_message {
            render::warning(
                "the run had no pending question in its journal; the answer was given to the \
                 model as a user message",
            );
        }
    }
}
