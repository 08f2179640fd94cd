//! The `delta-sessions` command: persistent shell and Python sessions for agents.

// The command line renders; printing is denied everywhere else in the workspace.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = cli::main(std::env::args_os(), &mut std::io::stdout());
    ExitCode::from(code)
}
