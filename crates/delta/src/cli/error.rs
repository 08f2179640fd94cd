//! Every way a `delta` command can fail, the exit code each maps to, and how it is shown.

use std::io;
use std::path::PathBuf;

use super::init::InitError;
use super::render::{self, StdoutError};
use delta_engine::config::ConfigError;
use delta_engine::launch::LaunchError;
use delta_engine::output::{Exit, OutputError};
use delta_engine::replay::ReplayError;
use delta_engine::trajectory::TrajectoryError;
use delta_engine::workspace::WorkspaceError;
use delta_experiment::batch::BatchError;
use delta_experiment::eval::EvalError;
use delta_experiment::export::otlp::PostError;
use delta_experiment::export::scenario;
use delta_experiment::fork::ForkError;
use delta_experiment::view::ViewError;

/// A failed command. Rendered once, on stderr, by [`report`].
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line did not parse; clap's message already says what and how to fix it.
    #[error(transparent)]
    Usage(#[from] clap::Error),
    /// The agent's configuration is unusable; its `Display` is the complete diagnostic.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `delta init` could not create the agent.
    #[error(transparent)]
    Init(#[from] InitError),
    /// No `--run-id` for `delta continue` (seed 002 §6.1): v1.10 never guesses which run
    /// is meant.
    #[error(
        "--run-id is required.\n\n\
         To resume a run, you must explicitly specify its ID:\n  \
         delta continue --run-id <run_id> -w {workspace}\n\n\
         To list resumable runs:\n  \
         delta list-runs -w {workspace} --resumable"
    )]
    RunIdRequired {
        /// The workspace given (or `.`), quoted for a shell.
        workspace: String,
    },
    /// A run could not be started, continued, recorded or read back (`delta run`,
    /// `delta continue`).
    #[error(transparent)]
    Launch(LaunchError),
    /// `delta fork` could not create the fork.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// `delta replay` could not read the recording or seed its workspace.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// `delta export` could not read, write or post the run.
    #[error(transparent)]
    Export(#[from] ExportError),
    /// `delta view` could not read a run or write a page.
    #[error(transparent)]
    View(#[from] ViewError),
    /// Runs could not be listed or a run's result could not be read back.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The working directory (the workspace, `${CWD}`) is gone or unreadable.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(#[source] io::Error),
    /// The async runtime cannot be set up.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] io::Error),
    /// Standard output went away or failed (not a closed pipe, which ends output quietly).
    #[error(transparent)]
    Stdout(#[from] StdoutError),
    /// A batch could not be prepared, run or read.
    #[error(transparent)]
    Batch(#[from] delta_experiment::batch::BatchError),
    /// An eval could not be prepared, run or read.
    #[error(transparent)]
    Eval(#[from] delta_experiment::eval::EvalError),
    /// A flag of an earlier version, accepted only to point at its replacement.
    #[error("{flag} is gone since {since}: use {instead}")]
    Retired {
        /// The old flag.
        flag: &'static str,
        /// The version that dropped it.
        since: &'static str,
        /// What to write instead.
        instead: &'static str,
    },
    /// The task of `delta run` (`-m`, `-m -`, `--message-file`) is empty or blank.
    #[error("the task from {from} is empty")]
    EmptyMessage {
        /// Where it came from.
        from: String,
    },
    /// The message could not be read from `--message-file` or from stdin (`-m -`).
    #[error("cannot read the message from {from}: {source}")]
    Message {
        /// The file, or `standard input`.
        from: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl From<LaunchError> for CliError {
    /// A configuration error is shown as every configuration error is, whichever command
    /// met it.
    fn from(error: LaunchError) -> Self {
        if let LaunchError::Config(error) = error {
            CliError::Config(error)
        } else {
            CliError::Launch(error)
        }
    }
}

impl CliError {
    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Usage(_)
            | CliError::RunIdRequired { .. }
            | CliError::Message { .. }
            | CliError::EmptyMessage { .. }
            | CliError::Retired { .. } => Exit::Usage,
            CliError::Config(_) => Exit::Config,
            CliError::Init(error) => error.exit(),
            CliError::Fork(ForkError::InvalidSeq { .. })
            | CliError::Fork(ForkError::Workspace(WorkspaceError::SeedNotADirectory { .. })) => {
                Exit::Usage
            }
            CliError::Fork(_) => Exit::Failure,
            CliError::Replay(ReplayError::Workspace(WorkspaceError::SeedNotADirectory {
                ..
            })) => Exit::Usage,
            CliError::Replay(_) => Exit::Failure,
            CliError::Launch(error) => super::exit::launch(error),
            CliError::Export(error) => error.exit(),
            CliError::Batch(error) => super::exit::batch(error),
            CliError::Eval(error) => super::exit::eval(error),
            CliError::View(_)
            | CliError::Output(_)
            | CliError::CurrentDir(_)
            | CliError::Runtime(_)
            | CliError::Stdout(_) => Exit::Failure,
        }
    }

    /// How to fix it, when there is something to say beyond the message.
    pub(super) fn help(&self) -> Option<String> {
        match self {
            CliError::Init(error) => error.help(),
            CliError::Launch(error) => error.help(),
            CliError::Fork(error) => error.help(),
            CliError::Replay(error) => error.help(),
            CliError::Batch(error) => error.help(),
            CliError::Eval(error) => error.help(),
            CliError::Export(error) => error.help(),
            CliError::CurrentDir(_) => {
                Some("cd into an existing directory and run the command again".into())
            }
            CliError::Message { .. } => Some(
                "give the message with -m TEXT, -m - (read from stdin) or --message-file FILE \
                 (a readable UTF-8 text file)"
                    .into(),
            ),
            CliError::EmptyMessage { .. } => Some(
                "say what the run should do: -m TEXT, or pipe the text into -m -, or \
                 --message-file FILE with the task in it"
                    .into(),
            ),
            CliError::Usage(_)
            | CliError::Config(_)
            | CliError::Retired { .. }
            | CliError::RunIdRequired { .. }
            | CliError::Output(_)
            | CliError::Runtime(_)
            | CliError::View(_)
            | CliError::Stdout(_) => None,
        }
    }
}

/// Print `error` once on stderr, in the project's diagnostic format:
///
/// ```text
/// error: <what is wrong>
///   --> <file>:<line>:<column>
///   = help: <how to fix>
/// ```
pub fn report(error: &CliError) {
    let text = match error {
        CliError::Usage(error) => {
            // clap renders usage errors itself (with the usage line and a hint), in colour
            // only when stderr is a terminal and NO_COLOR is unset.
            let _ = error.print();
            return;
        }
        // A configuration error renders itself whole (`error:`, location, help); wrapped in
        // a batch's error it printed `error: error:` (issue 30 item 10).
        CliError::Config(error)
        | CliError::Batch(BatchError::Config(error))
        | CliError::Eval(EvalError::Batch(BatchError::Config(error))) => error.to_string(),
        CliError::Init(_)
        | CliError::Fork(_)
        | CliError::Replay(_)
        | CliError::RunIdRequired { .. }
        | CliError::Launch(_)
        | CliError::Batch(_)
        | CliError::Eval(_)
        | CliError::Output(_)
        | CliError::Export(_)
        | CliError::View(_)
        | CliError::CurrentDir(_)
        | CliError::Runtime(_)
        | CliError::Stdout(_)
        | CliError::Message { .. }
        | CliError::EmptyMessage { .. }
        | CliError::Retired { .. } => match error.help() {
            Some(help) => format!("error: {error}\n  = help: {help}"),
            None => format!("error: {error}"),
        },
    };
    render::stderr(&render::diagnostic(&text));
}

/// Why `delta export` failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The run could not be read.
    #[error(transparent)]
    Trajectory(#[from] TrajectoryError),
    /// The trace could not be posted.
    #[error(transparent)]
    Post(#[from] PostError),
    /// `--otlp-endpoint` with `--format atif`.
    #[error("--otlp-endpoint posts a trace; use it with --format otlp")]
    EndpointNeedsOtlp,
    /// An option of one format given with another.
    #[error("{option} {what}")]
    Misused {
        /// The option.
        option: &'static str,
        /// What it needs.
        what: &'static str,
    },
    /// The run could not become a scenario.
    #[error(transparent)]
    Scenario(#[from] scenario::ScenarioError),
    /// The output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl ExportError {
    /// The exit code.
    pub(super) fn exit(&self) -> Exit {
        match self {
            ExportError::EndpointNeedsOtlp | ExportError::Misused { .. } => Exit::Usage,
            ExportError::Scenario(
                scenario::ScenarioError::Name { .. } | scenario::ScenarioError::NameTooLong { .. },
            ) => Exit::Usage,
            ExportError::Scenario(_)
            | ExportError::Trajectory(_)
            | ExportError::Post(_)
            | ExportError::Write { .. } => Exit::Failure,
        }
    }

    /// How to fix it.
    pub(super) fn help(&self) -> Option<String> {
        match self {
            ExportError::Scenario(error) => error.help(),
            ExportError::Misused { .. } => Some(
                "--format scenario writes a directory (-o DIR, --name, --mock-profile); atif and \
                 otlp write a document (--redact-content, --otlp-endpoint with otlp)"
                    .into(),
            ),
            ExportError::Trajectory(_)
            | ExportError::Post(_)
            | ExportError::EndpointNeedsOtlp
            | ExportError::Write { .. } => None,
        }
    }
}
