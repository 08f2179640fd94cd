//! The agent directory copied beside the scenario (`agents/NAME/…`), in memory so that
//! the caller can redact it before writing, each file at most
//! [`MAX_AGENT_FILE_BYTES`].

use std::path::Path;

use super::workspace::walk;
use super::{MAX_AGENT_FILE_BYTES, OutputFile, ScenarioError};

/// The agent directory's files, as `target/…`: everything but credentials, run records,
/// the agent's numbered workspaces and the run's workspace.
pub(super) fn copy_agent(
    home: &Path,
    workspace: &Path,
    target: &Path,
    notes: &mut Vec<String>,
) -> Result<Vec<OutputFile>, ScenarioError> {
    if !home.is_dir() {
        return Err(ScenarioError::AgentMissing {
            path: home.to_path_buf(),
        });
    }
    let excluded = [
        home.join(crate::workspace::WORKSPACES_DIR),
        workspace.to_path_buf(),
    ];
    let mut files = Vec::new();
    for found in walk(home, &excluded, notes)? {
        if found.meta.len() > MAX_AGENT_FILE_BYTES {
            return Err(ScenarioError::AgentFileTooLarge {
                path: found.path,
                limit: MAX_AGENT_FILE_BYTES,
            });
        }
        files.push(OutputFile {
            path: target.join(&found.rel),
            bytes: fs_err::read(&found.path)?,
            executable: found.executable(),
        });
    }
    Ok(files)
}
