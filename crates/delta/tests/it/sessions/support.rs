//! The test harness: a temporary workspace, the binary, JSON helpers and process checks.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_delta-sessions");

/// A temporary workspace whose `.sessions/` holds the sessions of one test. Sessions still
/// running when it is dropped are ended, so no test leaves processes behind.
pub struct Workspace {
    dir: TempDir,
    sessions_dir: Option<PathBuf>,
    started: Mutex<Vec<String>>,
}

/// The parsed stdout and the exit code of one invocation.
pub struct Run {
    pub json: Value,
    pub code: i32,
}

impl Workspace {
    pub fn new() -> Self {
        Self {
            dir: TempDir::new().unwrap(),
            sessions_dir: None,
            started: Mutex::new(Vec::new()),
        }
    }

    /// A workspace whose sessions live in `dir` (passed with --sessions-dir).
    pub fn with_sessions_dir(dir: PathBuf) -> Self {
        let mut ws = Self::new();
        ws.sessions_dir = Some(dir);
        ws
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.sessions_dir
            .clone()
            .unwrap_or_else(|| self.path().join(".sessions"))
    }

    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(BIN);
        cmd.current_dir(self.path())
            .env_remove("DELTA_SESSIONS_DIR")
            .timeout(Duration::from_secs(60));
        if let Some(dir) = &self.sessions_dir {
            cmd.arg("--sessions-dir").arg(dir);
        }
        cmd
    }

    /// Runs with `args` and `stdin`, parsing stdout as JSON.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        let output = self.cmd().args(args).write_stdin(stdin).output().unwrap();
        let json = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout of {args:?} is not JSON ({e}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        });
        Run {
            json,
            code: output.status.code().unwrap_or(-1),
        }
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, b"")
    }

    /// Starts a session and returns its id.
    pub fn start(&self, interpreter: &str) -> String {
        let run = self.run(&["start", interpreter]);
        assert_eq!(run.code, 0, "start {interpreter}: {}", run.json);
        let id = run.json["session_id"].as_str().unwrap().to_owned();
        self.started.lock().unwrap().push(id.clone());
        id
    }

    /// Runs `start` with `args` (options and interpreter); a session it starts is ended
    /// when the workspace is dropped, like those of [`Workspace::start`].
    pub fn start_with(&self, args: &[&str]) -> Run {
        let run = self.run(&[&["start"], args].concat());
        if let (0, Some(id)) = (run.code, run.json["session_id"].as_str()) {
            self.started.lock().unwrap().push(id.to_owned());
        }
        run
    }

    /// Runs `command` (as an argument) in session `id`; the exec itself must succeed.
    pub fn exec(&self, id: &str, command: &str) -> Value {
        self.exec_args(&["exec", id, command])
    }

    pub fn exec_args(&self, args: &[&str]) -> Value {
        let run = self.run(args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.json);
        run.json
    }

    /// Runs a command given on stdin.
    pub fn exec_stdin(&self, id: &str, command: &str) -> Value {
        let run = self.run_with_stdin(&["exec", id], command.as_bytes());
        assert_eq!(run.code, 0, "{}", run.json);
        run.json
    }

    pub fn session_dir(&self, id: &str) -> PathBuf {
        self.sessions_dir().join(id)
    }

    pub fn metadata(&self, id: &str) -> Value {
        let text = std::fs::read(self.session_dir(id).join("metadata.json")).unwrap();
        serde_json::from_slice(&text).unwrap()
    }

    /// (holder pid, interpreter pid) from metadata.json.
    pub fn pids(&self, id: &str) -> (i32, i32) {
        let meta = self.metadata(id);
        (
            meta["pid"].as_i64().unwrap() as i32,
            meta["shell_pid"].as_i64().unwrap() as i32,
        )
    }

    /// Reads a pid a command wrote into a file of the workspace.
    pub fn pid_file(&self, name: &str) -> i32 {
        std::fs::read_to_string(self.path().join(name))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        for id in self.started.lock().unwrap().iter() {
            let _ = self.cmd().args(["end", id]).output();
        }
    }
}

/// Whether `pid` is a running process (a zombie, not yet reaped by its new parent, has
/// finished running).
pub fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
            state != 'Z'
        }
        Err(_) => false,
    }
}

/// The session id (field 6 of /proc/PID/stat) of a process.
pub fn session_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[3].parse().unwrap()
}

/// Polls `condition` for up to 10 s (for effects of killed processes, which the kernel
/// finishes asynchronously); the caller asserts the result.
pub fn eventually(condition: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

pub fn text(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}
