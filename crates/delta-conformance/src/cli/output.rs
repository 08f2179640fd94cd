//! What the command line writes: reports on stdout, progress and a [`Fatal`] error on
//! stderr, and the exit codes.

use std::io::Write as _;

/// A failure already worded for the user: what went wrong and how to fix it.
#[derive(Debug)]
pub struct Fatal {
    message: String,
    help: String,
}

impl Fatal {
    pub(super) fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
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

/// Prints `fatal` on stderr: the message, then how to fix it.
pub fn report(fatal: &Fatal) {
    err(&format!(
        "error: {}\n  = help: {}\n",
        fatal.message, fatal.help
    ));
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
pub(super) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ignored = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Writes to stderr (progress, and the report beside a json or junit one on stdout).
pub(super) fn err(text: &str) {
    let _ignored = std::io::stderr().write_all(text.as_bytes());
}
