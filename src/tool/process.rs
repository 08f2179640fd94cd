//! Runs one external command (tool, hook or context generator) to completion: argv only,
//! its own process group, standard input written while both outputs are read, and the
//! whole group killed on timeout or when the caller gives up (drops the future).
//!
//! A normal exit of the command does not touch its group: background processes it started
//! on purpose (a session holder) live on. If one of them keeps stdout or stderr open, the
//! output is collected for a short grace period after the exit and then left behind.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, Command};

/// How long a tool may run when its definition sets no `timeout_ms`.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// How long output is still collected after the command exited while a process it left
/// behind holds the pipes open.
const OUTPUT_GRACE: Duration = Duration::from_millis(250);

/// Where and how long to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOptions {
    /// Working directory of the process.
    pub cwd: PathBuf,
    /// Variables set on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// After this, the whole process group is killed with SIGKILL.
    pub timeout: Duration,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOutcome {
    /// Everything written to standard output (until the grace period, see module docs).
    pub stdout: Vec<u8>,
    /// Everything written to standard error.
    pub stderr: Vec<u8>,
    /// The exit status, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the process, when one did (SIGKILL = 9 after a timeout).
    pub signal: Option<i32>,
    /// The timeout expired and the group was killed.
    pub timed_out: bool,
    /// From spawn until the outcome was complete.
    pub duration: Duration,
}

/// Runs `argv` with `stdin` as its standard input (`None`: `/dev/null`).
///
/// Fails only when the process cannot be started (e.g. the program does not exist: the
/// error names it) or its pipes fail. Dropping the future kills the process group.
pub async fn run_process(
    argv: &[String],
    stdin: Option<&[u8]>,
    opts: &ProcessOptions,
) -> io::Result<ProcessOutcome> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command line"))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(&opts.cwd)
        .envs(opts.env.iter().map(|(k, v)| (k, v)))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);

    let started = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run '{program}': {e}")))?;
    let mut group = GroupGuard {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    };

    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let (status, timed_out) = {
        let io = pump(
            child.stdin.take().zip(stdin),
            child.stdout.take(),
            child.stderr.take(),
            &mut stdout,
            &mut stderr,
        );
        tokio::pin!(io);
        let deadline = tokio::time::sleep(opts.timeout);
        tokio::pin!(deadline);
        let mut io_done = false;
        let exited = loop {
            tokio::select! {
                status = child.wait() => break Some(status?),
                result = &mut io, if !io_done => {
                    result?;
                    io_done = true;
                }
                () = &mut deadline => break None,
            }
        };
        let (status, timed_out) = match exited {
            Some(status) => (status, false),
            None => {
                group.kill();
                (child.wait().await?, true)
            }
        };
        // The leader is reaped now; its pid (the group id) may be reused, so never signal
        // it again. Leftover members are the command's business after a normal exit.
        group.disarm();
        if !io_done {
            if let Ok(result) = tokio::time::timeout(OUTPUT_GRACE, &mut io).await {
                result?;
            }
        }
        (status, timed_out)
    };

    Ok(ProcessOutcome {
        stdout,
        stderr,
        exit_code: status.code(),
        signal: status.signal(),
        timed_out,
        duration: started.elapsed(),
    })
}

/// Kills the process group when dropped while armed: the caller gave up on the command.
struct GroupGuard {
    pgid: Option<Pid>,
}

impl GroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the outcome we want anyway.
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Writes stdin and reads both outputs concurrently, so that neither side blocks on a
/// full pipe. Reads go straight into the buffers, so whatever arrived before the future is
/// dropped is kept.
async fn pump(
    stdin: Option<(ChildStdin, &[u8])>,
    stdout: Option<impl AsyncRead + Unpin>,
    stderr: Option<impl AsyncRead + Unpin>,
    out: &mut Vec<u8>,
    err: &mut Vec<u8>,
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
    let (written, read_out, read_err) =
        tokio::join!(write, read_all(stdout, out), read_all(stderr, err));
    written?;
    read_out?;
    read_err
}

async fn read_all(pipe: Option<impl AsyncRead + Unpin>, buf: &mut Vec<u8>) -> io::Result<()> {
    let Some(mut pipe) = pipe else {
        return Ok(());
    };
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = pipe.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
