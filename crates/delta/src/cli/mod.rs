//! The `delta` command line: argument definitions, dispatch to one module per command, and
//! the rendering of errors.
//!
//! Adding a command takes one file here (its `Args` struct with `run`) and one variant of
//! `Command`. Commands return an [`Exit`] or an error that becomes a [`CliError`]
//! (`exit` decides the code of each engine error); only `main` turns either into the
//! process's exit code, after [`report`] has printed the error once. The modules form no
//! import cycle: the commands sit on what they share (`args`, `drive`, `error`, `render`,
//! `stream`, `jsonl`, `human`), and `error` imports no command but `init`, whose error it
//! wraps.

// The command line renders; printing is denied everywhere else in the workspace.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod batch;
mod completions;
mod continue_;
mod drive;
mod env;
mod error;
mod eval;
mod exit;
mod export;
mod fork;
mod human;
pub mod init;
mod jsonl;
mod list_runs;
mod render;
mod replay;
mod result;
mod run;
mod stream;
mod tool;
mod view;

use clap::{Parser, Subcommand};

pub use delta_engine::output::Exit;
pub use error::{CliError, report};
use result::ResultSink;

/// `delta`: run AI agents the Unix way.
#[derive(Debug, Parser)]
#[command(
    name = "delta",
    version,
    about = "Run AI agents the Unix way: every tool is a command, every step a journal line.",
    long_about = "Run AI agents the Unix way.\n\n\
        An agent is a directory: agent.yaml (model and tools), system_prompt.md and \
        context.yaml (what the model sees). Every tool is an external command; every \
        step of a run is appended to .delta/{run_id}/journal.jsonl in the workspace.",
    after_help = render::examples(&[
        ("Create an agent", "delta init my-agent -t hello-world -y"),
        ("See exactly how its tools will be executed", "delta tool expand my-agent"),
        ("Look at a run in the browser", "delta view --run-id ID -w ./work --open"),
        ("Export a run as an ATIF trajectory", "delta export --run-id ID -w ./work --format atif"),
        ("Enable completions (bash)", "source <(delta completions bash)"),
    ]),
    arg_required_else_help = true,
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a new agent directory from a template.
    Init(init::InitArgs),
    /// Continue an existing run: resume, answer its question, extend or retry it.
    #[command(long_about = continue_::LONG_ABOUT)]
    Continue(continue_::ContinueArgs),
    /// Fork a run at a step into a new run and continue it.
    #[command(long_about = fork::LONG_ABOUT)]
    Fork(fork::ForkArgs),
    /// Replay a recorded run with its LLM answers and report the first divergence.
    #[command(long_about = replay::LONG_ABOUT)]
    Replay(replay::ReplayArgs),
    /// List the runs of a workspace, most recently updated first.
    #[command(long_about = list_runs::LONG_ABOUT)]
    ListRuns(list_runs::ListRunsArgs),
    /// Start a new run of an agent: the Think-Act-Observe loop, journaled in the workspace.
    #[command(long_about = run::LONG_ABOUT)]
    Run(run::RunArgs),
    /// Export a run as an ATIF trajectory or an OpenTelemetry (OTLP/JSON) trace.
    #[command(long_about = export::LONG_ABOUT)]
    Export(export::ExportArgs),
    /// Write an HTML page of a run, or a table of a workspace's or a batch's runs.
    #[command(long_about = view::LONG_ABOUT)]
    View(view::ViewArgs),
    /// Inspect tool definitions: `delta tool expand` shows what each tool really runs.
    Tool(tool::ToolArgs),
    /// Run a task set as many runs, locally or as a Slurm array job; see its state.
    Batch(batch::BatchArgs),
    /// Run a benchmark in Harbor's task format: verified trials, scores with honest statistics.
    Eval(eval::EvalArgs),
    /// Where tools run: `delta env probe` shows what this machine can enforce.
    Env(env::EnvArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
}

/// Parse the process's arguments and run the command they name.
///
/// `--help` and `--version` print and succeed; any other parse failure is returned as a
/// [`CliError::Usage`] (exit 2) so that it is reported like every other error.
pub fn run() -> Result<Exit, CliError> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => {
            render::stdout_result(error.print())?;
            return Ok(Exit::Success);
        }
        Err(error) => {
            // A program asked for a result on stdout; it gets one even for a command line
            // that does not parse.
            let error = CliError::from(error);
            let (promise, run_id) = result::promised_by(&args);
            ResultSink::new(promise, run_id).refuse(&error);
            return Err(error);
        }
    };
    match cli.command {
        Command::Init(args) => Ok(args.run()?),
        Command::Continue(args) => {
            let (promise, run_id) = args.promise();
            with_result(ResultSink::new(promise, run_id), |sink| args.run(sink))
        }
        Command::Fork(args) => {
            with_result(ResultSink::new(args.promise(), None), |sink| args.run(sink))
        }
        Command::Replay(args) => {
            with_result(ResultSink::new(args.promise(), None), |sink| args.run(sink))
        }
        Command::ListRuns(args) => args.run(),
        Command::Run(args) => {
            with_result(ResultSink::new(args.promise(), None), |sink| args.run(sink))
        }
        Command::Export(args) => args.run(),
        Command::View(args) => args.run(),
        Command::Tool(args) => args.run(),
        Command::Batch(args) => args.run(),
        Command::Eval(args) => args.run(),
        Command::Env(args) => args.run(),
        Command::Completions(args) => args.run(),
    }
}

/// Runs a command that drives a run, keeping its promise to stdout: when it fails
/// before printing its result, the refusal is printed instead.
fn with_result(
    mut sink: ResultSink,
    command: impl FnOnce(&mut ResultSink) -> Result<Exit, CliError>,
) -> Result<Exit, CliError> {
    let outcome = command(&mut sink);
    if let Err(error) = &outcome {
        sink.refuse(error);
    }
    outcome
}
