//! The `delta-conformance` command line: `run`, `matrix`, `validate` and `list`, a module
//! each with its arguments and its command. [`run`] parses and dispatches; a command
//! prints its report and returns its exit code (0 success, 1 failed scenarios or
//! violations), a [`Fatal`] is a usage or setup error (exit code 2) that the binary
//! prints once ([`report`]).

mod args;
mod list;
mod matrix;
mod run;
mod setup;
mod validate;

use std::io::Write as _;

use clap::{Parser, Subcommand};

/// Black-box conformance runner for Delta Engine implementations.
///
/// Runs the scenarios of fixtures/scenarios/ against any implementation's command line,
/// each in its own temporary directory with its own mock-llm, and checks exit codes,
/// output, journals, metadata (against schemas/), files and canaries.
#[derive(Debug, Parser)]
#[command(name = "delta-conformance", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run scenarios against an implementation.
    Run(run::RunArgs),
    /// Run the suite against several implementations and write the matrix (Markdown and
    /// JSON): scenario × implementation, with levels, seed references and failures.
    Matrix(matrix::MatrixArgs),
    /// Validate files (journals, metadata.json, RunResult JSON, agent.yaml …) against schemas/.
    Validate(validate::ValidateArgs),
    /// List the scenarios with their tags and seed references.
    List(list::ListArgs),
}

/// A failure already worded for the user: what went wrong and how to fix it.
#[derive(Debug)]
pub struct Fatal {
    message: String,
    help: String,
}

impl Fatal {
    fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            help: help.into(),
        }
    }
}

/// The exit code of a run with failed scenarios or files with violations.
pub const EXIT_FAILED: u8 = 1;
/// The exit code of a [`Fatal`] (and of clap's usage errors).
pub const EXIT_USAGE: u8 = 2;

/// Parses the command line and runs its command.
///
/// # Errors
/// A [`Fatal`] when the command cannot run: bad options, missing fixtures, schemas or
/// programs, files that cannot be written.
pub fn run() -> Result<u8, Fatal> {
    match Cli::parse().command {
        Cmd::Run(args) => run::run(args),
        Cmd::Matrix(args) => matrix::matrix(args),
        Cmd::Validate(args) => validate::validate_files(&args),
        Cmd::List(args) => list::list(&args),
    }
}

/// Prints `fatal` on stderr: the message, then how to fix it.
pub fn report(fatal: &Fatal) {
    err(&format!(
        "error: {}\n  = help: {}\n",
        fatal.message, fatal.help
    ));
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ignored = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes to stderr (progress, and the report beside a json or junit one on stdout).
fn err(text: &str) {
    let _ignored = std::io::stderr().write_all(text.as_bytes());
}
