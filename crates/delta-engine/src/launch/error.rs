//! Why a run could not be started, continued or recorded, how to fix it, and which path
//! the OS refused: the CLI turns these into messages and exit codes.

use std::path::Path;

use crate::answer::SchemaFileError;
use crate::budget::Exceeded;
use crate::config::ConfigError;
use crate::engine;
use crate::output::OutputError;
use crate::resume::ResumeError;
use crate::run::RunStateError;
use crate::workspace::{MAX_QUESTIONS, WorkspaceError};

/// Why a run could not be started, continued or recorded (the loop's own outcomes are
/// run statuses, not errors).
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The agent's configuration is unusable; its `Display` is the complete diagnostic.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No usable API key or base URL.
    #[error("{0}")]
    Credentials(#[from] crate::llm::CredentialsError),
    /// A `DELTA_LLM_*` variable has a value out of its range.
    #[error("{variable}={value:?} is not {expected}")]
    Setting {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// `DELTA_FSYNC` has an unknown value.
    #[error(transparent)]
    Fsync(crate::journal::JournalError),
    /// The LLM client cannot be set up.
    #[error(transparent)]
    Client(#[from] crate::llm::LlmError),
    /// The workspace cannot be chosen or created.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// Reading the answer to the workspace question failed.
    #[error("cannot read the answer from standard input: {0}")]
    Prompt(#[source] std::io::Error),
    /// The workspace question got no answer it understood, [`MAX_QUESTIONS`] times.
    #[error(
        "no clear answer to \"Reuse workspace {previous}?\" after {MAX_QUESTIONS} tries; \
         nothing was created"
    )]
    NoAnswer {
        /// The workspace offered.
        previous: String,
    },
    /// The run cannot be taken over (unknown, still active, other host, needs `-m`…).
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// The run cannot be created or recorded (the id is taken, the disk refuses).
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    /// The async runtime or the signal handlers cannot be set up.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The finished run's metadata cannot be read back.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// `--output-schema` names no usable schema.
    #[error(transparent)]
    OutputSchema(#[from] SchemaFileError),
    /// A cost budget for a model whose price is unknown cannot be kept.
    #[error("a cost budget needs the price of {model}, which is not known")]
    UnknownPrice {
        /// The model.
        model: String,
    },
    /// The environment the run asked for cannot be established; nothing ran.
    #[error(transparent)]
    Environment(#[from] crate::environment::EnvironmentError),
    /// The run to continue stopped on a budget that is still spent.
    #[error("{}; the run cannot go on within it", exceeded.message())]
    BudgetSpent {
        /// The budget, its limit and use.
        exceeded: Exceeded,
    },
}

impl LaunchError {
    /// How to fix it, when the message does not already say.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        if let Some(path) = self.denied_path() {
            return Some(format!(
                "check the permissions of {} (the workspace's .delta/ must be writable), or \
                 pass a workspace you can write to with -w",
                path.display()
            ));
        }
        match self {
            LaunchError::Setting { variable, .. } => {
                Some(format!("fix {variable}, or unset it for the default"))
            }
            LaunchError::Engine(engine::EngineError::RunState(RunStateError::RunExists {
                run_id,
                workspace,
            })) => Some(format!(
                "choose another --run-id, or resume that run with `delta continue --run-id \
                 {run_id} -w {}`",
                workspace.display()
            )),
            LaunchError::Workspace(error) => error.help(),
            LaunchError::OutputSchema(_) => {
                Some("pass a JSON Schema file (draft 2020-12) to --output-schema".to_owned())
            }
            LaunchError::UnknownPrice { .. } => Some(
                "give the model's prices under llm.pricing in agent.yaml (input_per_million, \
                 output_per_million), or drop the cost budget"
                    .to_owned(),
            ),
            LaunchError::BudgetSpent { exceeded } => Some(format!(
                "give a larger budget: {} with more than {}",
                exceeded.budget.flag(),
                exceeded.budget.show(exceeded.used)
            )),
            LaunchError::NoAnswer { previous } => Some(format!(
                "answer y (reuse {previous}) or n (a new workspace); -y always creates a new \
                 one and -w PATH names the workspace, both without asking"
            )),
            LaunchError::Environment(error) => error.help(),
            LaunchError::Config(_)
            | LaunchError::Credentials(_)
            | LaunchError::Fsync(_)
            | LaunchError::Client(_)
            | LaunchError::Prompt(_)
            | LaunchError::Resume(_)
            | LaunchError::Engine(_)
            | LaunchError::Runtime(_)
            | LaunchError::Output(_) => None,
        }
    }
}

impl LaunchError {
    /// The workspace's `.delta/` or the run directory the OS refused to create (no
    /// permission, a read-only file system): something the user must grant or choose
    /// differently, unlike a full disk.
    #[must_use]
    pub fn denied_path(&self) -> Option<&Path> {
        if let LaunchError::Engine(engine::EngineError::RunState(RunStateError::Denied(denied))) =
            self
        {
            return Some(&denied.path);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path_error::Denied;

    #[test]
    fn the_os_refusing_the_run_directory_is_a_permission_error() {
        let run_dir = |kind| {
            let refused = std::io::Error::from(kind);
            LaunchError::Engine(engine::EngineError::RunState(Denied::sort(
                Path::new("/w/.delta/r1"),
                refused,
            )))
        };
        for kind in [
            std::io::ErrorKind::PermissionDenied,
            std::io::ErrorKind::ReadOnlyFilesystem,
        ] {
            let error = run_dir(kind);
            assert_eq!(error.denied_path(), Some(Path::new("/w/.delta/r1")));
            assert!(
                error
                    .help()
                    .unwrap()
                    .starts_with("check the permissions of /w/.delta/r1 "),
                "{error:?}"
            );
        }
        let full = run_dir(std::io::ErrorKind::StorageFull);
        assert_eq!(full.denied_path(), None);
        assert_eq!(full.help(), None);
    }
}
