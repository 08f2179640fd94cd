//! Argument vocabulary several commands share: run ids, and the `--run-id`/`-w` pair of
//! the commands that take an existing run (`continue`, `fork`, `replay`).

use std::path::{Path, PathBuf};

use super::error::CliError;
use delta_engine::quote::quote_path;
use delta_engine::run::RunId;

/// `--run-id`'s parser.
pub(super) fn parse_run_id(text: &str) -> Result<RunId, String> {
    RunId::parse(text).map_err(|error| error.to_string())
}

/// The run `--run-id` names in the workspace `-w` names (made absolute). v1.10 never
/// guesses which run is meant (seed 002 §6.1): without `--run-id` the error says how to
/// list the candidates.
pub(super) fn existing_run(
    run_id: Option<RunId>,
    work_dir: &Path,
) -> Result<(RunId, PathBuf), CliError> {
    let Some(run_id) = run_id else {
        return Err(CliError::RunIdRequired {
            workspace: quote_path(work_dir),
        });
    };
    let workspace = std::path::absolute(work_dir).map_err(CliError::CurrentDir)?;
    Ok((run_id, workspace))
}
