//! One live driver per batch directory, and one driver per task.
//!
//! `driver.lock` is held by `delta batch run` for as long as it runs: an exclusive
//! `flock(2)` (released by the kernel however the driver ends, as `run.lock` is), with
//! the holder's identity written in it, so that a second driver is refused with the name
//! of the first. A record left by a driver that ended without clearing it is judged by
//! the Janitor's rules ([`delta_engine::janitor::examine`]): a holder gone from this host is
//! taken over; one recorded on another host, which this host cannot check (a shared file
//! system whose locks do not reach across hosts), is not.
//!
//! `runs/.ID.lock` is held while a task is driven, by the local driver and by each Slurm
//! array task alike, so that two drivers never start the same task's run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::BatchError;
use delta_engine::janitor::{Keep, OwnerFinding, examine};
use delta_engine::run::{ProcessIdentity, RunLock, RunStateError, Timestamp};

/// Who holds (or last held) a lock, as written in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Holder {
    pid: u32,
    hostname: String,
    process_name: String,
    #[serde(default)]
    start_ticks: Option<u64>,
    since: String,
}

impl Holder {
    fn current() -> Self {
        let me = ProcessIdentity::current();
        Self {
            pid: me.pid,
            hostname: me.hostname,
            process_name: me.process_name,
            start_ticks: me.start_ticks,
            since: Timestamp::now().to_string(),
        }
    }

    fn identity(&self) -> ProcessIdentity {
        ProcessIdentity {
            pid: self.pid,
            hostname: self.hostname.clone(),
            process_name: self.process_name.clone(),
            start_ticks: self.start_ticks,
        }
    }

    fn describe(&self) -> String {
        format!(
            "PID {} ({}) on host '{}', since {}",
            self.pid, self.process_name, self.hostname, self.since
        )
    }
}

/// How to answer a refusal by the live driver of a `what` directory (batch or eval):
/// wait for it, or watch it with the command `follow`.
pub(crate) fn driven_help(what: &str, follow: &str) -> String {
    format!(
        "one driver per {what} directory: wait for that one to end (it answers SIGINT and \
         SIGTERM), or follow it with `{follow}`"
    )
}

/// How to answer a refusal by a driver recorded on another host in `dir`.
pub(crate) fn driven_elsewhere_help(dir: &Path) -> String {
    format!(
        "if that driver is gone, remove {} and run again",
        dir.join("driver.lock").display()
    )
}

/// The batch directory's driver lock, held until dropped.
#[derive(Debug)]
pub struct DriverLock {
    path: PathBuf,
    _lock: RunLock,
    previous: Option<String>,
}

impl DriverLock {
    /// Takes `driver.lock` of the directory `root` of a batch (or an eval: `what` names
    /// which, for the message when a gone driver's record is taken over) for this process.
    ///
    /// # Errors
    /// [`BatchError::Driven`] while another driver holds it (or a live process of this host
    /// is recorded in it), [`BatchError::DrivenElsewhere`] when its record names a driver
    /// on another host; [`BatchError::Io`] when it cannot be created or written.
    pub fn acquire(root: &Path, what: &str) -> Result<Self, BatchError> {
        let path = root.join("driver.lock");
        let lock = match RunLock::try_acquire(&path) {
            Ok(lock) => lock,
            Err(RunStateError::AlreadyLocked { .. }) => {
                return Err(BatchError::Driven {
                    dir: root.to_path_buf(),
                    holder: read_holder(&path)
                        .map_or_else(|| "another process".to_owned(), |holder| holder.describe()),
                });
            }
            Err(error) => return Err(lock_error(path, error)),
        };
        let previous = match read_holder(&path) {
            None => None,
            Some(holder) => match examine(&holder.identity(), false) {
                Ok(OwnerFinding::Dead | OwnerFinding::PidReused { .. }) => Some(format!(
                    "the {what}'s previous driver ({}) is gone; this one takes over",
                    holder.describe()
                )),
                // Not reachable without `force`; a forced finding would be taken over.
                Ok(OwnerFinding::ForcedFromOtherHost { .. }) => None,
                Err(Keep::Alive) => {
                    return Err(BatchError::Driven {
                        dir: root.to_path_buf(),
                        holder: holder.describe(),
                    });
                }
                Err(Keep::OtherHost) => {
                    return Err(BatchError::DrivenElsewhere {
                        dir: root.to_path_buf(),
                        holder: holder.describe(),
                    });
                }
            },
        };
        let record = serde_json::to_vec(&Holder::current()).unwrap_or_default();
        fs_err::write(&path, record).map_err(|source| BatchError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(Self {
            path,
            _lock: lock,
            previous,
        })
    }

    /// What became of the driver recorded before this one, when one was.
    #[must_use]
    pub fn previous(&self) -> Option<&str> {
        self.previous.as_deref()
    }
}

impl Drop for DriverLock {
    /// Clears the record (the file stays: removing a locked file would let two processes
    /// lock two different files of the same name).
    fn drop(&mut self) {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .and_then(|file| file.set_len(0));
    }
}

/// The holder recorded in the lock file at `path`, if any.
fn read_holder(path: &Path) -> Option<Holder> {
    let bytes = delta_engine::run::read_regular_file(path, 64 * 1024).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The lock of one task while it is driven: `runs/.ID.lock` (no task id starts with a
/// dot, so it never meets a workspace).
#[derive(Debug)]
pub(super) struct TaskLock {
    _lock: RunLock,
}

impl TaskLock {
    /// Takes the lock of task `id` in the batch directory `root`; `None` while another
    /// process drives the task.
    pub(super) fn try_acquire(root: &Path, id: &str) -> Result<Option<Self>, BatchError> {
        let path = root.join("runs").join(format!(".{id}.lock"));
        match RunLock::try_acquire(&path) {
            Ok(lock) => Ok(Some(Self { _lock: lock })),
            Err(RunStateError::AlreadyLocked { .. }) => Ok(None),
            Err(error) => Err(lock_error(path, error)),
        }
    }
}

fn lock_error(path: PathBuf, error: RunStateError) -> BatchError {
    let source = if let RunStateError::Io(source) = error {
        source
    } else {
        std::io::Error::other(error.to_string())
    };
    BatchError::Io { path, source }
}
