//! The agent directory copied beside the scenario (`agents/NAME/…`), in memory so that
//! the caller can redact it before writing, each file at most
//! [`MAX_AGENT_FILE_BYTES`].

use std::path::Path;

use super::error::ScenarioError;
use super::output::OutputFile;
use super::workspace::walk;

/// The largest agent file copied: a scenario's agent is configuration and scripts, and
/// the copy is made in memory (the API key is redacted from it).
pub const MAX_AGENT_FILE_BYTES: u64 = 16 * 1024 * 1024;

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
        home.join(delta_engine::workspace::WORKSPACES_DIR),
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
