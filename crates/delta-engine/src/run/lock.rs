//! `run.lock`: the advisory lock that makes "at most one live process per run" true.

use std::fs::File;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::RunStateError;
use crate::path_error::failed;

/// An exclusive `flock(2)` on `.delta/{run_id}/run.lock`, held for as long as this value
/// lives and released on drop (and by the kernel when the process dies, however it dies).
///
/// Why a lock as well as the pid in metadata: two `delta continue` processes can both
/// read "RUNNING, owner dead" and both decide to take over; only one of them can win
/// `try_acquire`, so only one writes the journal. A pid check alone cannot give that.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    _lock: Flock<File>,
}

impl RunLock {
    /// Takes the lock without waiting, creating the lock file if needed.
    ///
    /// # Errors
    /// [`RunStateError::AlreadyLocked`] when another open file (in this or another
    /// process) holds it; [`RunStateError::Io`] when the file cannot be opened or locked.
    pub fn try_acquire(path: &Path) -> Result<Self, RunStateError> {
        let file = fs_err::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?
            .into_file();
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Self {
                path: path.to_path_buf(),
                _lock: lock,
            }),
            Err((_, Errno::EWOULDBLOCK)) => Err(RunStateError::AlreadyLocked {
                path: path.to_path_buf(),
            }),
            Err((_, errno)) => Err(failed("lock", path, errno.into()).into()),
        }
    }

    /// The lock file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether some open file other than the caller's holds the lock at `path` (a missing
/// file is not locked).
///
/// This is a probe for display (`list-runs`, diagnostics): it takes a shared lock for an
/// instant, during which a concurrent [`RunLock::try_acquire`] fails. A process that
/// means to take the run over must call `try_acquire` instead, which decides atomically.
///
/// # Errors
/// [`RunStateError::Io`] when the file exists but cannot be opened or probed.
pub fn is_locked_by_other(path: &Path) -> Result<bool, RunStateError> {
    let file = match fs_err::File::open(path) {
        Ok(file) => file.into_file(),
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => return Err(source.into()),
    };
    match Flock::lock(file, FlockArg::LockSharedNonblock) {
        Ok(_probe) => Ok(false),
        Err((_, Errno::EWOULDBLOCK)) => Ok(true),
        Err((_, errno)) => Err(failed("probe the lock of", path, errno.into()).into()),
    }
}
