//! The keeper: one process per run that holds the run's confinement (it restricts itself
//! with Landlock, or runs inside the run's bubblewrap sandbox) and starts every tool call
//! of the run in it, so that the calls share one sandbox and nothing they start outlives
//! the run. `delta-sandbox keep` is the keeper, `delta-sandbox call` the per-call client
//! the process runner starts; the engine's side ([`spawn`]) starts a keeper and waits
//! until it is ready.
//!
//! A call: the client connects to the keeper's socket and sends its argv, working
//! directory and environment together with its own standard input, output and error
//! (SCM_RIGHTS, as owned descriptors: no `unsafe`); the keeper starts the command in its
//! own process group with exactly those descriptors and answers how it ended; the client
//! ends the same way. When the client dies first (the runner killed it at a timeout), the
//! connection closes and the keeper kills the command's process group. The keeper is a
//! child subreaper, so whatever a call leaves running stays its descendant; when its
//! standard input closes (the engine ended the run, or was killed) it kills them all.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, BufReader, IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{Id, WaitPidFlag, waitid, waitpid};
use nix::unistd::Pid;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, recvmsg, sendmsg,
};
use serde::{Deserialize, Serialize};

use super::landlock::{LandlockOutcome, LandlockRules};

/// The helper's executable name.
pub const HELPER: &str = "delta-sandbox";

/// Longest request accepted: argv and environment together (Linux's own limit is 2 MiB).
const MAX_REQUEST: usize = 8 * 1024 * 1024;

/// How long a keeper may take to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How often orphans left by calls are reaped.
const REAP_EVERY: Duration = Duration::from_millis(200);

/// The keeper's first line on standard output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ready {
    /// Whether it serves; when not, `error` says why.
    pub ready: bool,
    /// Why it cannot serve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What Landlock enforced, when the keeper restricted itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock: Option<LandlockOutcome>,
}

/// How a call ended, as the keeper answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallEnd {
    /// The command exited with this code.
    Exited(i32),
    /// A signal ended the command.
    Signaled(i32),
    /// The command could not be started; the message says why.
    NotStarted(String),
}

// ---------------------------------------------------------------------------------------
// The client: `delta-sandbox call --socket S --cwd DIR -- ARGV`.

/// Runs `argv` in `cwd` through the keeper at `socket`, with this process's environment
/// and standard streams.
///
/// # Errors
/// When the keeper cannot be reached or breaks the protocol: nothing ran, or (a keeper
/// that died meanwhile) what ran was killed with it.
pub fn call(socket: &Path, cwd: &Path, argv: &[OsString]) -> io::Result<CallEnd> {
    let stream = UnixStream::connect(socket).map_err(|error| {
        io::Error::new(
            error.kind(),
            format!(
                "cannot reach the run's sandbox at {}: {error}",
                socket.display()
            ),
        )
    })?;
    let mut items: Vec<&[u8]> = vec![cwd.as_os_str().as_bytes()];
    let argc = argv.len().to_string();
    items.push(argc.as_bytes());
    items.extend(argv.iter().map(|word| word.as_bytes()));
    let env: Vec<OsString> = std::env::vars_os()
        .map(|(name, value)| {
            let mut pair = name;
            pair.push("=");
            pair.push(value);
            pair
        })
        .collect();
    items.extend(env.iter().map(|pair| pair.as_bytes()));
    let body: Vec<u8> = items
        .iter()
        .flat_map(|item| item.iter().copied().chain([0]))
        .collect();
    let stdin = io::stdin();
    let stdout = io::stdout();
    let stderr = io::stderr();
    send(
        &stream,
        &body,
        [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()],
    )?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line)?;
    parse_end(line.trim_end()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            if line.is_empty() {
                "the run's sandbox ended while the command ran".to_owned()
            } else {
                format!("unexpected answer from the run's sandbox: {line:?}")
            },
        )
    })
}

fn send(stream: &UnixStream, body: &[u8], fds: [BorrowedFd<'_>; 3]) -> io::Result<()> {
    let length = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the command is too long"))?
        .to_le_bytes();
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    control.push(SendAncillaryMessage::ScmRights(&fds));
    let sent = sendmsg(
        stream,
        &[IoSlice::new(&length)],
        &mut control,
        SendFlags::empty(),
    )?;
    let mut writer = stream;
    writer.write_all(&length[sent..])?;
    writer.write_all(body)
}

fn parse_end(line: &str) -> Option<CallEnd> {
    let (word, rest) = line.split_once(' ')?;
    match word {
        "exit" => rest.parse().ok().map(CallEnd::Exited),
        "signal" => rest.parse().ok().map(CallEnd::Signaled),
        "error" => Some(CallEnd::NotStarted(rest.to_owned())),
        _ => None,
    }
}

fn end_line(end: &CallEnd) -> String {
    match end {
        CallEnd::Exited(code) => format!("exit {code}\n"),
        CallEnd::Signaled(signal) => format!("signal {signal}\n"),
        CallEnd::NotStarted(why) => format!("error {}\n", why.replace('\n', " ")),
    }
}

// ---------------------------------------------------------------------------------------
// The keeper: `delta-sandbox keep --socket S [--landlock RULES]`.

/// What a keeper serves.
#[derive(Debug, Clone)]
pub struct KeepOptions {
    /// Where it listens.
    pub socket: PathBuf,
    /// The Landlock rules it restricts itself with, if any.
    pub landlock: Option<LandlockRules>,
}

/// Serves calls until standard input closes, then kills everything the calls left
/// running. `ready` receives the `Ready` line.
///
/// # Errors
/// When it cannot start serving; the `Ready` line then says why too.
pub fn keep(options: &KeepOptions, ready: &mut dyn Write) -> io::Result<()> {
    let refuse = |ready: &mut dyn Write, error: String| {
        let line = Ready {
            ready: false,
            error: Some(error.clone()),
            landlock: None,
        };
        let _ = writeln!(
            ready,
            "{}",
            serde_json::to_string(&line).unwrap_or_default()
        );
        io::Error::other(error)
    };
    // Orphans of the calls must stay ours, to be reaped and, at the end, killed.
    nix::sys::prctl::set_child_subreaper(true)
        .map_err(|errno| refuse(ready, format!("cannot become a subreaper: {errno}")))?;
    let _ = std::fs::remove_file(&options.socket);
    let listener = UnixListener::bind(&options.socket).map_err(|error| {
        refuse(
            ready,
            format!("cannot listen on {}: {error}", options.socket.display()),
        )
    })?;
    // Restricted before any thread exists: Landlock applies to the calling thread and
    // what it starts afterwards.
    let landlock = match &options.landlock {
        Some(rules) => {
            Some(super::landlock::restrict(rules).map_err(|error| refuse(ready, error))?)
        }
        None => None,
    };
    let line = Ready {
        ready: true,
        error: None,
        landlock,
    };
    writeln!(
        ready,
        "{}",
        serde_json::to_string(&line).map_err(io::Error::other)?
    )?;
    ready.flush()?;

    let state = Arc::new(State::default());
    {
        let state = Arc::clone(&state);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(REAP_EVERY);
                state.reap_orphans();
            }
        });
    }
    let stdin = io::stdin();
    loop {
        let mut fds = [
            PollFd::new(listener.as_fd(), PollFlags::POLLIN),
            PollFd::new(stdin.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(_) => break,
        }
        let ready_of = |fd: &PollFd<'_>| fd.revents().is_some_and(|events| !events.is_empty());
        if ready_of(&fds[1]) {
            // The engine writes nothing: readable means closed (or a stray byte).
            match stdin.lock().read(&mut [0u8; 64]) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        if ready_of(&fds[0])
            && let Ok((connection, _)) = listener.accept()
        {
            let state = Arc::clone(&state);
            std::thread::spawn(move || serve(&connection, &state));
        }
    }
    kill_descendants();
    let _ = std::fs::remove_file(&options.socket);
    Ok(())
}

/// The keeper's calls in progress, by pid; spawning holds the lock, so that the orphan
/// reaper never waits for a process a call is about to wait for.
#[derive(Default)]
struct State {
    active: Mutex<HashSet<i32>>,
}

impl State {
    fn reap_orphans(&self) {
        let active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        for pid in children() {
            if !active.contains(&pid) {
                let _ = waitpid(
                    Pid::from_raw(pid),
                    Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                );
            }
        }
    }
}

/// One call, start to end.
fn serve(connection: &UnixStream, state: &State) {
    let answer = |end: &CallEnd| {
        let mut writer = connection;
        let _ = writer.write_all(end_line(end).as_bytes());
    };
    let (request, fds) = match receive(connection) {
        Ok(received) => received,
        Err(error) => {
            answer(&CallEnd::NotStarted(format!("bad request: {error}")));
            return;
        }
    };
    let Some((program, args)) = request.argv.split_first() else {
        answer(&CallEnd::NotStarted("empty command line".to_owned()));
        return;
    };
    let [stdin, stdout, stderr] = fds;
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(request.env.iter().map(|(name, value)| (name, value)))
        .current_dir(&request.cwd)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .process_group(0);
    let spawned = {
        let mut active = state.active.lock().unwrap_or_else(PoisonError::into_inner);
        let spawned = command.spawn();
        if let Ok(child) = &spawned {
            active.insert(pid_of(child));
        }
        spawned
    };
    // The call's descriptors are the command's now; this process keeps none open.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            answer(&CallEnd::NotStarted(format!(
                "cannot run '{}': {error}",
                program.to_string_lossy()
            )));
            return;
        }
    };
    let pid = pid_of(&child);
    let finished = Arc::new(Mutex::new(false));
    if let Ok(mut watcher) = connection.try_clone() {
        let finished = Arc::clone(&finished);
        std::thread::spawn(move || {
            // The client sends nothing more: any end of reading means it is gone.
            let _ = watcher.read(&mut [0u8; 1]);
            let finished = finished.lock().unwrap_or_else(PoisonError::into_inner);
            if !*finished {
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            }
        });
    }
    // Waits without reaping, so that the pid (and group id) stays the command's until
    // the watcher can no longer kill it.
    while let Err(Errno::EINTR) = waitid(
        Id::Pid(Pid::from_raw(pid)),
        WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT,
    ) {}
    *finished.lock().unwrap_or_else(PoisonError::into_inner) = true;
    let end = match child.wait() {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => CallEnd::Exited(code),
            (None, Some(signal)) => CallEnd::Signaled(signal),
            (None, None) => CallEnd::Exited(-1),
        },
        Err(error) => CallEnd::NotStarted(format!("lost the command: {error}")),
    };
    state
        .active
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&pid);
    answer(&end);
}

fn pid_of(child: &Child) -> i32 {
    i32::try_from(child.id()).unwrap_or(i32::MAX)
}

struct Request {
    cwd: PathBuf,
    argv: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
}

fn receive(stream: &UnixStream) -> io::Result<(Request, [OwnedFd; 3])> {
    let mut length = [0u8; 4];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let got = recvmsg(
        stream,
        &mut [IoSliceMut::new(&mut length)],
        &mut control,
        RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    let mut reader = stream;
    reader.read_exact(&mut length[got.bytes..])?;
    let length = usize::try_from(u32::from_le_bytes(length)).unwrap_or(usize::MAX);
    if length > MAX_REQUEST {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request too long",
        ));
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let fds: [OwnedFd; 3] = fds.try_into().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "expected standard input, output and error",
        )
    })?;
    let request = parse_request(&body)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "malformed request"))?;
    Ok((request, fds))
}

fn parse_request(body: &[u8]) -> Option<Request> {
    let mut items = body.strip_suffix(&[0])?.split(|byte| *byte == 0);
    let cwd = PathBuf::from(OsStr::from_bytes(items.next()?));
    let argc: usize = std::str::from_utf8(items.next()?).ok()?.parse().ok()?;
    let argv: Vec<OsString> = items
        .by_ref()
        .take(argc)
        .map(|word| OsString::from_vec(word.to_vec()))
        .collect();
    if argv.len() != argc {
        return None;
    }
    let env = items
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let at = pair
                .iter()
                .position(|byte| *byte == b'=')
                .unwrap_or(pair.len());
            let (name, value) = pair.split_at(at);
            (
                OsString::from_vec(name.to_vec()),
                OsString::from_vec(value.get(1..).unwrap_or_default().to_vec()),
            )
        })
        .collect();
    Some(Request { cwd, argv, env })
}

/// The pids of this process's children, from every thread's `children` list.
fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(
                list.split_whitespace()
                    .filter_map(|pid| pid.parse::<i32>().ok()),
            );
        }
    }
    pids
}

/// Kills every descendant: children first; what they leave behind becomes a child in turn
/// (this process is their subreaper), until none is left.
fn kill_descendants() {
    for _ in 0..100 {
        let pids = children();
        if pids.is_empty() {
            return;
        }
        for pid in &pids {
            let pid = Pid::from_raw(*pid);
            // The group first: a call's command leads one.
            let _ = killpg(pid, Signal::SIGKILL);
            let _ = kill(pid, Signal::SIGKILL);
        }
        for pid in pids {
            let _ = waitpid(Pid::from_raw(pid), None);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The engine's side.

/// A running keeper, owned by the engine.
#[derive(Debug)]
pub struct Keeper {
    child: Child,
    stdin: Option<ChildStdin>,
    /// What Landlock enforced, from its ready line.
    pub landlock: Option<LandlockOutcome>,
}

/// Starts `argv` (a keeper, possibly wrapped in bwrap) with a minimal environment, its
/// standard error to `log`, and waits for its ready line.
///
/// # Errors
/// When it cannot be started, says it cannot serve, or says nothing in time: the message
/// carries the keeper's own words and the tail of its log.
pub fn spawn(argv: &[String], env: &[(String, String)], log: &Path) -> Result<Keeper, String> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| "empty keeper command".to_owned())?;
    let log_file = std::fs::File::create(log)
        .map_err(|error| format!("cannot create {}: {error}", log.display()))?;
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file))
        .process_group(0)
        .spawn()
        .map_err(|error| format!("cannot run '{program}': {error}"))?;
    let stdout = child.stdout.take();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(stdout) = stdout {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        let _ = sender.send(line);
    });
    let line = receiver.recv_timeout(READY_TIMEOUT).unwrap_or_default();
    let told = serde_json::from_str::<Ready>(line.trim()).ok();
    match told {
        Some(Ready {
            ready: true,
            landlock,
            ..
        }) => Ok(Keeper {
            stdin: child.stdin.take(),
            child,
            landlock,
        }),
        other => {
            let _ = child.kill();
            let _ = child.wait();
            let said = other
                .and_then(|ready| ready.error)
                .unwrap_or_else(|| "it did not say it was ready".to_owned());
            let tail = std::fs::read_to_string(log).unwrap_or_default();
            let tail = tail.trim();
            Err(if tail.is_empty() {
                said
            } else {
                format!("{said}; it wrote: {}", last_lines(tail, 5))
            })
        }
    }
}

impl Keeper {
    /// Ends the keeper: its standard input closed, it kills what the run left running
    /// and exits; after a grace period it is killed.
    pub fn stop(mut self) {
        drop(self.stdin.take());
        for _ in 0..100 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The last `n` lines of `text`, joined by ` / `.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips() {
        let body = b"/w\x002\x00sh\x00-c\x00A=1\x00B=x=y\x00";
        let request = parse_request(body).unwrap();
        assert_eq!(request.cwd, PathBuf::from("/w"));
        assert_eq!(request.argv, [OsString::from("sh"), OsString::from("-c")]);
        assert_eq!(
            request.env,
            [
                (OsString::from("A"), OsString::from("1")),
                (OsString::from("B"), OsString::from("x=y"))
            ]
        );
        assert!(parse_request(b"/w\x003\x00sh\x00").is_none());
    }

    #[test]
    fn answers_round_trip() {
        for end in [
            CallEnd::Exited(3),
            CallEnd::Signaled(9),
            CallEnd::NotStarted("cannot run 'x': not found".into()),
        ] {
            assert_eq!(parse_end(end_line(&end).trim_end()), Some(end));
        }
        assert_eq!(parse_end("bogus"), None);
    }
}
