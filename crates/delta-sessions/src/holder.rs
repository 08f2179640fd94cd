//! The holder: one small daemon per session that owns the long-lived interpreter, accepts
//! `exec` requests on the session's Unix socket one at a time, runs each in the interpreter,
//! stops it (and the processes it started) on timeout, and keeps the session's files.
//!
//! It is `delta-sessions` itself, re-executed with a hidden subcommand by `start`. It calls
//! `setsid` first, so it outlives the agent that started it and is untouched when the
//! engine kills that tool's process group; every process of the session shares its session
//! id, which is how `end` and `cleanup` find them all.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{BufReader, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};

use crate::capture::{Captured, OUTPUT_CAP, read_capped};
use crate::error::SessionsError;
use crate::id::SessionId;
use crate::interp::{Kind, RunFiles, find_marker};
use crate::procfs::{self, ProcKey};
use crate::store::{self, HistoryEntry, Metadata, SessionPaths, State, Status};
use crate::wire::{self, ExecReply, ExecRequest, Reply};

/// How long the interpreter has to answer its first (empty) request.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// Time between rounds of signals while a command is being stopped.
const STOP_ROUND: Duration = Duration::from_millis(200);
/// After this long without the command stopping, the interpreter itself is killed.
const STOP_GIVE_UP: Duration = Duration::from_secs(5);
/// How long a connected client may take to send its request.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The exit code reported for a command stopped at its timeout, as timeout(1) does.
pub const TIMEOUT_EXIT_CODE: i32 = 124;

/// The one line the holder writes on its original stdout for `start`, then closes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Startup {
    Ready(Box<Metadata>),
    Failed { reason: String },
}

/// Runs the holder of session `id` until its interpreter is gone. `ready` receives the
/// `Startup` line; the caller passes the process's stdout, which is then pointed at
/// `/dev/null` so that no pipe of whoever started us stays open.
pub fn run_holder(
    sessions_dir: &Path,
    id: &SessionId,
    command: &str,
    ready: &mut dyn Write,
) -> Result<(), SessionsError> {
    let paths = SessionPaths::new(sessions_dir, id);
    let started = Holder::start(&paths, command);
    let line = match &started {
        Ok(holder) => Startup::Ready(Box::new(holder.meta.clone())),
        Err(error) => Startup::Failed {
            reason: error.to_string(),
        },
    };
    let sent = wire::send(&mut *ready, &line, &[]);
    detach_stdout();
    let mut holder = started?;
    if sent.is_err() {
        // `start` is gone and will report a failure; do not leave a session nobody knows.
        holder.shut_down("`delta-sessions start` went away during start-up");
        return Ok(());
    }
    holder.serve();
    Ok(())
}

fn detach_stdout() {
    if let Ok(null) = File::options().write(true).open("/dev/null") {
        // If this fails the pipe to `start` merely stays open until we exit.
        let _ignored = nix::unistd::dup2_stdout(null);
    }
}

/// The live interpreter and its two pipes.
struct Interpreter {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    /// Bytes read from stdout that have not been matched to a marker yet.
    buf: Vec<u8>,
    key: ProcKey,
}

/// How waiting for a command ended.
enum Finish {
    Status(i32),
    /// The interpreter closed its stdout: it exited.
    Exited,
    /// It ignored the stop signals and was killed.
    Killed,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StopReason {
    Timeout,
    /// The `exec` client disconnected (the engine killed it): nobody waits for the result.
    Cancelled,
}

struct Stopping {
    reason: StopReason,
    since: Instant,
    next_round: Instant,
    round: u32,
}

/// The result of one command, before it is sent.
struct Outcome {
    exit_code: i32,
    elapsed: Duration,
    timed_out: bool,
    cancelled: bool,
    ended: Option<String>,
    stdout: Captured,
    stderr: Captured,
}

struct Holder {
    paths: SessionPaths,
    command: String,
    kind: Kind,
    interp: Interpreter,
    listener: UnixListener,
    log: File,
    meta: Metadata,
    seq: u64,
    /// Descendants of the interpreter when the current command started: background jobs of
    /// earlier commands, spared (with their own children) when a command is stopped.
    spared: HashSet<ProcKey>,
}

impl Holder {
    fn start(paths: &SessionPaths, command: &str) -> Result<Self, SessionsError> {
        let failed = |reason: String| SessionsError::StartFailed {
            command: command.to_owned(),
            reason,
        };
        nix::unistd::setsid().map_err(|e| failed(format!("setsid failed: {e}")))?;
        let log = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(paths.log())?
            .into_file();
        fs_err::create_dir_all(paths.run_dir())?;
        let work_dir = std::env::current_dir()
            .map_err(|e| SessionsError::failed("read the current directory", e))?;
        let kind = Kind::detect(command);
        let mut interp = spawn(command, kind, &paths.id, &log).map_err(&failed)?;

        // The bootstrap ends with the marker of request 0: proof that the protocol works.
        let answered = interp
            .stdin
            .write_all(kind.bootstrap())
            .and_then(|()| interp.stdin.flush())
            .map_err(|e| format!("cannot write to it: {e}"))
            .and_then(|()| wait_startup(&mut interp));
        if let Err(reason) = answered {
            let _ignored = interp.child.kill();
            let _ignored = interp.child.wait();
            return Err(failed(reason));
        }
        let listener = wire::bind(&paths.dir).map_err(|e| {
            SessionsError::failed(format!("listen on `{}`", paths.socket().display()), e)
        })?;

        let me = i32::try_from(std::process::id()).unwrap_or(-1);
        let meta = Metadata {
            session_id: paths.id.to_string(),
            command: command.to_owned(),
            kind,
            work_dir,
            status: Status::Active,
            created_at: store::now(),
            last_executed_at: None,
            ended_at: None,
            end_reason: None,
            execution_count: 0,
            pid: me,
            process_start_time: procfs::start_time(me).unwrap_or(0),
            shell_pid: interp.key.0,
            shell_start_time: interp.key.1,
            hostname: store::hostname(),
        };
        store::write_metadata(paths, &meta)?;
        let spared = descendant_keys(interp.key.0);
        let holder = Self {
            paths: paths.clone(),
            command: command.to_owned(),
            kind,
            interp,
            listener,
            log,
            meta,
            seq: 0,
            spared,
        };
        holder.write_state(None);
        Ok(holder)
    }

    /// Accepts requests until the interpreter is gone.
    fn serve(&mut self) {
        loop {
            let (listener_ready, interp_ready) = {
                let mut fds = [
                    PollFd::new(self.listener.as_fd(), PollFlags::POLLIN),
                    PollFd::new(self.interp.stdout.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => (ready(&fds[0]), ready(&fds[1])),
                    Err(Errno::EINTR) => continue,
                    Err(e) => {
                        self.shut_down(&format!("the holder could not wait for requests: {e}"));
                        return;
                    }
                }
            };
            if interp_ready {
                // Nothing is running, so anything here is stray; only end of file matters.
                match self.read_interp() {
                    Ok(0) | Err(_) => {
                        let reason = self.reap();
                        self.shut_down(&reason);
                        return;
                    }
                    Ok(_) => self.discard_stray(),
                }
            }
            if listener_ready
                && let Ok((stream, _)) = self.listener.accept()
                && let Some(reason) = self.handle(stream)
            {
                self.shut_down(&reason);
                return;
            }
        }
    }

    /// Serves one client; returns why the session ended, if it did.
    fn handle(&mut self, stream: UnixStream) -> Option<String> {
        let _ignored = stream.set_read_timeout(Some(REQUEST_READ_TIMEOUT));
        let mut reader = BufReader::new(&stream);
        let refuse = |message: String| {
            let _ignored = wire::send(&stream, &Reply::Refused { message }, &[]);
            None
        };
        let request: ExecRequest = match wire::receive_header(&mut reader) {
            Ok(Some(request)) => request,
            Ok(None) => return None,
            Err(e) => return refuse(format!("unreadable request: {e}")),
        };
        let command = match wire::receive_block(&mut reader, request.command_len) {
            Ok(command) => command,
            Err(e) => return refuse(format!("unreadable command: {e}")),
        };
        let _ignored = stream.set_read_timeout(None);
        if self.kind.uses_command_file() && command.contains(&0) {
            return refuse(SessionsError::NulInCommand.to_string());
        }
        let timeout = Duration::from_millis(request.timeout_ms);
        let started_at = store::now();
        let outcome = self.run(&command, timeout, &stream);
        // Persist first, reply last: whoever reads the reply sees up-to-date files.
        self.record(&command, &started_at, &outcome);
        if !outcome.cancelled {
            let reply = Reply::Done(ExecReply {
                exit_code: outcome.exit_code,
                execution_time_ms: millis(outcome.elapsed),
                timed_out: outcome.timed_out,
                ended: outcome.ended.clone(),
                stdout_len: outcome.stdout.bytes.len(),
                stderr_len: outcome.stderr.bytes.len(),
                truncated: outcome.stdout.omitted > 0 || outcome.stderr.omitted > 0,
            });
            // A client that went away after all has nothing left to tell.
            let _ignored = wire::send(
                &stream,
                &reply,
                &[&outcome.stdout.bytes, &outcome.stderr.bytes],
            );
        }
        if outcome.ended.is_none() {
            self.spared = descendant_keys(self.interp.key.0);
        }
        outcome.ended
    }

    /// Runs one command to completion (or until it is stopped).
    fn run(&mut self, command: &[u8], timeout: Duration, client: &UnixStream) -> Outcome {
        self.seq += 1;
        let seq = self.seq;
        let files = RunFiles::new(&self.paths.run_dir(), seq);
        let clock = Instant::now();
        let early = |exit_code, stderr: Vec<u8>, ended| Outcome {
            exit_code,
            elapsed: clock.elapsed(),
            timed_out: false,
            cancelled: false,
            ended,
            stdout: Captured::default(),
            stderr: Captured {
                total: u64::try_from(stderr.len()).unwrap_or(u64::MAX),
                bytes: stderr,
                omitted: 0,
            },
        };
        if self.kind.uses_command_file()
            && let Err(e) = fs::write(&files.command, command)
        {
            let message = format!(
                "delta-sessions: cannot write {}: {e}\n",
                files.command.display()
            );
            return early(1, message.into_bytes(), None);
        }
        if self.kind.checks_syntax_first()
            && let Some(errors) = self.syntax_errors(&files.command)
        {
            remove_files(&files);
            return early(2, errors, None);
        }
        let request = self.kind.request(seq, command, &files);
        if self
            .interp
            .stdin
            .write_all(&request)
            .and_then(|()| self.interp.stdin.flush())
            .is_err()
        {
            remove_files(&files);
            let reason = self.reap();
            return early(1, Vec::new(), Some(reason));
        }

        let (finish, stopping) = self.wait(seq, clock + timeout, client);
        let elapsed = clock.elapsed();
        if stopping.is_some() {
            // Whatever the command started and left behind goes too.
            self.kill_command_processes(Signal::SIGKILL);
        }
        let stdout = read_capped(&files.stdout, OUTPUT_CAP);
        let stderr = read_capped(&files.stderr, OUTPUT_CAP);
        remove_files(&files);
        let timed_out = stopping == Some(StopReason::Timeout);
        let cancelled = stopping == Some(StopReason::Cancelled);
        let (status, ended) = match finish {
            Finish::Status(status) => (status, None),
            Finish::Exited => {
                let status = self.exit_status();
                (status, Some(self.reap()))
            }
            Finish::Killed => {
                let _ignored = self.interp.child.kill();
                let _ignored = self.interp.child.wait();
                let reason = format!(
                    "the command did not stop within {} s of its timeout and the interpreter \
                     was killed",
                    STOP_GIVE_UP.as_secs()
                );
                (TIMEOUT_EXIT_CODE, Some(reason))
            }
        };
        Outcome {
            exit_code: if timed_out { TIMEOUT_EXIT_CODE } else { status },
            elapsed,
            timed_out,
            cancelled,
            ended,
            stdout,
            stderr,
        }
    }

    /// Waits for the marker of `seq`, stopping the command at `deadline` or when the client
    /// disconnects.
    fn wait(
        &mut self,
        seq: u64,
        deadline: Instant,
        client: &UnixStream,
    ) -> (Finish, Option<StopReason>) {
        let mut client_open = true;
        let mut stopping: Option<Stopping> = None;
        let summary = |s: &Option<Stopping>| s.as_ref().map(|s| s.reason);
        loop {
            if let Some(status) = self.take_marker(seq) {
                return (Finish::Status(status), summary(&stopping));
            }
            let now = Instant::now();
            let wake = stopping.as_ref().map_or(deadline, |s| s.next_round);
            let wait = wake.saturating_duration_since(now);
            let (interp_ready, client_ready) = {
                let mut fds = vec![PollFd::new(self.interp.stdout.as_fd(), PollFlags::POLLIN)];
                if client_open {
                    fds.push(PollFd::new(client.as_fd(), PollFlags::POLLIN));
                }
                let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
                match poll(&mut fds, timeout) {
                    Ok(_) => (ready(&fds[0]), fds.get(1).is_some_and(ready)),
                    Err(_) => (false, false),
                }
            };
            if interp_ready && matches!(self.read_interp(), Ok(0) | Err(_)) {
                return (Finish::Exited, summary(&stopping));
            }
            if client_ready && client_hung_up(client) {
                client_open = false;
                if stopping.is_none() {
                    stopping = Some(Stopping::new(StopReason::Cancelled));
                }
            }
            let now = Instant::now();
            if stopping.is_none() && now >= deadline {
                stopping = Some(Stopping::new(StopReason::Timeout));
            }
            if let Some(stop) = stopping.as_mut()
                && now >= stop.next_round
            {
                if now.duration_since(stop.since) >= STOP_GIVE_UP {
                    self.kill_command_processes(Signal::SIGKILL);
                    return (Finish::Killed, summary(&stopping));
                }
                self.stop_round(stop.round);
                stop.round += 1;
                stop.next_round = now + STOP_ROUND;
            }
        }
    }

    /// One round of stopping: the command's processes get SIGINT first (a chance to clean
    /// up), SIGKILL after; the interpreter gets its abort signal every round, because one
    /// may not be enough (Python code can catch `KeyboardInterrupt`).
    ///
    /// The interpreter is signalled BEFORE its children: bash runs a trap that is pending
    /// when its foreground child dies before it starts the next command, so the unwinding
    /// is armed in time. The other order let a loaded machine run the rest of the command
    /// (`sleep 30; echo after`) between the child's death and the abort signal.
    fn stop_round(&mut self, round: u32) {
        let signal = if round == 0 {
            Signal::SIGINT
        } else {
            Signal::SIGKILL
        };
        if let Some(abort) = self.kind.abort_signal() {
            procfs::signal(self.interp.key, abort);
        }
        self.kill_command_processes(signal);
    }

    /// Signals the processes the current command started (descendants of the interpreter
    /// that are not spared background jobs), and on SIGKILL waits until they are gone.
    fn kill_command_processes(&self, signal: Signal) {
        let victims: Vec<ProcKey> = procfs::descendants(self.interp.key.0, &self.spared)
            .iter()
            .map(|stat| stat.key())
            .collect();
        for victim in &victims {
            procfs::signal(*victim, signal);
        }
        if signal == Signal::SIGKILL {
            procfs::wait_gone(&victims, Duration::from_secs(1));
        }
    }

    fn syntax_errors(&mut self, file: &Path) -> Option<Vec<u8>> {
        let output = Command::new(&self.command)
            .arg("-n")
            .arg(file)
            .stdin(Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => None,
            Ok(output) => {
                let mut errors = output.stdout;
                errors.extend(output.stderr);
                Some(errors)
            }
            Err(e) => {
                self.note(&format!(
                    "syntax check with `{} -n` failed to run: {e}",
                    self.command
                ));
                None
            }
        }
    }

    fn read_interp(&mut self) -> std::io::Result<usize> {
        let mut chunk = [0u8; 4096];
        let n = self.interp.stdout.read(&mut chunk)?;
        self.interp.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Consumes markers up to the one for `seq`; markers of earlier requests are stale.
    fn take_marker(&mut self, seq: u64) -> Option<i32> {
        while let Some((start, end, found, status)) = find_marker(&self.interp.buf) {
            if start > 0 {
                let junk = String::from_utf8_lossy(&self.interp.buf[..start]).into_owned();
                self.note(&format!(
                    "unexpected output on the control stream: {junk:?}"
                ));
            }
            self.interp.buf.drain(..end);
            if found == seq {
                return Some(status);
            }
        }
        None
    }

    /// Output on the control stream between commands is not part of any command's result.
    fn discard_stray(&mut self) {
        let stray = std::mem::take(&mut self.interp.buf);
        self.note(&format!(
            "unexpected output from the interpreter between commands: {:?}",
            String::from_utf8_lossy(&stray)
        ));
    }

    fn exit_status(&mut self) -> i32 {
        match self.wait_interp() {
            Some(status) => status
                .code()
                .or_else(|| status.signal().map(|signal| 128 + signal))
                .unwrap_or(1),
            None => 1,
        }
    }

    fn wait_interp(&mut self) -> Option<ExitStatus> {
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match self.interp.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                Ok(None) | Err(_) => {
                    let _ignored = self.interp.child.kill();
                    return self.interp.child.wait().ok();
                }
            }
        }
    }

    /// Why the interpreter is gone, in words (it has exited; this collects its status).
    fn reap(&mut self) -> String {
        match self.wait_interp() {
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("the interpreter exited with status {code}"),
                (None, Some(signal)) => {
                    let name = Signal::try_from(signal)
                        .map_or_else(|_| signal.to_string(), |s| s.to_string());
                    format!("the interpreter was killed by {name}")
                }
                (None, None) => "the interpreter exited".to_owned(),
            },
            None => "the interpreter is gone".to_owned(),
        }
    }

    fn record(&mut self, command: &[u8], started_at: &str, outcome: &Outcome) {
        let entry = HistoryEntry {
            seq: self.seq,
            started_at: started_at.to_owned(),
            command: String::from_utf8_lossy(command).into_owned(),
            exit_code: outcome.exit_code,
            execution_time_ms: millis(outcome.elapsed),
            timed_out: outcome.timed_out,
            cancelled: outcome.cancelled,
            stdout_bytes: usize::try_from(outcome.stdout.total).unwrap_or(usize::MAX),
            stderr_bytes: usize::try_from(outcome.stderr.total).unwrap_or(usize::MAX),
        };
        if let Err(e) = store::append_history(&self.paths, &entry) {
            self.note(&e.to_string());
        }
        self.meta.execution_count += 1;
        self.meta.last_executed_at = Some(store::now());
        if let Some(reason) = &outcome.ended {
            self.meta.status = Status::Exited;
            self.meta.ended_at = Some(store::now());
            self.meta.end_reason = Some(reason.clone());
        }
        if let Err(e) = store::write_metadata(&self.paths, &self.meta) {
            self.note(&e.to_string());
        }
        self.write_state(Some(outcome.exit_code));
    }

    fn write_state(&self, last_exit_code: Option<i32>) {
        let state = State {
            work_dir: fs::read_link(format!("/proc/{}/cwd", self.interp.key.0)).ok(),
            last_exit_code,
            updated_at: store::now(),
        };
        if let Err(e) = store::write_state(&self.paths, &state) {
            self.note(&e.to_string());
        }
    }

    /// Ends the session from the inside: records why, stops every process left in our
    /// process session (background jobs included) and removes the socket.
    fn shut_down(&mut self, reason: &str) {
        self.note(&format!("session ending: {reason}"));
        if self.meta.status == Status::Active {
            self.meta.status = Status::Exited;
            self.meta.ended_at = Some(store::now());
            self.meta.end_reason = Some(reason.to_owned());
            if let Err(e) = store::write_metadata(&self.paths, &self.meta) {
                self.note(&e.to_string());
            }
        }
        let _ignored = self.interp.child.kill();
        let _ignored = self.interp.child.wait();
        let me = i32::try_from(std::process::id()).unwrap_or(-1);
        let left: Vec<ProcKey> = procfs::session_members(me)
            .iter()
            .map(|stat| stat.key())
            .collect();
        procfs::terminate(&left, Duration::from_millis(500));
        let _ignored = fs::remove_file(self.paths.socket());
    }

    /// Appends a diagnostic line to `holder.log`.
    fn note(&self, message: &str) {
        let mut log = &self.log;
        let _ignored = writeln!(log, "{} {message}", store::now());
    }
}

impl Stopping {
    fn new(reason: StopReason) -> Self {
        let now = Instant::now();
        Self {
            reason,
            since: now,
            next_round: now,
            round: 0,
        }
    }
}

fn spawn(command: &str, kind: Kind, id: &SessionId, log: &File) -> Result<Interpreter, String> {
    let stderr = log
        .try_clone()
        .map_err(|e| format!("cannot share the log: {e}"))?;
    let mut child = Command::new(command);
    for name in kind.env_remove() {
        child.env_remove(name);
    }
    let mut child = child
        .args(kind.args())
        .env("DELTA_SESSION_ID", id.as_str())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| e.to_string())?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ignored = child.kill();
        return Err("its pipes could not be set up".to_owned());
    };
    let pid = i32::try_from(child.id()).unwrap_or(-1);
    let key = (pid, procfs::start_time(pid).unwrap_or(0));
    Ok(Interpreter {
        child,
        stdin,
        stdout,
        buf: Vec::new(),
        key,
    })
}

fn wait_startup(interp: &mut Interpreter) -> Result<(), String> {
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        if let Some((_, end, 0, _)) = find_marker(&interp.buf) {
            interp.buf.drain(..end);
            return Ok(());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "it did not answer the session protocol within {} s; sessions drive bash, \
                 POSIX shells and python",
                STARTUP_TIMEOUT.as_secs()
            ));
        }
        let readable = {
            let mut fds = [PollFd::new(interp.stdout.as_fd(), PollFlags::POLLIN)];
            let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
            matches!(poll(&mut fds, timeout), Ok(n) if n > 0)
        };
        if readable {
            let mut chunk = [0u8; 4096];
            match interp.stdout.read(&mut chunk) {
                Ok(0) | Err(_) => {
                    let status = interp
                        .child
                        .wait()
                        .map_or_else(|e| e.to_string(), |s| s.to_string());
                    return Err(format!("it exited during start-up ({status})"));
                }
                Ok(n) => interp.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

fn ready(fd: &PollFd<'_>) -> bool {
    fd.revents().is_some_and(|events| {
        events.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
    })
}

/// The client sends nothing after its request, so a readable socket means it hung up.
fn client_hung_up(client: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    matches!((&*client).read(&mut byte), Ok(0) | Err(_))
}

fn descendant_keys(root: i32) -> HashSet<ProcKey> {
    procfs::descendants(root, &HashSet::new())
        .iter()
        .map(|stat| stat.key())
        .collect()
}

fn remove_files(files: &RunFiles) {
    for path in [&files.command, &files.stdout, &files.stderr] {
        let _ignored = fs::remove_file(path);
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
