//! [`ScenarioError`]: why a run cannot become a scenario, or the scenario cannot be
//! written, with how to fix it.

use std::path::PathBuf;

/// Why a run cannot become a scenario, or the scenario cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The journal has no model answer to replay.
    #[error(
        "run {run_id} has no recorded LLM answer (no THOUGHT in its journal); a scenario replays the model's answers"
    )]
    NoAnswers {
        /// The run.
        run_id: String,
    },
    /// A THOUGHT's invocation record is missing or is not a chat completion.
    #[error("cannot read the answer of the THOUGHT at seq {seq}: {}: {why}", path.display())]
    Record {
        /// The THOUGHT's seq.
        seq: u64,
        /// `io/invocations/{id}/response.json`.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The run cannot be replayed from its answers alone.
    #[error("run {run_id} cannot be replayed as a scenario: {why}")]
    Unreplayable {
        /// The run.
        run_id: String,
        /// Why not.
        why: String,
    },
    /// The scenario name is not one the runner accepts.
    #[error(
        "invalid scenario name {name:?}: use lowercase letters, digits and '-', starting with a letter or digit"
    )]
    Name {
        /// The name given.
        name: String,
    },
    /// The scenario name is longer than a file name may be.
    #[error(
        "the scenario name has {chars} characters, more than the {limit} a scenario name may have (it names a file and a directory)"
    )]
    NameTooLong {
        /// Its length in characters.
        chars: usize,
        /// [`MAX_NAME_CHARS`](super::MAX_NAME_CHARS).
        limit: usize,
    },
    /// The agent directory the run used is gone.
    #[error("the run's agent directory {} does not exist any more", path.display())]
    AgentMissing {
        /// `agent_home` of metadata.json.
        path: PathBuf,
    },
    /// A file of the agent directory is too large to travel with a scenario.
    #[error("{} is larger than {limit} bytes, too large to copy into a scenario", path.display())]
    AgentFileTooLarge {
        /// The file.
        path: PathBuf,
        /// [`MAX_AGENT_FILE_BYTES`](super::agent_copy::MAX_AGENT_FILE_BYTES).
        limit: u64,
    },
    /// `-o` names a file or a directory that is not empty.
    #[error("{} exists and is not an empty directory", path.display())]
    OutputNotEmpty {
        /// The path given.
        path: PathBuf,
    },
    /// The agent directory or the workspace could not be read, or a file not written;
    /// the error (from `fs_err`) names the file and what was being done.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The scenario could not be serialized.
    #[error("cannot serialize the scenario: {0}")]
    Serialize(String),
}

impl ScenarioError {
    /// How to fix it.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        match self {
            ScenarioError::NoAnswers { .. } => Some(
                "export a run that got at least one answer from the model (`delta list-runs` shows the runs)"
                    .into(),
            ),
            ScenarioError::Record { .. } => Some(
                "the run's io/ records are incomplete; export a run whose io/invocations/ are intact"
                    .into(),
            ),
            ScenarioError::Unreplayable { .. } => Some(
                "a scenario replays commands that end on their own: export a run that is not \
                 RUNNING and was not stopped by a signal (continue it first, or fork it with \
                 `delta fork --at`)"
                    .into(),
            ),
            ScenarioError::Name { .. } | ScenarioError::NameTooLong { .. } => {
                Some("e.g. --name recorded-hello-world".into())
            }
            ScenarioError::AgentMissing { .. } => Some(
                "the scenario copies the agent; restore it at that path (agent_home in the \
                 run's metadata.json) and export again"
                    .into(),
            ),
            ScenarioError::AgentFileTooLarge { .. } => Some(
                "keep large data files out of the agent directory: its tools can read them \
                 from elsewhere"
                    .into(),
            ),
            ScenarioError::OutputNotEmpty { .. } => {
                Some("give -o a new or empty directory".into())
            }
            ScenarioError::Io(_) | ScenarioError::Serialize(_) => None,
        }
    }
}
