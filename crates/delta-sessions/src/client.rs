//! The operations behind the `delta-sessions` commands: start, exec, end, list, cleanup.
//! Each returns the JSON document to print, or an error with a hint.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use nix::sys::signal::Signal;

use crate::error::SessionsError;
use crate::holder::{Startup, TIMEOUT_EXIT_CODE};
use crate::id::SessionId;
use crate::output::{
    CleanupOutput, EndOutput, ExecOutput, ListEntry, ListStatus, StartOutput, encode_stream,
};
use crate::procfs::{self, ProcKey};
use crate::store::{self, Metadata, SessionPaths, Status};
use crate::wire::{self, ExecRequest, Reply};

/// Name of the hidden subcommand that turns `delta-sessions` into a holder.
pub const HOLDER_SUBCOMMAND: &str = "__holder";

/// A session directory without metadata younger than this may be a `start` in progress.
const START_GRACE: Duration = Duration::from_secs(60);

/// The sessions directory (`.sessions/` by default) and the operations on it.
#[derive(Debug, Clone)]
pub struct Sessions {
    dir: PathBuf,
    /// Where `start` notes each session for the engine tool call running it, if any.
    owner_dir: Option<PathBuf>,
}

impl Sessions {
    /// Sessions under `dir`, made absolute against the current directory (the holder and
    /// the interpreter run elsewhere).
    pub fn new(dir: &Path) -> Result<Self, SessionsError> {
        let dir = if dir.is_absolute() {
            dir.to_owned()
        } else {
            std::env::current_dir()
                .map_err(|e| SessionsError::failed("read the current directory", e))?
                .join(dir)
        };
        Ok(Self {
            dir,
            owner_dir: None,
        })
    }

    /// Notes every session `start` starts in `owner_dir`, the record directory of the
    /// engine tool call running us (see [`crate::OWNER_DIR_ENV`]).
    #[must_use]
    pub fn noting_in(mut self, owner_dir: Option<PathBuf>) -> Self {
        self.owner_dir = owner_dir;
        self
    }

    /// The sessions directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts a session running `command` in the current directory, with the caller's
    /// `id` or, when `None`, a generated one. `holder_exe` is the `delta-sessions` binary,
    /// re-executed as the session's holder.
    pub fn start(
        &self,
        command: &str,
        id: Option<&SessionId>,
        holder_exe: &Path,
    ) -> Result<StartOutput, SessionsError> {
        fs_err::create_dir_all(&self.dir)?;
        let paths = self.create_session_dir(id)?;
        // Before the holder exists, so no holder can outlive its call unnoted.
        if let Some(owner_dir) = &self.owner_dir {
            crate::owner::note(owner_dir, &self.dir, &paths.id);
        }
        // Held until the holder is up, so `cleanup` leaves the half-made session alone.
        let _lock = store::lock_exclusive(&paths)?;
        let log = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(paths.log())?
            .into_file();
        let failed = |reason: String| {
            let _ignored = fs::remove_dir_all(&paths.dir);
            SessionsError::StartFailed {
                command: command.to_owned(),
                reason,
            }
        };
        // stdin and stderr are not ours either: the holder must not keep the caller's
        // pipes open, or an engine waiting for our stdout to close would wait forever.
        let mut holder = Command::new(holder_exe)
            .arg("--sessions-dir")
            .arg(&self.dir)
            .arg(HOLDER_SUBCOMMAND)
            .arg(paths.id.as_str())
            .arg("--")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|e| failed(format!("cannot run {}: {e}", holder_exe.display())))?;
        let mut line = Vec::new();
        if let Some(stdout) = holder.stdout.take() {
            let _ignored = BufReader::new(stdout).read_until(b'\n', &mut line);
        }
        match serde_json::from_slice::<Startup>(&line) {
            Ok(Startup::Ready(meta)) => Ok(StartOutput {
                session_id: meta.session_id,
                command: meta.command,
                work_dir: meta.work_dir,
                status: meta.status,
            }),
            Ok(Startup::Failed { reason }) => {
                let _ignored = holder.wait();
                Err(failed(reason))
            }
            Err(_) => {
                let status = holder
                    .wait()
                    .map_or_else(|e| e.to_string(), |s| s.to_string());
                let log = fs::read_to_string(paths.log()).unwrap_or_default();
                Err(failed(format!(
                    "the session holder exited during start-up ({status}): {}",
                    log.trim()
                )))
            }
        }
    }

    fn create_session_dir(
        &self,
        chosen: Option<&SessionId>,
    ) -> Result<SessionPaths, SessionsError> {
        let mut attempts = 0;
        loop {
            let id = chosen.cloned().unwrap_or_else(SessionId::generate);
            let paths = SessionPaths::new(&self.dir, &id);
            // mkdir is atomic: it is the uniqueness check. Private, because history.log
            // and the socket give access to whatever the session's commands can reach.
            match fs::DirBuilder::new().mode(0o700).create(&paths.dir) {
                Ok(()) => return Ok(paths),
                // A chosen id names one session for good: an ended one keeps it until
                // `cleanup` removes its directory, so output can never be misattributed.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && chosen.is_some() => {
                    return Err(SessionsError::IdInUse {
                        id,
                        dir: self.dir.clone(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 8 => {
                    attempts += 1;
                }
                Err(e) => {
                    let what = format!("create directory `{}`", paths.dir.display());
                    return Err(SessionsError::failed(what, e));
                }
            }
        }
    }

    /// Runs `command` in session `id` and returns its complete result.
    pub fn exec(
        &self,
        id: &SessionId,
        command: &[u8],
        timeout: Duration,
    ) -> Result<ExecOutput, SessionsError> {
        if command.is_empty() {
            return Err(SessionsError::NoCommand);
        }
        let (paths, meta) = self.load(id)?;
        if meta.kind.uses_command_file() && command.contains(&0) {
            return Err(SessionsError::NulInCommand);
        }
        ensure_usable(id, &meta)?;
        // One command at a time per session: later callers queue here, in order of arrival.
        let _lock = store::lock_exclusive(&paths)?;
        let (paths, meta) = self.load(id)?;
        ensure_usable(id, &meta)?;

        let stream = wire::connect(&paths.dir).map_err(|e| {
            if procfs::is_running(meta.holder()) {
                SessionsError::Holder {
                    id: id.clone(),
                    message: format!("cannot connect to {}: {e}", paths.socket().display()),
                    log: paths.log(),
                }
            } else {
                SessionsError::NotRunning { id: id.clone() }
            }
        })?;
        let request = ExecRequest {
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            command_len: command.len(),
        };
        let lost = |detail: String| {
            let reason = store::read_metadata(&paths)
                .ok()
                .flatten()
                .and_then(|m| m.end_reason)
                .unwrap_or(detail);
            SessionsError::Lost {
                id: id.clone(),
                reason,
            }
        };
        wire::send(&stream, &request, &[command])
            .map_err(|e| lost(format!("the request could not be sent: {e}")))?;
        let mut reader = BufReader::new(&stream);
        let reply = match wire::receive_header::<Reply>(&mut reader) {
            Ok(Some(reply)) => reply,
            Ok(None) => return Err(lost("its process exited".to_owned())),
            Err(e) => return Err(lost(format!("the reply was unreadable: {e}"))),
        };
        let done = match reply {
            Reply::Done(done) => done,
            Reply::Refused { message } => {
                return Err(SessionsError::Holder {
                    id: id.clone(),
                    message,
                    log: paths.log(),
                });
            }
        };
        let stdout = wire::receive_block(&mut reader, done.stdout_len)
            .map_err(|e| lost(format!("the output was cut short: {e}")))?;
        let stderr = wire::receive_block(&mut reader, done.stderr_len)
            .map_err(|e| lost(format!("the output was cut short: {e}")))?;
        let (stdout, stdout_base64) = encode_stream(stdout);
        let (stderr, stderr_base64) = encode_stream(stderr);
        let hint = exec_hint(
            done.timed_out,
            timeout,
            done.ended.as_deref(),
            done.truncated,
        );
        Ok(ExecOutput {
            stdout,
            stdout_base64,
            stderr,
            stderr_base64,
            exit_code: if done.timed_out {
                TIMEOUT_EXIT_CODE
            } else {
                done.exit_code
            },
            execution_time_ms: done.execution_time_ms,
            timed_out: done.timed_out,
            output_truncated: done.truncated,
            session_ended: done.ended.is_some(),
            hint,
        })
    }

    /// Ends session `id`: its holder, interpreter and every process they started.
    pub fn end(&self, id: &SessionId) -> Result<EndOutput, SessionsError> {
        self.end_because(id, "it was ended by `delta-sessions end`")
    }

    /// [`Self::end`], recording `reason` as the session's end reason.
    pub(crate) fn end_because(
        &self,
        id: &SessionId,
        reason: &str,
    ) -> Result<EndOutput, SessionsError> {
        let (paths, mut meta) = self.load(id)?;
        if meta.status != Status::Active {
            return Err(SessionsError::Ended {
                id: id.clone(),
                reason: meta
                    .end_reason
                    .unwrap_or_else(|| "it was ended before".to_owned()),
            });
        }
        if !meta.is_local() {
            return Err(SessionsError::Holder {
                id: id.clone(),
                message: format!("the session runs on host '{}'; end it there", meta.hostname),
                log: paths.log(),
            });
        }
        stop_processes(&meta);
        meta.status = Status::Terminated;
        meta.ended_at = Some(store::now());
        meta.end_reason = Some(reason.to_owned());
        store::write_metadata(&paths, &meta)?;
        let _ignored = fs::remove_file(paths.socket());
        Ok(EndOutput {
            status: Status::Terminated,
            session_id: id.to_string(),
        })
    }

    /// Every session in the directory, oldest first.
    pub fn list(&self) -> Result<Vec<ListEntry>, SessionsError> {
        let mut entries: Vec<ListEntry> = self
            .session_ids()?
            .iter()
            .filter_map(|id| {
                let meta = store::read_metadata(&SessionPaths::new(&self.dir, id)).ok()??;
                Some(ListEntry {
                    status: list_status(&meta),
                    session_id: meta.session_id,
                    command: meta.command,
                    created_at: meta.created_at,
                    last_executed_at: meta.last_executed_at,
                    execution_count: meta.execution_count,
                    work_dir: meta.work_dir,
                })
            })
            .collect();
        entries.sort_by(|a, b| (&a.created_at, &a.session_id).cmp(&(&b.created_at, &b.session_id)));
        Ok(entries)
    }

    /// Removes every session that no longer runs (ended, exited, or whose process is gone),
    /// stopping anything it left behind. Running sessions, sessions busy with a command and
    /// sessions of other hosts are kept.
    pub fn cleanup(&self) -> Result<CleanupOutput, SessionsError> {
        let mut removed = Vec::new();
        for id in self.session_ids()? {
            let paths = SessionPaths::new(&self.dir, &id);
            let Some(_lock) = store::try_lock_exclusive(&paths)? else {
                continue;
            };
            let remove = match store::read_metadata(&paths) {
                Ok(Some(meta)) => {
                    let dead = meta.is_local() && !meta.is_live();
                    if dead {
                        stop_processes(&meta);
                    }
                    dead
                }
                Ok(None) => older_than(&paths.dir, START_GRACE),
                // Unreadable metadata may belong to a running session: leave it to `end`.
                Err(_) => false,
            };
            if remove {
                fs_err::remove_dir_all(&paths.dir)?;
                removed.push(id.to_string());
            }
        }
        Ok(CleanupOutput { removed })
    }

    fn load(&self, id: &SessionId) -> Result<(SessionPaths, Metadata), SessionsError> {
        let paths = SessionPaths::new(&self.dir, id);
        match store::read_metadata(&paths)? {
            Some(meta) => Ok((paths, meta)),
            None => Err(SessionsError::UnknownSession {
                id: id.clone(),
                dir: self.dir.clone(),
            }),
        }
    }

    fn session_ids(&self) -> Result<Vec<SessionId>, SessionsError> {
        let entries = match fs_err::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        let mut ids: Vec<SessionId> = entries
            .filter_map(|entry| {
                let entry = entry.ok()?;
                if !entry.file_type().ok()?.is_dir() {
                    return None;
                }
                SessionId::parse(entry.file_name().to_str()?).ok()
            })
            .collect();
        ids.sort();
        Ok(ids)
    }
}

fn ensure_usable(id: &SessionId, meta: &Metadata) -> Result<(), SessionsError> {
    match meta.status {
        Status::Active => {}
        Status::Terminated | Status::Exited => {
            return Err(SessionsError::Ended {
                id: id.clone(),
                reason: meta
                    .end_reason
                    .clone()
                    .unwrap_or_else(|| "it has ended".to_owned()),
            });
        }
    }
    if meta.is_local() && !procfs::is_running(meta.holder()) {
        return Err(SessionsError::NotRunning { id: id.clone() });
    }
    Ok(())
}

fn list_status(meta: &Metadata) -> ListStatus {
    match meta.status {
        Status::Active if meta.is_local() && !meta.is_live() => ListStatus::Dead,
        Status::Active => ListStatus::Active,
        Status::Terminated => ListStatus::Terminated,
        Status::Exited => ListStatus::Exited,
    }
}

/// Stops the holder first (so it records nothing more), then everything else in its
/// process session: the interpreter and all background jobs, including orphans.
fn stop_processes(meta: &Metadata) {
    let holder = meta.holder();
    procfs::signal(holder, Signal::SIGKILL);
    procfs::wait_gone(&[holder], Duration::from_secs(2));
    let mut left: Vec<ProcKey> = vec![meta.shell()];
    // The session id is the holder's pid. If another process now has that pid, a session
    // with this id may be someone else's, so only the recorded interpreter is stopped.
    let pid_is_ours =
        procfs::read(meta.pid).is_none_or(|info| info.start_ticks == meta.process_start_time);
    if pid_is_ours {
        left.extend(
            procfs::session_members(meta.pid)
                .iter()
                .map(|stat| stat.key()),
        );
    }
    procfs::terminate(&left, Duration::from_millis(500));
}

fn older_than(path: &Path, age: Duration) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|elapsed| elapsed >= age)
}

fn exec_hint(
    timed_out: bool,
    timeout: Duration,
    ended: Option<&str>,
    truncated: bool,
) -> Option<String> {
    let cut = truncated.then(|| {
        "the output was longer than a result carries and its middle was left out (see the \
         marker in it); write large output to a file and read the parts you need"
            .to_owned()
    });
    let stopped = timed_out.then(|| {
        format!(
            "the command ran past the {} s timeout and was stopped, with the processes it \
             started; run long jobs in the background (`cmd > job.log 2>&1 &`) or pass a \
             larger --timeout",
            timeout.as_secs_f64()
        )
    });
    let gone = ended.map(|reason| {
        format!("{reason}, so the session has ended; start a new one with `delta-sessions start`")
    });
    let parts: Vec<String> = [stopped, cut, gone].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}
