//! The exit codes of `delta`, decided once for every command (DESIGN.md, "Output").

use std::process::ExitCode;

/// How a `delta` process ends. Scripts branch on these numbers, so they never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what was asked; for a run, status `COMPLETED`.
    Success,
    /// 1: the command failed; for a run, status `FAILED` or its iteration budget spent.
    Failure,
    /// 2: the command line itself is wrong (unknown command, missing argument…).
    Usage,
    /// 101: a run stopped to wait for human input (`WAITING_FOR_INPUT`).
    WaitingForInput,
    /// 126: the agent's configuration is invalid, or a permission was denied.
    Config,
    /// 130: interrupted by a signal.
    Interrupted,
}

impl Exit {
    /// The number the process exits with.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::WaitingForInput => 101,
            Exit::Config => 126,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
