//! The persistent state of one run, `.delta/{run_id}/`: ids, directory layout, creation,
//! `metadata.json`, process identity and liveness, the run lock and the interaction files.
//!
//! The journal has its own module ([`crate::journal`]); this one owns everything around it.

mod creation;
mod file;
mod id;
mod interaction;
mod liveness;
mod lock;
mod metadata;
mod paths;
mod result;
mod time;
mod tree;

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::path_error::Denied;

pub use creation::{is_being_created, reclaim_abandoned};
pub use file::{
    MAX_JOURNAL_BYTES, MAX_METADATA_BYTES, Prefix, read_regular_file, read_regular_prefix,
};
pub use id::{InvalidRunId, MAX_RUN_ID_LEN, RunId};
pub use interaction::{
    InputType, InteractionRequest, clear_interaction, read_interaction_request,
    read_interaction_response, write_interaction_request,
};
pub use liveness::{Liveness, ProcessIdentity, process_alive};
pub use lock::{RunLock, is_locked_by_other};
pub use metadata::{
    ErrorInfo, ErrorType, FinalStatus, METADATA_SCHEMA_VERSION, Metadata, MetadataInit, ModelUsage,
    ParentRef, ReplayRef, RunStatus, UnknownStatus, Usage, new_trace_id, read_metadata,
    write_metadata,
};
pub use paths::{DELTA_DIR, RunPaths};
pub use result::result_value;
pub use time::Timestamp;
pub use tree::{CalledBy, ChildRef, Subtree};

/// What can go wrong with a run directory and its files. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum RunStateError {
    /// A file system operation failed; the message names it and the file.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The OS refused to create the workspace's `.delta/` or the run's directories.
    #[error(transparent)]
    Denied(#[from] Denied),
    /// A value could not be turned into JSON (not expected for our types).
    #[error("cannot serialize {}: {source}", path.display())]
    Serialize {
        /// The file being written.
        path: PathBuf,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
    /// `--run-id` names a run that already exists. The fix is the CLI's help line.
    #[error("run {run_id} already exists in {}", workspace.display())]
    RunExists {
        /// The id asked for.
        run_id: RunId,
        /// The workspace searched.
        workspace: PathBuf,
    },
    /// No run with this id exists in the workspace.
    #[error(
        "no run {run_id} in {}; list the runs there with `delta list-runs -w {}`",
        workspace.display(),
        workspace.display()
    )]
    RunNotFound {
        /// The id asked for.
        run_id: RunId,
        /// The workspace searched.
        workspace: PathBuf,
    },
    /// The run directory has no `metadata.json` (the creating process died at once, or
    /// the file was removed).
    #[error("{} does not exist; the run's metadata was never written or was removed", path.display())]
    MetadataMissing {
        /// The expected file.
        path: PathBuf,
    },
    /// `metadata.json` is not valid metadata.
    #[error(
        "{}:{line}:{column}: invalid run metadata: {message}; the file is written only by the \
         engine, restore it or remove the run directory",
        path.display()
    )]
    MetadataCorrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// `interaction/request.json` is not a valid request.
    #[error(
        "{}:{line}:{column}: invalid interaction request: {message}",
        path.display()
    )]
    InteractionCorrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Another process (or another open file in this one) holds the run's lock.
    #[error(
        "{} is locked: another delta process is working on this run right now",
        path.display()
    )]
    AlreadyLocked {
        /// The lock file.
        path: PathBuf,
    },
}

/// Creates the directory of a new run `run_id` in `workspace` and returns its paths.
///
/// The single `mkdir(2)` of `.delta/{run_id}` is the uniqueness check (seed 002 §7.2):
/// of any number of processes racing for one id exactly one succeeds, and the others get
/// [`RunStateError::RunExists`] before they have changed anything. `.delta/` itself is
/// created when missing; `workspace` must exist.
///
/// The caller should then take [`RunLock::try_acquire`] on [`RunPaths::lock`] and write the
/// initial RUNNING [`Metadata`] before any other side effect.
///
/// # Errors
/// [`RunStateError::RunExists`], or [`RunStateError::Denied`] / [`RunStateError::Io`]
/// naming the directory.
pub fn create_run(workspace: &Path, run_id: &RunId) -> Result<RunPaths, RunStateError> {
    let paths = RunPaths::new(workspace, run_id);
    let delta = workspace.join(DELTA_DIR);
    match fs_err::create_dir(&delta) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(Denied::sort(&delta, e)),
    }
    match fs_err::create_dir(paths.dir()) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            return Err(RunStateError::RunExists {
                run_id: run_id.clone(),
                workspace: workspace.to_path_buf(),
            });
        }
        Err(e) => return Err(Denied::sort(paths.dir(), e)),
    }
    create_record_dirs(&paths)?;
    Ok(paths)
}

/// The `io/` directories of a run, created when missing.
///
/// # Errors
/// [`RunStateError::Denied`] or [`RunStateError::Io`] naming the directory.
pub(crate) fn create_record_dirs(paths: &RunPaths) -> Result<(), RunStateError> {
    for dir in [
        paths.invocations_dir(),
        paths.tool_executions_dir(),
        paths.hooks_dir(),
    ] {
        if let Err(e) = fs_err::create_dir_all(&dir) {
            return Err(Denied::sort(&dir, e));
        }
    }
    Ok(())
}

/// The paths of the existing run `run_id` in `workspace`.
///
/// # Errors
/// [`RunStateError::RunNotFound`] when `.delta/{run_id}/` is not a directory.
pub fn open_run(workspace: &Path, run_id: &RunId) -> Result<RunPaths, RunStateError> {
    let paths = RunPaths::new(workspace, run_id);
    if paths.dir().is_dir() {
        Ok(paths)
    } else {
        Err(RunStateError::RunNotFound {
            run_id: run_id.clone(),
            workspace: workspace.to_path_buf(),
        })
    }
}

/// Replaces `path` with `bytes` atomically: write a temporary file in the same directory,
/// fsync it, rename it over `path`.
///
/// rename(2) within one file system is atomic, so readers see the old or the new contents,
/// never a prefix. The fsync before the rename orders the data before the name change, so
/// a power loss cannot leave an empty file under the final name; the directory is not
/// fsynced (losing the last rename on power loss leaves the previous, consistent file).
///
/// `bytes` are written as given: the writers of a run's files mask its secrets first.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        Some(_) | None => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    // std::fs, not fs_err: the temporary file's name would only confuse the message,
    // which names the file being replaced.
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|error| {
        // Best effort: the original error is what the caller needs to see.
        let _ = std::fs::remove_file(&tmp);
        crate::path_error::failed("write", path, error)
    })
}

/// Replaces `path` atomically ([`write_atomic`]) with `value` as pretty JSON and a final
/// newline, the secrets of `redactor` (the run's) masked.
fn write_json(
    path: &Path,
    value: &impl serde::Serialize,
    redactor: &crate::secrets::Redactor,
) -> Result<(), RunStateError> {
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|source| RunStateError::Serialize {
            path: path.to_path_buf(),
            source,
        })?;
    bytes.push(b'\n');
    Ok(write_atomic(path, &redactor.redact_bytes(&bytes))?)
}

/// A serde_json error's message without its " at line L column C" suffix, for errors that
/// report the position separately.
pub(crate) fn serde_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_owned()
}
