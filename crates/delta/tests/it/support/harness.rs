//! A builder for running the `delta` binary in a throw-away directory and checking the result.
//!
//! ```ignore
//! Test::new()
//!     .agent("bot", AGENT_YAML)
//!     .args(["tool", "expand", "bot"])
//!     .run()
//!     .code(0)
//!     .stdout_is("tools: []\n");
//! ```
//!
//! Every run starts from a clean environment as far as delta is concerned (no API keys,
//! base URLs or forced colours inherited from the developer's shell), in the temp directory
//! unless told otherwise. A finished [`Run`] displays as its whole outcome (exit code, stdout,
//! stderr), the form `snapshot!(run)` (support/snapshot.rs) pins.

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// The repository root: examples and fixtures are addressed from here.
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The default context.yaml of seed 000 §2.4.4, copied here on purpose: when the template
/// in the binary drifts from the specification, the tests that compare with this fail.
pub const DEFAULT_CONTEXT_YAML: &str = "\
# Delta Engine Context Strategy (v1.6+)
# This file defines HOW the Agent's attention window (LLM context) is constructed.
# It is the explicit \"recipe\" for what the Agent sees.

sources:
  # 1. Core Instructions (The System Prompt)
  # This is the primary definition of the Agent's role, rules, and goals.
  # Note: System Prompt must be explicitly declared here to ensure recipe completeness.
  - type: file
    id: system_prompt
    path: '${AGENT_HOME}/system_prompt.md'

  # 2. Workspace Guide (Optional: DELTA.md)
  # If a DELTA.md file exists in the workspace (CWD), it is automatically loaded.
  # Use this to provide workspace-specific context, rules, or documentation.
  - type: file
    id: workspace_guide
    path: '${CWD}/DELTA.md'
    on_missing: skip  # Skip if DELTA.md does not exist

  # 3. Conversation History (The Journal)
  # Includes the history of Thoughts, Actions, and Observations.
  - type: journal
    id: conversation_history
    # By default, the full history is included.
    # To limit history length (save tokens or manage attention), uncomment and adjust:
    # max_iterations: 20
";

/// Variables that would make a run depend on the developer's machine.
const SCRUBBED_ENV: &[&str] = &[
    "DELTA_API_KEY",
    "DELTA_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "DELTA_FSYNC",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
];

/// Hang guard for [`Stdin::Open`]: far above any real run, only there so that a
/// regression fails the test instead of blocking the suite forever.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// What the child process gets on standard input.
#[derive(Debug, Clone)]
pub enum Stdin {
    /// Closed at once: a read returns end of input.
    Closed,
    /// These bytes, then end of input.
    Text(String),
    /// A pipe that stays open and silent until the process exits: a process that waits
    /// for input never finishes (and trips the hang guard).
    Open,
}

/// One invocation of `delta`, built step by step.
pub struct Test {
    dir: TempDir,
    current_dir: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdin: Stdin,
}

impl Test {
    /// A fresh temp directory, no arguments, stdin closed.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("delta-test-")
            .tempdir()
            .expect("create a temp directory");
        Test::in_dir(dir)
    }

    /// The temp directory the test owns.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `contents` to `path` (relative to the temp directory), creating parents.
    pub fn file(self, path: &str, contents: &str) -> Self {
        let path = self.dir.path().join(path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent directories");
        }
        fs::write(&path, contents).expect("write test file");
        self
    }

    /// An agent directory `dir` with this agent.yaml, a one-line system prompt and the
    /// default context.yaml.
    pub fn agent(self, dir: &str, agent_yaml: &str) -> Self {
        self.file(&format!("{dir}/agent.yaml"), agent_yaml)
            .file(
                &format!("{dir}/system_prompt.md"),
                "You are a test agent.\n",
            )
            .file(&format!("{dir}/context.yaml"), DEFAULT_CONTEXT_YAML)
    }

    /// Append one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Append arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Set an environment variable for the child.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Run in `dir`: relative paths are inside the temp directory, absolute ones as is.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = self.dir.path().join(dir);
        self
    }

    /// What the child reads on stdin (default: [`Stdin::Closed`]).
    pub fn stdin(mut self, stdin: Stdin) -> Self {
        self.stdin = stdin;
        self
    }

    /// The configured command, for assertions the builder does not offer
    /// (`test.cmd().assert().code(1)`). Stdin is assert_cmd's (closed unless written).
    pub fn cmd(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.command())
    }

    /// Start delta without waiting: stdin closed, stdout and stderr piped. For tests that
    /// signal the process or run many at once.
    #[allow(dead_code, reason = "shared with the e2e suite, its only user")]
    pub fn spawn(&self) -> std::process::Child {
        self.command()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the delta binary")
    }

    /// The configured process, for tests that wire its standard streams themselves (a
    /// pseudo-terminal, say).
    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_delta"));
        command.args(&self.args).current_dir(&self.current_dir);
        for key in SCRUBBED_ENV {
            command.env_remove(key);
        }
        command.envs(self.env.iter().map(|(key, value)| (key, value)));
        command
    }

    /// A follow-up invocation in the same temp directory, for an invocation that was
    /// spawned (not run): arguments, environment and stdin reset, as [`Run::then`].
    #[allow(dead_code, reason = "shared with the hooks suite, its only user")]
    pub fn then(self) -> Test {
        Test::in_dir(self.dir)
    }

    /// A fresh invocation in `dir`: no arguments, stdin closed.
    fn in_dir(dir: TempDir) -> Test {
        let current_dir = dir.path().to_path_buf();
        Test {
            dir,
            current_dir,
            args: Vec::new(),
            env: Vec::new(),
            stdin: Stdin::Closed,
        }
    }

    /// Run delta to completion and capture its exit code and output.
    pub fn run(self) -> Run {
        let mut command = self.command();
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let output = match &self.stdin {
            Stdin::Closed => command.stdin(Stdio::null()).output(),
            Stdin::Text(text) => assert_cmd::Command::from_std(command)
                .write_stdin(text.clone())
                .output(),
            Stdin::Open => output_with_open_stdin(command),
        }
        .expect("run the delta binary");
        Run {
            // A signal has no exit code; -1 keeps the assertion message meaningful.
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            dir: self.dir,
        }
    }
}

impl Default for Test {
    fn default() -> Self {
        Test::new()
    }
}

/// Spawn with a stdin pipe held open until the child exits on its own. stdout and stderr
/// are drained by threads meanwhile, so a talkative child never blocks on a full pipe.
fn output_with_open_stdin(mut command: Command) -> std::io::Result<std::process::Output> {
    let mut child = command.stdin(Stdio::piped()).spawn()?;
    let stdin = child.stdin.take();
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut stream) = stream {
                stream
                    .read_to_end(&mut bytes)
                    .expect("read the child's output");
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > HANG_GUARD {
            child.kill()?;
            panic!("delta still running after {HANG_GUARD:?}: it is waiting for input");
        }
        thread::sleep(Duration::from_millis(10));
    };
    drop(stdin);
    Ok(std::process::Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    })
}

/// A finished invocation. The temp directory lives as long as this value.
pub struct Run {
    dir: TempDir,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The exit code (-1 when a signal ended the process).
    pub fn exit_code(&self) -> i32 {
        self.code
    }

    /// Assert the exit code; on mismatch the message shows both streams.
    #[track_caller]
    pub fn code(self, expected: i32) -> Self {
        assert_eq!(
            self.code, expected,
            "exit code {} (expected {expected})\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    /// Assert the whole of stdout.
    #[track_caller]
    pub fn stdout_is(self, expected: &str) -> Self {
        assert_eq!(self.stdout, expected, "stderr was:\n{}", self.stderr);
        self
    }

    /// Assert the whole of stderr.
    #[track_caller]
    pub fn stderr_is(self, expected: &str) -> Self {
        assert_eq!(self.stderr, expected, "stdout was:\n{}", self.stdout);
        self
    }

    /// Assert that stderr contains `needle`: only for output that is not deterministic even
    /// after the snapshot filters (the OS's wording of an error); otherwise `snapshot!`.
    #[track_caller]
    pub fn stderr_has(self, needle: &str) -> Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
        self
    }

    pub fn stdout(&self) -> &str {
        &self.stdout
    }

    pub fn stderr(&self) -> &str {
        &self.stderr
    }

    /// The test's temp directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A follow-up invocation in the same temp directory (files kept, arguments,
    /// environment and stdin reset), e.g. `init` then `tool expand`, or `run` then
    /// `continue`.
    pub fn then(self) -> Test {
        Test::in_dir(self.dir)
    }

    /// Read a file the run left behind, relative to the temp directory.
    #[track_caller]
    pub fn read(&self, path: &str) -> String {
        let path = self.dir.path().join(path);
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }
}

/// The whole outcome, as snapshots show it (the layout of uv's snapshots):
///
/// ```text
/// exit code: 0
/// ----- stdout -----
/// …
/// ----- stderr -----
/// …
/// ```
impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}
