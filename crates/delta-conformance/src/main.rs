//! The `delta-conformance` command line: parse the arguments, run the command, exit with
//! its code.
//!
//! Everything else lives in `delta_conformance::cli`; this file is where a fatal error is
//! printed and turned into the process's exit code.

use std::process::ExitCode;

use delta_conformance::cli;

fn main() -> ExitCode {
    match cli::run() {
        Ok(code) => ExitCode::from(code),
        Err(fatal) => {
            cli::report(&fatal);
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
