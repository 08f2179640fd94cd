//! The exit codes of `delta`, one table for every command and every run end (DESIGN.md,
//! "Output"). A run's end implies its code (seed 002 §4.3), so the engine names it; which
//! code an error ends the process with is decided by the command line alone.

use crate::run::{ErrorInfo, ErrorType, Metadata, RunStatus};

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
    #[must_use]
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

    /// The exit code of a run in `status` with `error`:
    /// COMPLETED 0; FAILED 1 (126 when `error.type` is `ConfigError`); WAITING_FOR_INPUT
    /// 101; INTERRUPTED 1 when a budget was spent, the final answer was cut twice or a hook
    /// stopped the run (`error.type` `MaxIterationsReached`, `BudgetExceeded`,
    /// `OutputTruncated`, `HookStopped`), else 130
    /// (signal); RUNNING — never a final state — 1.
    #[must_use]
    pub fn for_run(status: RunStatus, error: Option<&ErrorInfo>) -> Self {
        let error_type = error.map(|e| &e.error_type);
        match status {
            RunStatus::Completed => Exit::Success,
            RunStatus::Failed if error_type == Some(&ErrorType::ConfigError) => Exit::Config,
            RunStatus::Failed | RunStatus::Running => Exit::Failure,
            RunStatus::WaitingForInput => Exit::WaitingForInput,
            RunStatus::Interrupted
                if matches!(
                    error_type,
                    Some(
                        ErrorType::MaxIterationsReached
                            | ErrorType::BudgetExceeded
                            | ErrorType::OutputTruncated
                            | ErrorType::HookStopped
                    )
                ) =>
            {
                Exit::Failure
            }
            RunStatus::Interrupted => Exit::Interrupted,
        }
    }
}

/// Scripts and tests compare exit codes as numbers.
impl PartialEq<i32> for Exit {
    fn eq(&self, other: &i32) -> bool {
        i32::from(self.code()) == *other
    }
}

/// The exit code for a run in the state `metadata` describes; see [`Exit::for_run`].
#[must_use]
pub fn exit_code_for(metadata: &Metadata) -> Exit {
    Exit::for_run(metadata.status, metadata.error.as_ref())
}
