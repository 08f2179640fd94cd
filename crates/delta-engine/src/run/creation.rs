//! Runs whose creation was interrupted: a process killed after `mkdir .delta/{run_id}` and
//! its lock, before `metadata.json`, leaves a directory with no metadata and no journal
//! (metadata is written first). Nothing of the run exists but its id, so the id may be
//! started again: [`reclaim_abandoned`] takes such a directory over.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{RunId, RunLock, RunPaths, RunStateError};

/// How old a run directory without a lock file must be before it counts as abandoned: its
/// creator may be between its `mkdir` and taking the lock.
const LOCK_FILE_GRACE: Duration = Duration::from_secs(2);

/// Whether the run directory `paths` is being created by another process right now: no
/// metadata yet, and its lock held (or not yet taken, within a short grace).
#[must_use]
pub fn is_being_created(paths: &RunPaths) -> bool {
    if paths.metadata().exists() {
        return false;
    }
    match super::is_locked_by_other(&paths.lock()) {
        Ok(true) => true,
        Ok(false) => !paths.lock().exists() && is_young(paths.dir()),
        Err(_) => false,
    }
}

/// Takes over run `run_id` of `workspace` when its creation was abandoned (no metadata,
/// nothing journaled, its lock free): the lock is taken, the creator's temporary files
/// are removed and the directory layout completed, so the caller can create the run in
/// it. `None` when the directory is anything else (a real run, or one being created).
///
/// # Errors
/// When the directory cannot be cleaned up.
pub fn reclaim_abandoned(
    workspace: &Path,
    run_id: &RunId,
) -> Result<Option<(RunPaths, RunLock)>, RunStateError> {
    let paths = RunPaths::new(workspace, run_id);
    if paths.metadata().exists() || (!paths.lock().exists() && is_young(paths.dir())) {
        return Ok(None);
    }
    let Ok(lock) = RunLock::try_acquire(&paths.lock()) else {
        return Ok(None);
    };
    // Under the lock: nobody else can be creating or continuing the run now.
    let journaled = std::fs::metadata(paths.journal()).is_ok_and(|meta| meta.len() > 0);
    if paths.metadata().exists() || journaled {
        return Ok(None);
    }
    for entry in fs_err::read_dir(paths.dir())? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with(".metadata.json.tmp.") || name == "journal.jsonl" {
            fs_err::remove_file(&path)?;
        }
    }
    super::create_record_dirs(&paths)?;
    Ok(Some((paths, lock)))
}

fn is_young(dir: &Path) -> bool {
    std::fs::metadata(dir)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|time| SystemTime::now().duration_since(time).ok())
        .is_some_and(|age| age < LOCK_FILE_GRACE)
}
