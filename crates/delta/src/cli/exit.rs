//! Which exit code each failure of the engine ends `delta` with: the engine's errors are
//! values, and only the command line decides what they mean to the shell (DESIGN.md,
//! "Output": 126 for what the user must configure or grant, 2 for what the command line
//! lacks, 1 for the rest).

use delta_engine::environment::EnvironmentError;
use delta_engine::launch::LaunchError;
use delta_engine::output::Exit;
use delta_engine::workspace::WorkspaceError;
use delta_experiment::batch::BatchError;
use delta_experiment::eval::EvalError;

/// A run that could not be started, continued or recorded.
pub(super) fn launch(error: &LaunchError) -> Exit {
    if error.denied_path().is_some() {
        return Exit::Config;
    }
    match error {
        LaunchError::Config(_)
        | LaunchError::Credentials(_)
        | LaunchError::Setting { .. }
        | LaunchError::Fsync(_)
        | LaunchError::OutputSchema(_)
        | LaunchError::UnknownPrice { .. } => Exit::Config,
        LaunchError::Environment(EnvironmentError::ImageWithoutContainer { .. }) => Exit::Usage,
        LaunchError::Environment(_) => Exit::Config,
        LaunchError::BudgetSpent { .. } => Exit::Usage,
        LaunchError::Workspace(error) => workspace(error),
        LaunchError::NoAnswer { .. } => Exit::Usage,
        LaunchError::Resume(error) if error.is_usage() => Exit::Usage,
        LaunchError::Resume(_)
        | LaunchError::Client(_)
        | LaunchError::Prompt(_)
        | LaunchError::Engine(_)
        | LaunchError::Runtime(_)
        | LaunchError::Output(_) => Exit::Failure,
    }
}

/// A workspace that could not be chosen or created: 126 when it is not usable as given,
/// 2 for a `--workspace-from` seed that is no directory.
pub(super) fn workspace(error: &WorkspaceError) -> Exit {
    match error {
        WorkspaceError::PermissionDenied { .. }
        | WorkspaceError::NotFound { .. }
        | WorkspaceError::NotADirectory { .. }
        | WorkspaceError::ParentNotADirectory { .. }
        | WorkspaceError::DeltaNotADirectory { .. } => Exit::Config,
        WorkspaceError::SeedNotADirectory { .. } => Exit::Usage,
        WorkspaceError::Io(_) | WorkspaceError::Exhausted { .. } => Exit::Failure,
    }
}

/// A batch that could not be prepared, run or read: 126 for what the user must fix in
/// the inputs, 1 otherwise.
pub(super) fn batch(error: &BatchError) -> Exit {
    match error {
        BatchError::Tasks(_) | BatchError::Config(_) | BatchError::Mismatch { .. } => Exit::Config,
        BatchError::Io { .. }
        | BatchError::NotABatch { .. }
        | BatchError::Corrupt { .. }
        | BatchError::Spawn { .. }
        | BatchError::NoRun { .. }
        | BatchError::Sbatch(_)
        | BatchError::Driven { .. }
        | BatchError::DrivenElsewhere { .. }
        | BatchError::NoSuchIndex { .. } => Exit::Failure,
    }
}

/// An eval that could not be prepared, run or read: 126 for what the user must fix in its
/// inputs, else as a batch's errors.
pub(super) fn eval(error: &EvalError) -> Exit {
    match error {
        EvalError::Problems { .. } => Exit::Config,
        EvalError::NotAnEval { .. } => Exit::Usage,
        EvalError::Driven { .. } | EvalError::DrivenElsewhere { .. } => Exit::Failure,
        EvalError::Batch(error) => batch(error),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use delta_engine::engine::EngineError;
    use delta_engine::path_error::Denied;

    use super::*;

    #[test]
    fn an_unclear_workspace_answer_is_a_usage_error() {
        let error = LaunchError::NoAnswer {
            previous: "W003".to_owned(),
        };
        assert_eq!(launch(&error), Exit::Usage);
    }

    #[test]
    fn a_bad_setting_is_a_configuration_error() {
        let error = LaunchError::Setting {
            variable: "DELTA_LLM_MAX_ATTEMPTS",
            value: "0".to_owned(),
            expected: "a whole number greater than 0",
        };
        assert_eq!(launch(&error), Exit::Config);
    }

    #[test]
    fn the_os_refusing_the_run_directory_is_a_permission_error() {
        let run_dir = |kind| {
            let refused = std::io::Error::from(kind);
            LaunchError::Engine(EngineError::RunState(Denied::sort(
                Path::new("/w/.delta/r1"),
                refused,
            )))
        };
        for kind in [
            std::io::ErrorKind::PermissionDenied,
            std::io::ErrorKind::ReadOnlyFilesystem,
        ] {
            assert_eq!(launch(&run_dir(kind)), Exit::Config);
        }
        assert_eq!(
            launch(&run_dir(std::io::ErrorKind::StorageFull)),
            Exit::Failure
        );
    }
}
