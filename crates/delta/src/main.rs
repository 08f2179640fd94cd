//! The `delta` command line: parse the arguments, run the command, exit with its code.
//!
//! Everything else lives in `delta_cli::cli`; this file is the one place where an error is printed
//! and turned into the process's exit code.

// The command line renders; printing is denied everywhere else in the workspace.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::ExitCode;

use delta_cli::cli;

fn main() -> ExitCode {
    match cli::run() {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(error) => {
            cli::report(&error);
            ExitCode::from(error.exit().code())
        }
    }
}
