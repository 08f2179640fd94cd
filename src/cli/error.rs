//! Every way a `delta` command can fail, the exit code each maps to, and how it is shown.

use std::io;

use super::exit::Exit;
use super::init::InitError;
use super::render;

/// A failed command. Rendered once, on stderr, by [`report`].
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line did not parse; clap's message already says what and how to fix it.
    #[error(transparent)]
    Usage(#[from] clap::Error),
    /// `delta init` could not create the agent.
    #[error(transparent)]
    Init(#[from] InitError),
    /// Standard output went away or failed (not a closed pipe, which ends output quietly).
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] io::Error),
}

impl CliError {
    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Usage(error) => {
                if error.use_stderr() {
                    Exit::Usage
                } else {
                    Exit::Success
                }
            }
            CliError::Init(error) => error.exit(),
            CliError::Stdout(_) => Exit::Failure,
        }
    }

    /// How to fix it, when there is something to say beyond the message.
    fn help(&self) -> Option<String> {
        match self {
            CliError::Usage(_) | CliError::Stdout(_) => None,
            CliError::Init(error) => error.help(),
        }
    }
}

/// Print `error` on stderr in the project's error format:
///
/// ```text
/// error: <what is wrong>
///   = help: <how to fix>
/// ```
pub fn report(error: &CliError) {
    if let CliError::Usage(error) = error {
        // clap renders usage errors itself (with the usage line and a hint), in colour
        // only when stderr is a terminal and NO_COLOR is unset.
        let _ = error.print();
        return;
    }
    let mut text = format!("{}: {error}\n", render::styled("error", render::ERROR));
    if let Some(help) = error.help() {
        text.push_str(&format!(
            "  = {}: {help}\n",
            render::styled("help", render::HELP)
        ));
    }
    render::stderr(&text);
}
