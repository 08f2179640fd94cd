//! The `delta-conformance` command line: `run`, `matrix`, `validate`, `list` and
//! `citations`, a module each with its arguments and its command. [`run`] parses and
//! dispatches; a command prints its report and returns its exit code (0 success, 1 failed
//! scenarios or violations), a [`Fatal`] is a usage or setup error (exit code 2) that the
//! binary prints once ([`report`]).

mod args;
mod citations;
mod list;
mod matrix;
mod output;
mod run;
mod setup;
mod validate;

use clap::{Parser, Subcommand};

pub use self::output::{EXIT_FAILED, EXIT_USAGE, Fatal, report};

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
    /// Write the table of what each check rests on (its seed section and the quoted
    /// sentence); with --seeds, check every quote against the seed texts.
    Citations(citations::CitationsArgs),
}

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
        Cmd::Citations(args) => citations::citations(&args),
    }
}
