//! Running one command of a step: in its own process group, with a time limit, an optional
//! signal sent the way a terminal sends Ctrl+C, and its output captured whole.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;

use crate::scenario::SignalName;

/// What to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The program (a name looked up on `PATH`, or a path).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its whole environment (nothing else is inherited).
    pub env: Vec<(String, String)>,
    /// Text for its standard input; `None` gives it an empty one.
    pub stdin: Option<String>,
    /// How long it may run before its process group is killed.
    pub timeout: Duration,
    /// A signal to send while it runs.
    pub signal: Option<PlannedSignal>,
}

/// A signal sent once a condition holds.
#[derive(Debug, Clone)]
pub struct PlannedSignal {
    /// Which signal.
    pub signal: SignalName,
    /// Wait until this file (mock-llm's record) has this many lines.
    pub after_lines: Option<(PathBuf, u64)>,
    /// Then wait this long.
    pub delay: Duration,
}

/// How a command ended and what it printed.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Standard output (invalid UTF-8 replaced).
    pub stdout: String,
    /// Standard error (invalid UTF-8 replaced).
    pub stderr: String,
    /// It ran out of time and was killed.
    pub timed_out: bool,
    /// The planned signal was sent (or why not).
    pub signal_note: Option<String>,
    /// It could not be started: why.
    pub spawn_error: Option<String>,
}

/// How long output readers may outlive the process (a leftover holding the pipe).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How often the signal condition is polled.
const POLL: Duration = Duration::from_millis(20);

/// Runs the invocation to its end. Any process left in its process group afterwards is
/// killed, so nothing a step started outlives it unless it left the group on purpose.
pub async fn run(invocation: Invocation) -> Outcome {
    let mut command = Command::new(&invocation.program);
    command
        .args(&invocation.args)
        .current_dir(&invocation.cwd)
        .env_clear()
        .envs(invocation.env.iter().map(|(k, v)| (k, v)))
        .stdin(if invocation.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            return Outcome {
                spawn_error: Some(format!("cannot start {}: {err}", invocation.program)),
                ..Outcome::default()
            };
        }
    };
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);

    if let (Some(text), Some(mut stdin)) = (invocation.stdin, child.stdin.take()) {
        tokio::spawn(async move {
            // A command that exits without reading its input is not an error here.
            let _ignored = stdin.write_all(text.as_bytes()).await;
        });
    }
    let stdout = child.stdout.take().map(read_all);
    let stderr = child.stderr.take().map(read_all);
    // Raised by the signaller just before it sends, with no await point after it: once the
    // command has ended, a raised flag means the signal went out (its task is about to
    // finish) even when the command died before that task could report.
    let sending = Arc::new(AtomicBool::new(false));
    let signaller = match (invocation.signal, group) {
        (Some(plan), Some(group)) => Some(tokio::spawn(send_when_ready(
            plan,
            group,
            Arc::clone(&sending),
        ))),
        (Some(_) | None, None) | (None, Some(_)) => None,
    };

    let mut outcome = Outcome::default();
    let status = match tokio::time::timeout(invocation.timeout, child.wait()).await {
        Ok(status) => status,
        Err(_elapsed) => {
            outcome.timed_out = true;
            kill_group(group);
            child.wait().await
        }
    };
    kill_group(group);
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt as _;
            outcome.code = status.code();
            outcome.signal = status.signal();
        }
        Err(err) => outcome.spawn_error = Some(format!("cannot wait for the command: {err}")),
    }
    if let Some(signaller) = signaller {
        outcome.signal_note = Some(if sending.load(Ordering::SeqCst) {
            signaller
                .await
                .unwrap_or_else(|err| format!("the signal task failed: {err}"))
        } else {
            signaller.abort();
            "the command ended before the signal was due; no signal was sent".to_string()
        });
    }
    outcome.stdout = drain(stdout).await;
    outcome.stderr = drain(stderr).await;
    outcome
}

fn read_all<R>(mut reader: R) -> tokio::task::JoinHandle<Vec<u8>>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buffer = Vec::new();
        // Whatever was read before an error is still the command's output.
        let _ignored = reader.read_to_end(&mut buffer).await;
        buffer
    })
}

async fn drain(reader: Option<tokio::task::JoinHandle<Vec<u8>>>) -> String {
    let Some(reader) = reader else {
        return String::new();
    };
    match tokio::time::timeout(DRAIN_GRACE, reader).await {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok(Err(_)) | Err(_) => String::new(),
    }
}

fn kill_group(group: Option<Pid>) {
    if let Some(group) = group {
        // ESRCH (the group is already gone) is the usual, expected answer.
        let _ignored = killpg(group, Signal::SIGKILL);
    }
}

fn to_nix(signal: SignalName) -> Signal {
    match signal {
        SignalName::SIGINT => Signal::SIGINT,
        SignalName::SIGTERM => Signal::SIGTERM,
        SignalName::SIGHUP => Signal::SIGHUP,
        SignalName::SIGKILL => Signal::SIGKILL,
    }
}

async fn send_when_ready(plan: PlannedSignal, group: Pid, sending: Arc<AtomicBool>) -> String {
    if let Some((file, lines)) = &plan.after_lines {
        while count_lines(file).await < *lines {
            tokio::time::sleep(POLL).await;
        }
    }
    tokio::time::sleep(plan.delay).await;
    sending.store(true, Ordering::SeqCst);
    match killpg(group, to_nix(plan.signal)) {
        Ok(()) => format!("{:?} sent to the process group", plan.signal),
        Err(err) => format!("{:?} could not be sent: {err}", plan.signal),
    }
}

async fn count_lines(file: &std::path::Path) -> u64 {
    tokio::fs::read(file)
        .await
        .map(|bytes| bytes.iter().filter(|b| **b == b'\n').count() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Invocation {
        Invocation {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: std::env::temp_dir(),
            env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            stdin: None,
            timeout: Duration::from_secs(10),
            signal: None,
        }
    }

    #[tokio::test]
    async fn output_exit_code_and_stdin_are_captured() {
        let mut inv = sh("cat; echo err >&2; exit 3");
        inv.stdin = Some("in\n".into());
        let out = run(inv).await;
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (Some(3), "in\n", "err\n")
        );
    }

    #[tokio::test]
    async fn the_environment_is_only_what_is_given() {
        let mut inv = sh("echo \"[$HOME][$X]\"");
        inv.env.push(("X".into(), "1".into()));
        assert_eq!(run(inv).await.stdout, "[][1]\n");
    }

    #[tokio::test]
    async fn a_command_past_its_time_is_killed_with_its_group() {
        let mut inv = sh("sleep 30 & sleep 30");
        inv.timeout = Duration::from_millis(200);
        let out = run(inv).await;
        assert!(out.timed_out);
        assert_eq!(out.signal, Some(9));
    }

    #[tokio::test]
    async fn a_planned_signal_reaches_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("ready");
        // The signal is caught by the shell's child, in Python: a shell cannot trap a
        // signal that was ignored when it started, as SIGINT is in a background job of a
        // non-interactive shell (how a CI script may start the tests). The shell ignores it
        // either way and passes the child's status on.
        let script = format!(
            "trap '' INT; python3 -c \"import signal, sys, time\n\
             signal.signal(signal.SIGINT, lambda *_: (print('got-int'), sys.exit(130)))\n\
             open('{}', 'w').write('x\\n')\n\
             while True: time.sleep(0.05)\"; exit $?",
            ready.display()
        );
        let mut inv = sh(&script);
        inv.signal = Some(PlannedSignal {
            signal: SignalName::SIGINT,
            after_lines: Some((ready, 1)),
            delay: Duration::from_millis(10),
        });
        let out = run(inv).await;
        assert_eq!(out.code, Some(130), "{out:?}");
        assert_eq!(out.stdout, "got-int\n");
        assert_eq!(
            out.signal_note.as_deref(),
            Some("SIGINT sent to the process group")
        );
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error() {
        let mut inv = sh("");
        inv.program = "/nonexistent/delta".into();
        let out = run(inv).await;
        assert!(out.spawn_error.unwrap().contains("/nonexistent/delta"));
    }
}
