//! Runs one external command (tool, hook or context generator) to completion: argv only,
//! its own process group, standard input written while both outputs are read, and the
//! whole group killed on timeout or when the caller gives up (drops the future).
//!
//! A normal exit of the command does not touch its group: background processes it started
//! on purpose (a session holder) live on. If one of them keeps stdout or stderr open, the
//! output is collected for a short grace period after the exit and then left behind.
//!
//! Output is bounded ([`OutputPolicy`]): each stream is redacted as it arrives, written
//! whole to its file when the caller names one, and kept in memory only as its first and
//! last [`OUTPUT_KEEP_BYTES`]. A stream that passes the limit has its group killed, so a
//! command reading `/dev/zero` costs a bounded file, not the engine's memory.

pub mod orphans;

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, Command};
use tokio::sync::Notify;

use crate::environment::placement::{PlacedEnv, Placement, kill_marked};
use crate::secrets::{Redactor, StreamRedactor};

/// How many bytes of each stream are stored (written to its file) before the process
/// group is killed: 64 MiB, far beyond any output a model can use, small enough that a
/// runaway command cannot fill a disk in one call.
pub const DEFAULT_OUTPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// How many bytes at the start and at the end of each stream are kept in memory (the
/// rest is only in the file): enough for the head and tail of any observation.
pub const OUTPUT_KEEP_BYTES: usize = 64 * 1024;

/// How long output is still collected after the command exited while a process it left
/// behind holds the pipes open.
const OUTPUT_GRACE: Duration = Duration::from_millis(250);

/// Bytes asked for per read of a pipe.
const READ_CHUNK: usize = 64 * 1024;

/// Where and how long to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOptions {
    /// Working directory of the process.
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// After this, the whole process group is killed with SIGKILL.
    pub timeout: Duration,
    /// What happens to stdout and stderr.
    pub output: OutputPolicy,
    /// Where the group's identity is recorded while it runs ([`orphans`]), so that after
    /// a crash of the engine the Janitor can end it. Tools only.
    pub record: Option<PathBuf>,
}

/// What happens to each output stream: redacted, written to its file (when one is
/// named) as it arrives, kept in memory only in part, and cut off at a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPolicy {
    /// Receives standard output, created (or truncated) before the process starts.
    pub stdout_file: Option<PathBuf>,
    /// Receives standard error, likewise.
    pub stderr_file: Option<PathBuf>,
    /// Bytes stored per stream; the byte after the last one kills the process group.
    pub limit: u64,
    /// Applied to both streams before anything is stored.
    pub redactor: Redactor,
}

impl Default for OutputPolicy {
    /// No files, [`DEFAULT_OUTPUT_LIMIT`], nothing redacted.
    fn default() -> Self {
        Self::new(DEFAULT_OUTPUT_LIMIT, Redactor::default())
    }
}

impl OutputPolicy {
    /// A policy without files.
    #[must_use]
    pub fn new(limit: u64, redactor: Redactor) -> Self {
        Self {
            stdout_file: None,
            stderr_file: None,
            limit,
            redactor,
        }
    }

    /// The same policy writing the streams to `stdout` and `stderr`.
    #[must_use]
    pub fn with_files(&self, stdout: PathBuf, stderr: PathBuf) -> Self {
        Self {
            stdout_file: Some(stdout),
            stderr_file: Some(stderr),
            ..self.clone()
        }
    }
}

/// The in-memory copy of one output stream, redacted: the whole stream when it is at
/// most twice [`OUTPUT_KEEP_BYTES`], else its first and last `OUTPUT_KEEP_BYTES` with
/// the size of the gap between them. The whole stream is in the policy's file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first bytes of the stream.
    pub head: Vec<u8>,
    /// Bytes stored between `head` and `tail` but not kept in memory.
    pub omitted: u64,
    /// The last bytes of the stream, after `head`.
    pub tail: Vec<u8>,
}

impl Captured {
    /// A complete copy of `bytes`.
    #[must_use]
    pub fn whole(bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            head: bytes.into(),
            omitted: 0,
            tail: Vec::new(),
        }
    }

    /// Whether nothing was left out.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.omitted == 0
    }

    /// How many bytes the stream stored.
    #[must_use]
    pub fn len(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.omitted
    }

    /// Whether the stream stored nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `head` then `tail`: the whole stream when [`Self::is_complete`].
    #[must_use]
    pub fn to_vec(&self) -> Vec<u8> {
        [self.head.as_slice(), self.tail.as_slice()].concat()
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// Standard output (until the grace period, see module docs), redacted and bounded.
    pub stdout: Captured,
    /// Standard error, likewise.
    pub stderr: Captured,
    /// The exit status, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, when one did (SIGKILL = 9 after a timeout).
    pub signal: Option<i32>,
    /// The timeout expired and the group was killed.
    pub timed_out: bool,
    /// A stream passed [`OutputPolicy::limit`]: what was stored ends at the limit, and
    /// the group was killed unless the command had already exited.
    pub output_limit_exceeded: bool,
    /// From spawn until the outcome was complete.
    pub duration: Duration,
}

impl ProcessOutcome {
    /// How it ended, in the words of `exit_code.txt` (tools and hooks alike): the exit
    /// code, `signal N`, `timeout` or `output limit exceeded`.
    #[must_use]
    pub fn exit_text(&self) -> String {
        if self.output_limit_exceeded {
            return "output limit exceeded".to_owned();
        }
        if self.timed_out {
            return "timeout".to_owned();
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => code.to_string(),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "unknown".to_owned(),
        }
    }
}

/// Why a command has no outcome.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// Nothing ran: the command line is empty, the program cannot be executed (the
    /// message names it), or an output file cannot be created.
    #[error(transparent)]
    NotStarted(io::Error),
    /// The command ran, but its output could not be read or written to its file; its
    /// process group was killed.
    #[error("{0}; the command was stopped (its process group killed)")]
    Output(io::Error),
}

impl ProcessError {
    /// The underlying I/O error's kind.
    #[must_use]
    pub fn kind(&self) -> io::ErrorKind {
        match self {
            ProcessError::NotStarted(error) | ProcessError::Output(error) => error.kind(),
        }
    }
}

/// Runs `argv` on the host with `stdin` as its standard input (`None`: `/dev/null`).
///
/// Dropping the future kills the process group; the files keep what was stored so far.
pub async fn run_process(
    argv: &[String],
    stdin: Option<&[u8]>,
    opts: &ProcessOptions,
) -> Result<ProcessOutcome, ProcessError> {
    run_process_in(&Placement::Host, argv, stdin, opts).await
}

/// Runs `argv` where `placement` says (the run's environment, see
/// [`crate::environment`]), `opts.cwd` and `opts.env` as seen there. The process group
/// killed at a timeout or a drop is the one started on the host; a container call's own
/// processes are found by their marker and killed too.
pub async fn run_process_in(
    placement: &Placement,
    argv: &[String],
    stdin: Option<&[u8]>,
    opts: &ProcessOptions,
) -> Result<ProcessOutcome, ProcessError> {
    if argv.is_empty() {
        return Err(ProcessError::NotStarted(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty command line",
        )));
    }
    let placed = placement.place(argv, &opts.cwd, &opts.env);
    let (program, args) = placed.argv.split_first().ok_or_else(|| {
        ProcessError::NotStarted(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty command line",
        ))
    })?;
    let policy = &opts.output;
    let mut stdout =
        Stream::open(policy, policy.stdout_file.as_deref()).map_err(ProcessError::NotStarted)?;
    let mut stderr =
        Stream::open(policy, policy.stderr_file.as_deref()).map_err(ProcessError::NotStarted)?;
    let mut command = Command::new(program);
    match &placed.env {
        PlacedEnv::Inherit(extra) => command.envs(extra.iter().map(|(k, v)| (k, v))),
        PlacedEnv::Exactly(all) => command.env_clear().envs(all.iter().map(|(k, v)| (k, v))),
    };
    command
        .args(args)
        .current_dir(&placed.cwd)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);

    let started = Instant::now();
    let mut child = command.spawn().map_err(|e| {
        ProcessError::NotStarted(io::Error::new(
            e.kind(),
            format!("cannot run '{program}': {e}"),
        ))
    })?;
    let mut group = GroupGuard {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
        record: opts.record.clone(),
        marker: placed.marker,
    };
    if let (Some(dir), Some(pid)) = (&opts.record, child.id()) {
        orphans::record(dir, pid, group.marker.as_deref());
    }

    let over_limit = Notify::new();
    let (status, timed_out) = {
        let io = pump(
            child.stdin.take().zip(stdin),
            (child.stdout.take(), &mut stdout),
            (child.stderr.take(), &mut stderr),
            &over_limit,
        );
        tokio::pin!(io);
        let deadline = tokio::time::sleep(opts.timeout);
        tokio::pin!(deadline);
        let mut io_done = false;
        let mut killed_for_output = false;
        let exited = loop {
            tokio::select! {
                // The limit first: once `child.wait()` has reaped a command that exited
                // meanwhile, its group may no longer be signalled.
                biased;
                () = over_limit.notified(), if !killed_for_output => {
                    group.kill();
                    killed_for_output = true;
                }
                status = child.wait() => break Some(status.map_err(ProcessError::Output)?),
                result = &mut io, if !io_done => {
                    result.map_err(ProcessError::Output)?;
                    io_done = true;
                }
                () = &mut deadline => break None,
            }
        };
        let (status, timed_out) = match exited {
            Some(status) => (status, false),
            None => {
                group.kill();
                (child.wait().await.map_err(ProcessError::Output)?, true)
            }
        };
        // The leader is reaped now; its pid (the group id) may be reused, so never signal
        // it again. Leftover members are the command's business after a normal exit.
        group.disarm();
        if !io_done && let Ok(result) = tokio::time::timeout(OUTPUT_GRACE, &mut io).await {
            result.map_err(ProcessError::Output)?;
        }
        (status, timed_out)
    };

    let (stdout, stdout_exceeded) = stdout.finish().map_err(ProcessError::Output)?;
    let (stderr, stderr_exceeded) = stderr.finish().map_err(ProcessError::Output)?;
    Ok(ProcessOutcome {
        stdout,
        stderr,
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        output_limit_exceeded: stdout_exceeded || stderr_exceeded,
        duration: started.elapsed(),
    })
}

/// Kills the process group when dropped while armed: the caller gave up on the command.
/// Either way its record ([`orphans`]) goes once the engine is done with the group.
struct GroupGuard {
    pgid: Option<Pid>,
    record: Option<PathBuf>,
    /// A container call's marker: its processes run outside the group.
    marker: Option<String>,
}

impl GroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the outcome we want anyway.
            let _ = killpg(pgid, Signal::SIGKILL);
            if let Some(marker) = &self.marker {
                kill_marked(marker);
            }
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
        if let Some(dir) = self.record.take() {
            orphans::forget(&dir);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
        self.disarm();
    }
}

/// Writes stdin and reads both outputs concurrently, so that neither side blocks on a
/// full pipe. Whatever is read is stored at once, so what arrived before the future is
/// dropped is kept. A stream over its limit wakes `over_limit` and stores no more.
async fn pump(
    stdin: Option<(ChildStdin, &[u8])>,
    stdout: (Option<impl AsyncRead + Unpin>, &mut Stream),
    stderr: (Option<impl AsyncRead + Unpin>, &mut Stream),
    over_limit: &Notify,
) -> io::Result<()> {
    let write = async {
        if let Some((mut pipe, data)) = stdin {
            match pipe.write_all(data).await {
                // The command need not read its input; it may exit first.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
                other => other?,
            }
            // Dropping the pipe closes it: the command sees end of input.
        }
        Ok::<(), io::Error>(())
    };
    let (written, read_out, read_err) = tokio::join!(
        write,
        read_stream(stdout.0, stdout.1, over_limit),
        read_stream(stderr.0, stderr.1, over_limit)
    );
    written?;
    read_out?;
    read_err
}

async fn read_stream(
    pipe: Option<impl AsyncRead + Unpin>,
    stream: &mut Stream,
    over_limit: &Notify,
) -> io::Result<()> {
    let Some(mut pipe) = pipe else {
        return Ok(());
    };
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut clean = Vec::with_capacity(READ_CHUNK);
    loop {
        let n = pipe.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        if stream.exceeded {
            // Drained and dropped until the kill closes the pipe: closing it now would
            // have the command die of SIGPIPE first, and its exit status then depend on
            // which came first.
            continue;
        }
        clean.clear();
        stream.redactor.push(&chunk[..n], &mut clean);
        stream.store(&clean)?;
        if stream.exceeded {
            over_limit.notify_one();
        }
    }
}

/// One output stream on its way to its file and its in-memory copy.
struct Stream {
    file: Option<(PathBuf, File)>,
    redactor: StreamRedactor,
    limit: u64,
    stored: u64,
    exceeded: bool,
    head: Vec<u8>,
    /// Grows to twice [`OUTPUT_KEEP_BYTES`] before it is cut back, so that trimming costs
    /// one move per `OUTPUT_KEEP_BYTES` stored rather than one per read.
    tail: Vec<u8>,
    dropped: u64,
}

impl Stream {
    fn open(policy: &OutputPolicy, path: Option<&Path>) -> io::Result<Self> {
        let file = match path {
            Some(path) => {
                let file = File::create(path).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
                })?;
                Some((path.to_path_buf(), file))
            }
            None => None,
        };
        Ok(Self {
            file,
            redactor: policy.redactor.stream(),
            limit: policy.limit,
            stored: 0,
            exceeded: false,
            head: Vec::new(),
            tail: Vec::new(),
            dropped: 0,
        })
    }

    /// Stores redacted bytes up to the limit; past it, sets `exceeded` and stores no more.
    fn store(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.exceeded {
            return Ok(());
        }
        let room = self.limit - self.stored;
        let bytes = match usize::try_from(room) {
            Ok(room) if room < bytes.len() => {
                self.exceeded = true;
                &bytes[..room]
            }
            Ok(_) | Err(_) => bytes,
        };
        if let Some((path, file)) = &mut self.file {
            // A plain blocking write: the engine writes its other records the same way,
            // and data written before a cancellation is then surely in the file.
            file.write_all(bytes).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
            })?;
        }
        self.stored += bytes.len() as u64;
        let to_head = (OUTPUT_KEEP_BYTES - self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        self.tail.extend_from_slice(&bytes[to_head..]);
        if self.tail.len() > 2 * OUTPUT_KEEP_BYTES {
            self.trim_tail();
        }
        Ok(())
    }

    fn trim_tail(&mut self) {
        let excess = self.tail.len().saturating_sub(OUTPUT_KEEP_BYTES);
        self.tail.drain(..excess);
        self.dropped += excess as u64;
    }

    /// Stores what the redactor held back (the stream is over: it holds no secret) and
    /// returns the in-memory copy, and whether the stream passed the limit.
    fn finish(mut self) -> io::Result<(Captured, bool)> {
        let mut rest = Vec::new();
        self.redactor.finish(&mut rest);
        self.store(&rest)?;
        self.trim_tail();
        let captured = Captured {
            head: self.head,
            omitted: self.dropped,
            tail: self.tail,
        };
        Ok((captured, self.exceeded))
    }
}
