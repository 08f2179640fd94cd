//! The on-disk layout of `.sessions/{id}/` and the files in it: `metadata.json` (replaced
//! atomically), `state.json`, `history.log` (JSON lines), the exec lock and runtime files.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{SecondsFormat, Utc};
use nix::fcntl::{Flock, FlockArg};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::SessionsError;
use crate::id::SessionId;
use crate::interp::Kind;
use crate::procfs::{self, ProcKey};

/// Paths of one session's files.
#[derive(Debug, Clone)]
pub struct SessionPaths {
    pub id: SessionId,
    pub dir: PathBuf,
}

impl SessionPaths {
    pub fn new(sessions_dir: &Path, id: &SessionId) -> Self {
        Self {
            id: id.clone(),
            dir: sessions_dir.join(id.as_str()),
        }
    }

    pub fn metadata(&self) -> PathBuf {
        self.dir.join("metadata.json")
    }
    pub fn state(&self) -> PathBuf {
        self.dir.join("state.json")
    }
    pub fn history(&self) -> PathBuf {
        self.dir.join("history.log")
    }
    /// Held (flock) by `exec` for a whole command, and by `start` until the session is up.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("exec.lock")
    }
    /// The holder's Unix socket. Reached through [`crate::wire::connect`], which
    /// copes with paths longer than the 108-byte socket address limit.
    pub fn socket_name() -> &'static str {
        "holder.sock"
    }
    pub fn socket(&self) -> PathBuf {
        self.dir.join(Self::socket_name())
    }
    /// The holder's and the interpreter's own diagnostics.
    pub fn log(&self) -> PathBuf {
        self.dir.join("holder.log")
    }
    /// Per-command files: the command text and its captured stdout and stderr.
    pub fn run_dir(&self) -> PathBuf {
        self.dir.join("run")
    }
}

/// Life-cycle status recorded in `metadata.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The holder and its interpreter run and accept commands.
    Active,
    /// Ended on request by `delta-sessions end`.
    Terminated,
    /// The interpreter exited by itself (`exit`, a fatal error, killed) or was stopped after
    /// it ignored a timeout.
    Exited,
}

/// `.sessions/{id}/metadata.json`: seed 000 §2.3.3's fields plus what liveness checks need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Metadata {
    pub session_id: String,
    /// The interpreter as the user named it (`bash`, `python3`, `/bin/sh`).
    pub command: String,
    /// Which protocol drives the interpreter.
    pub kind: Kind,
    /// The directory the session started in.
    pub work_dir: PathBuf,
    pub status: Status,
    pub created_at: String,
    pub last_executed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Why the session ended, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    pub execution_count: u64,
    /// The holder process; also the id of the process session every session process is in.
    pub pid: i32,
    /// The holder's start time (clock ticks since boot), so a reused pid is not mistaken for it.
    pub process_start_time: u64,
    /// The interpreter process.
    pub shell_pid: i32,
    pub shell_start_time: u64,
    pub hostname: String,
}

impl Metadata {
    pub fn holder(&self) -> ProcKey {
        (self.pid, self.process_start_time)
    }
    pub fn shell(&self) -> ProcKey {
        (self.shell_pid, self.shell_start_time)
    }
    /// Whether this host can judge the holder's liveness (pids mean nothing on other hosts).
    pub fn is_local(&self) -> bool {
        self.hostname == hostname()
    }
    /// Active in the file and its holder really runs.
    pub fn is_live(&self) -> bool {
        self.status == Status::Active && procfs::is_running(self.holder())
    }
}

/// `.sessions/{id}/state.json`: what the session looks like after its latest command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct State {
    /// The interpreter's current directory (read from `/proc`, so it follows `cd`).
    pub work_dir: Option<PathBuf>,
    pub last_exit_code: Option<i32>,
    pub updated_at: String,
}

/// One line of `.sessions/{id}/history.log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HistoryEntry {
    pub seq: u64,
    pub started_at: String,
    /// The command text (invalid UTF-8 shown with U+FFFD).
    pub command: String,
    pub exit_code: i32,
    pub execution_time_ms: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The `exec` client disconnected before the command finished, so it was stopped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    pub stdout_bytes: usize,
    pub stderr_bytes: usize,
}

/// Now, as RFC 3339 UTC with milliseconds.
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// This machine's name, recorded so other hosts sharing the directory leave sessions alone.
pub fn hostname() -> String {
    nix::unistd::gethostname()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Replaces `path` atomically: readers see the old or the new file, never a torn one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SessionsError> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    fs_err::write(&tmp, bytes)?;
    Ok(fs_err::rename(&tmp, path)?)
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), SessionsError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| SessionsError::Metadata {
        path: path.to_owned(),
        source: e,
    })?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

pub fn write_metadata(paths: &SessionPaths, meta: &Metadata) -> Result<(), SessionsError> {
    write_json(&paths.metadata(), meta)
}

/// `Ok(None)` when the file does not exist (a session still starting, or a failed start).
pub fn read_metadata(paths: &SessionPaths) -> Result<Option<Metadata>, SessionsError> {
    let path = paths.metadata();
    match fs_err::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| SessionsError::Metadata { path, source: e }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

pub fn write_state(paths: &SessionPaths, state: &State) -> Result<(), SessionsError> {
    write_json(&paths.state(), state)
}

/// Appends one JSON line with a single write, so concurrent readers never see half an entry.
pub fn append_history(paths: &SessionPaths, entry: &HistoryEntry) -> Result<(), SessionsError> {
    let path = paths.history();
    let mut line = serde_json::to_vec(entry).map_err(|e| SessionsError::Metadata {
        path: path.clone(),
        source: e,
    })?;
    line.push(b'\n');
    fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut file| file.write_all(&line))?;
    Ok(())
}

/// An exclusive advisory lock on a session's `exec.lock`, released on drop.
pub struct ExecLock {
    _flock: Flock<File>,
}

fn open_lock_file(paths: &SessionPaths) -> Result<File, SessionsError> {
    Ok(fs_err::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(paths.lock())?
        .into_file())
}

fn lock_failed(paths: &SessionPaths, errno: nix::errno::Errno) -> SessionsError {
    SessionsError::failed(format!("lock `{}`", paths.lock().display()), errno.into())
}

/// Waits for the lock: this is what serialises concurrent `exec` calls on one session.
pub fn lock_exclusive(paths: &SessionPaths) -> Result<ExecLock, SessionsError> {
    let file = open_lock_file(paths)?;
    Flock::lock(file, FlockArg::LockExclusive)
        .map(|flock| ExecLock { _flock: flock })
        .map_err(|(_, errno)| lock_failed(paths, errno))
}

/// `Ok(None)` when someone else holds the lock (a command is running, or the session is
/// still starting).
pub fn try_lock_exclusive(paths: &SessionPaths) -> Result<Option<ExecLock>, SessionsError> {
    let file = open_lock_file(paths)?;
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(flock) => Ok(Some(ExecLock { _flock: flock })),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, errno)) => Err(lock_failed(paths, errno)),
    }
}
